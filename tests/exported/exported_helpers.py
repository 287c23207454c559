"""Models and archives for the exported-program tests: both weight-norm spellings, a ConvTranspose, a non-default dim."""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn.utils import weight_norm as legacy_weight_norm
from torch.nn.utils.parametrizations import weight_norm

#: The names the user's model gives the three weight-normed weights.
FOLDED_NAMES = ["generator.conv_pre.weight", "generator.ups.0.weight", "generator.proj.weight"]


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the deprecated legacy spelling, on purpose
            self.conv_pre = legacy_weight_norm(nn.Conv1d(4, 6, 3, padding=1))
        self.ups = nn.ModuleList([weight_norm(nn.ConvTranspose1d(6, 5, 4, stride=2, padding=1))])
        self.proj = weight_norm(nn.Linear(5, 3), dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.leaky_relu(self.conv_pre(x), 0.1)
        x = self.ups[0](x)
        return self.proj(x.transpose(1, 2))


class Vocoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.generator = Generator()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.generator(x)


def sample_input() -> torch.Tensor:
    return torch.randn(1, 4, 7, generator=torch.Generator().manual_seed(1))


def exported_program(*, decomposed: bool = False) -> Any:
    torch.manual_seed(0)
    model = Vocoder().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(model, (sample_input(),))
        return program.run_decompositions() if decomposed else program


def save(program: Any, path: Path) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.export.save(program, path)
    return path


def load(path: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.export.load(path)


def run(program: Any, x: torch.Tensor) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return program.module()(x).detach()


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def rewrite_model_json(source: Path, target: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """Copy an archive, editing its models/model.json (to build archives torch would not write)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(buffer, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename.endswith("models/model.json"):
                program = json.loads(data)
                edit(program)
                data = json.dumps(program).encode()
            new.writestr(info, data)
    target.write_bytes(buffer.getvalue())
    return target


def weight_norm_ops(program: Any) -> list[str]:
    return [str(node.target) for node in program.graph.nodes if "weight_norm" in str(node.target) or "norm" in str(node.target)]
