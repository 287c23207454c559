"""Builders shared by the source-lint tests."""

from __future__ import annotations

from pathlib import Path

#: A weight-normed model module with nothing that folds it: the smallest WN110 project file.
GENERATOR = """\
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(80, 1, 7, padding=3))

    def forward(self, x):
        return self.conv(x)
"""


def write_package(root: Path, name: str, modules: dict[str, str]) -> Path:
    """Create the package ``root/name`` (with an empty ``__init__.py``) holding ``modules`` (file name -> text)."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for filename, text in modules.items():
        (package / filename).write_text(text)
    return package
