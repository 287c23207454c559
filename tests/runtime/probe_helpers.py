"""A served project on disk, for ``wnaudit probe``: ``vocoder/serve.py:load_vocoder`` returns a weight-normed eval model."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

#: The model: both weight-norm spellings, a ConvTranspose1d, in eval mode as a loader leaves it.
VOCODER = textwrap.dedent(
    '''\
    import warnings

    import torch
    from torch import nn


    class Vocoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.pre = nn.utils.parametrizations.weight_norm(nn.Conv1d(80, 16, 3, padding=1))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                self.up = nn.utils.weight_norm(nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1))
            self.post = nn.utils.parametrizations.weight_norm(nn.Conv1d(8, 1, 3, padding=1))

        def forward(self, mel):
            return torch.tanh(self.post(torch.relu(self.up(torch.relu(self.pre(mel))))))
    '''
)

LOADER = textwrap.dedent(
    '''\


    def load_vocoder():
        torch.manual_seed(0)
        model = Vocoder()
        model.eval()
        return model
    '''
)


def write_project(root: Path, loader: str = LOADER, *, pyproject: str = "") -> Path:
    """``root/vocoder/serve.py`` (and a pyproject.toml when given); the path of serve.py."""
    package = root / "vocoder"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    serve = package / "serve.py"
    serve.write_text(VOCODER + loader)
    if pyproject:
        (root / "pyproject.toml").write_text(pyproject)
    return serve


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh project as the working directory; its modules are forgotten afterwards (the next test has its own)."""
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)) or name.startswith("_wnaudit_entry_"):
            del sys.modules[name]
