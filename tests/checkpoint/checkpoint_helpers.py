"""Shared builders for the checkpoint tests: real vocoder state dicts and an in-process CLI."""

from __future__ import annotations

import copy
import functools
import json
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from wnaudit.cli.command import run
from wnaudit.testing.vocoder import build_vocoder, expected_weight_norms


def vocoder(spelling: str | None, seed: int = 0) -> nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return build_vocoder(weight_norm=spelling, seed=seed)


@functools.lru_cache(maxsize=None)
def _cached_state(spelling: str | None, seed: int) -> Any:
    return vocoder(spelling, seed).state_dict()


def vocoder_state(spelling: str | None, seed: int = 0) -> dict[str, torch.Tensor]:
    """A fresh OrderedDict (with torch's ``_metadata``) over cached, never-mutated tensors."""
    return copy.copy(_cached_state(spelling, seed))


WEIGHT_NORMS = expected_weight_norms()


class Discriminator(nn.Module):
    """A HiFi-GAN scale-discriminator-like stack with spectral norm (either spelling)."""

    def __init__(self, spelling: str) -> None:
        super().__init__()
        sn = nn.utils.parametrizations.spectral_norm if spelling == "modern" else nn.utils.spectral_norm
        self.convs = nn.ModuleList(
            [
                sn(nn.Conv1d(1, 8, 15, padding=7)),
                sn(nn.Conv1d(8, 16, 41, stride=4, groups=4, padding=20)),
                sn(nn.Conv1d(16, 16, 5, padding=2)),
            ]
        )
        self.post = sn(nn.Conv1d(16, 1, 3, padding=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for conv in self.convs:
            x = torch.nn.functional.leaky_relu(conv(x), 0.1)
        return self.post(x)


def trained_discriminator(spelling: str) -> nn.Module:
    """Run a few training-mode forwards so u/v are real power-iteration estimates."""
    torch.manual_seed(3)
    model = Discriminator(spelling)
    for _ in range(3):
        model(torch.randn(1, 1, 64))
    return model.eval()


def cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    """Run ``wnaudit ARGS`` in-process; returns (exit status, stdout, stderr)."""
    capsys.readouterr()
    status = run([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def cli_json(capsys: Any, *args: str) -> tuple[int, dict[str, Any]]:
    status, out, _ = cli(capsys, "--format", "json", *args)
    return status, json.loads(out)


def objects(report: dict[str, Any], code: str | None = None) -> list[str]:
    return sorted(f["object"] for f in report["findings"] if code is None or f["code"] == code)


def folded_names(module: nn.Module | str) -> list[str]:
    """The folded weight names a module (or a vocoder spelling) would report, from its state dict."""
    from wnaudit.core.stored_keys import group_stored_keys

    state = vocoder_state(module) if isinstance(module, str) else module.state_dict()
    groups, _ = group_stored_keys(list(state))
    return sorted(g.folded_key for g in groups)


def folded_copy(spelling: str, seed: int = 0) -> nn.Module:
    from wnaudit import fold_weight_norm

    model = vocoder(spelling, seed)
    fold_weight_norm(model)
    return model


def snapshot(path: Path) -> bytes:
    return Path(path).read_bytes()
