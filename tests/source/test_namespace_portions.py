"""Directories without ``__init__.py`` inside a regular package are namespace portions (PEP 420), as Python imports them.

coqui-tts ships ``TTS/tts/layers/tortoise/`` without ``__init__.py``;
``from TTS.tts.layers.tortoise.vocoder import UnivNetGenerator`` works, so
the file's module is that dotted name and its project the package's, not
its own directory (issue 22).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.project import Project
from wnaudit.source.serving.walk import project_files

VOCODER = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(80, 1, 7, padding=3))

    def forward(self, mel):
        return self.conv(mel)
"""

MODEL = """
import torch

from pkg.layers.portion.vocoder import Vocoder


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.vocoder = Vocoder()

    def forward(self, mel):
        return self.vocoder(mel)


def load():
    model = Model()
    model.eval()
    return model
"""


def _wheel(root: Path) -> Path:
    """An unpacked wheel: no project marker, ``pkg/layers/portion/`` without ``__init__.py``."""
    files = {
        "pkg/__init__.py": "",
        "pkg/layers/__init__.py": "",
        "pkg/layers/portion/vocoder.py": VOCODER,
        "pkg/models/__init__.py": "",
        "pkg/models/model.py": MODEL,
        "scripts/tool/run.py": "print('not a package')\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def test_a_portion_inside_a_package_is_named_by_its_dotted_path(tmp_path: Path):
    root = _wheel(tmp_path)
    project = Project()
    location = project.locate(root / "pkg" / "layers" / "portion" / "vocoder.py")
    assert location.module == "pkg.layers.portion.vocoder"
    assert location.home == root.resolve() / "pkg"
    # A directory outside any package stays a script's.
    assert project.locate(root / "scripts" / "tool" / "run.py").module == "run"


def test_the_project_walk_enters_portions_inside_packages(tmp_path: Path):
    root = _wheel(tmp_path)
    names = {p.relative_to(root).as_posix() for p in project_files(root, False)}
    assert "pkg/layers/portion/vocoder.py" in names
    assert "scripts/tool/run.py" not in names  # not a package: a walk of an unmarked root leaves it out


def test_wn110_links_a_portion_to_the_package_code_that_serves_it(tmp_path: Path):
    """The serving code imports the portion by its dotted name: linting the portion's file alone finds it."""
    root = _wheel(tmp_path)
    vocoder = root / "pkg" / "layers" / "portion" / "vocoder.py"
    for paths in ([vocoder], [root / "pkg"]):
        result = lint_files(paths if paths[0].is_file() else sorted(paths[0].rglob("*.py")), RunOptions())
        assert result.errors == []
        found = [(Path(f.path).name, f.line) for f in result.findings if f.code == "WN110"]
        assert found == [("vocoder.py", 8)]
