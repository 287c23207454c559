"""Issue 35, item 4: partial folds that WN110 must report with what they leave live.

A removal method that leaves a submodule for a later step nothing calls (the
CosyVoice3 F0 predictor), and a fold behind a configuration flag the project's
own configuration never turns on.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

#: A HiFT-style generator: its removal method folds ``ups`` and leaves ``f0_predictor`` for "later".
MODEL = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class F0Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(8, 8, 3, padding=1))

    def forward(self, x):
        return self.conv(x)

    def remove_weight_norm(self):
        remove_parametrizations(self.conv, "weight")


class HiFT(nn.Module):
    def __init__(self):
        super().__init__()
        self.ups = nn.ModuleList([weight_norm(nn.Conv1d(8, 8, 3, padding=1))])
        self.f0_predictor = F0Predictor()

    def forward(self, x):
        return self.ups[0](self.f0_predictor(x))

    def remove_weight_norm(self):
        for layer in self.ups:
            remove_parametrizations(layer, "weight")
"""
SERVE = """
import torch

from .model import HiFT


def load(path):
    model = HiFT()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    model.remove_weight_norm()
    return model
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())
    return root


def _wn110(root: Path) -> list[tuple[str, int, str]]:
    result = lint_files(sorted(root.rglob("*.py")), RunOptions())
    assert result.errors == []
    return [(Path(f.path).name, f.line, f.message) for f in result.findings if f.code == "WN110"]


def test_a_removal_method_that_leaves_a_part_for_a_later_step_nothing_calls_is_reported(tmp_path: Path):
    """The CosyVoice3 case: ``HiFT.remove_weight_norm()`` folds ``ups``; the F0 predictor's own removal never runs."""
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/model.py": MODEL, "voc/serve.py": SERVE})
    found = _wn110(root)
    assert [(name, line) for name, line, _ in found] == [("model.py", 9)]  # the F0 predictor's conv, not `ups`
    message = found[0][2]
    assert "`HiFT.remove_weight_norm()` runs but never reaches `f0_predictor`, where `F0Predictor` sits" in message
    assert "`F0Predictor.remove_weight_norm()` exists but nothing calls it" in message


@pytest.mark.parametrize("change", [
    # the removal method takes the part along
    ("model.py", "            remove_parametrizations(layer, \"weight\")\n",
     "            remove_parametrizations(layer, \"weight\")\n        self.f0_predictor.remove_weight_norm()\n"),
    # it walks every module the model holds
    ("model.py", "        for layer in self.ups:\n", "        for layer in self.modules():\n"),
    # the later step is there
    ("serve.py", "    model.remove_weight_norm()\n", "    model.remove_weight_norm()\n    model.f0_predictor.remove_weight_norm()\n"),
], ids=["method-takes-the-part", "modules", "later-step-called"])
def test_a_removal_method_that_reaches_the_part_still_folds(tmp_path: Path, change: tuple[str, str, str]):
    name, old, new = change
    files = {"voc/__init__.py": "", "voc/model.py": MODEL, "voc/serve.py": SERVE}
    text = textwrap.dedent(files[f"voc/{name}"]).lstrip()
    assert old in text
    files[f"voc/{name}"] = text.replace(old, new)
    assert _wn110(_project(tmp_path, files)) == []
