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

GENERATOR = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(8, 8, 3, padding=1))

    def forward(self, x):
        return self.conv(x)

    def remove_weight_norm(self):
        remove_parametrizations(self.conv, "weight")
"""
#: A HiFT-style generator: its removal method folds ``ups`` and leaves ``f0_predictor`` for "later".
MODEL = GENERATOR.replace("class Generator", "class F0Predictor") + """

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


#: The fold runs only under the configuration's flag.
FLAGGED = """
from dataclasses import dataclass

import torch

from .model import Generator


@dataclass
class ServeConfig:
    fold_weight_norm: bool = False


def load(path, cfg):
    model = Generator()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    if cfg.fold_weight_norm:
        model.remove_weight_norm()
    return model
"""


def _flagged(tmp_path: Path, extra: dict[str, str], *changes: tuple[str, str]) -> list[tuple[str, int, str]]:
    serve = textwrap.dedent(FLAGGED).lstrip()
    for old, new in changes:
        assert old in serve
        serve = serve.replace(old, new)
    files = {"voc/__init__.py": "", "voc/model.py": GENERATOR, "voc/serve.py": serve, **extra}
    return _wn110(_project(tmp_path, files))


#: ``cfg.get("fold_weight_norm")`` of a dict config around the fold API.
_GET_FOLD_API = (
    ("from dataclasses", "import wnaudit\nfrom dataclasses"),
    ("    if cfg.fold_weight_norm:\n        model.remove_weight_norm()\n",
     "    if cfg.get(\"fold_weight_norm\"):\n        wnaudit.fold_weight_norm(model)\n"),
)


@pytest.mark.parametrize(("extra", "changes"), [
    ({}, ()),  # the default is false and nothing sets it
    ({"configs/serve.yaml": "model: hifigan\nfold_weight_norm: false\n"}, ()),  # every shipped config: false
    ({"configs/a.json": '{"fold_weight_norm": false}\n', "configs/b.yaml": "serve:\n  fold_weight_norm: no\n"}, ()),
    ({}, _GET_FOLD_API),
], ids=["default-false", "yaml-false", "json-and-yaml-false", "get-fold-api"])
def test_a_fold_behind_a_flag_the_project_never_turns_on_is_no_fold(tmp_path: Path, extra: dict[str, str], changes: tuple):
    """``if cfg.fold_weight_norm: model.remove_weight_norm()`` where every value the project gives the flag is false."""
    found = _flagged(tmp_path, extra, *changes)
    assert [(name, line) for name, line, _ in found] == [("model.py", 9)]
    assert "stays live at `voc/serve.py:" in found[0][2]
    # no fold is added beside the flagged one: a user turning the flag on would run a second removal, which raises
    assert "already runs there" in found[0][2]


@pytest.mark.parametrize(("extra", "changes"), [
    ({"configs/serve.yaml": "fold_weight_norm: true\n"}, ()),  # a shipped config turns it on
    ({"configs/a.yaml": "fold_weight_norm: false\n", "configs/b.yaml": "fold_weight_norm: true\n"}, ()),
    ({}, (("    fold_weight_norm: bool = False\n", "    fold_weight_norm: bool = True\n"),)),  # the default is on
    ({"voc/app.py": "from .serve import ServeConfig, load\n\nmodel = load('g.pt', ServeConfig(fold_weight_norm=True))\n"}, ()),
    ({"voc/cli.py": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--fold-weight-norm', action='store_true')\n"},
     ()),  # a command-line option the user may pass
    ({"configs/serve.yaml": "fold_weight_norm: true\n"}, _GET_FOLD_API),
], ids=["yaml-true", "one-yaml-true", "default-true", "constant-keyword", "cli-option", "get-fold-api-yaml-true"])
def test_a_fold_behind_a_flag_the_project_turns_on_is_a_fold(tmp_path: Path, extra: dict[str, str], changes: tuple):
    assert _flagged(tmp_path, extra, *changes) == []


LOADER = """
import torch

from .model import Generator


def build():
    model = Generator()
    model.eval()
    return model


def load_model(path):
    model = build()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    return model
"""
#: The declared way in: load, then fold in the caller.
APP = """
import wnaudit

from .serve import load_model


def load_vocoder(path):
    vocoder = load_model(path)
    wnaudit.fold_weight_norm(vocoder)
    return vocoder
"""
#: Another caller of the same loader, serving what it returns unfolded.
OTHER = """
import torch

from .serve import load_model


def synthesize(mel):
    model = load_model("g.pt")
    with torch.inference_mode():
        return model(mel)
"""


def _loaders(tmp_path: Path, **extra: str) -> list[tuple[str, int, str]]:
    files = {"voc/__init__.py": "", "voc/model.py": GENERATOR, "voc/serve.py": LOADER, "voc/app.py": APP}
    return _wn110(_project(tmp_path, {**files, **{f"voc/{name}.py": text for name, text in extra.items()}}))


def test_load_then_fold_in_the_caller_is_a_fold(tmp_path: Path):
    """The common pattern: ``load_model()`` (and the ``build()`` it returns from) evaluates, its caller folds."""
    assert _loaders(tmp_path) == []


@pytest.mark.parametrize("fold", ["    wnaudit.fold_weight_norm(vocoder)\n", "    vocoder.remove_weight_norm()\n"])
def test_a_fold_of_a_loaders_result_covers_only_the_caller_that_folds(tmp_path: Path, fold: str):
    """Another caller of ``load_model()`` serves it unfolded: reported at its own site (issue 35, item 3)."""
    app = textwrap.dedent(APP).lstrip().replace("    wnaudit.fold_weight_norm(vocoder)\n", fold)
    found = _wn110(_project(tmp_path, {
        "voc/__init__.py": "", "voc/model.py": GENERATOR, "voc/serve.py": LOADER, "voc/app.py": app, "voc/other.py": OTHER,
    }))
    assert [(name, line) for name, line, _ in found] == [("model.py", 9)]
    assert "stays live at `voc/other.py:9`" in found[0][2]
