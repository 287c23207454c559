"""Shared by the ecosystem tests: the repository root, a buggy file, running the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The root of the checkout these tests belong to.
REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"

#: WN101: the legacy remover applied to a module weight-normed the modern way.
#: On current torch this raises ValueError and folds nothing.
BUGGY_WN101 = '''\
import torch
from torch.nn.utils.parametrizations import weight_norm


class Generator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_pre = weight_norm(torch.nn.Conv1d(80, 512, 7, 1, padding=3))

    def remove_weight_norm(self):
        torch.nn.utils.remove_weight_norm(self.conv_pre)
'''

#: The line (1-based) of the WN101 call in BUGGY_WN101.
WN101_LINE = BUGGY_WN101.splitlines().index("        torch.nn.utils.remove_weight_norm(self.conv_pre)") + 1


def wnaudit_command() -> list[str]:
    """The installed ``wnaudit`` console script beside this interpreter, as a user runs it."""
    script = Path(sys.executable).with_name("wnaudit")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from wnaudit.cli import main; sys.exit(main())"]


def run_wnaudit(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess (stdout and stderr kept apart)."""
    full_env = dict(os.environ, NO_COLOR="1", **(env or {}))
    return subprocess.run(
        [*wnaudit_command(), *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120
    )


def write_buggy(directory: Path, name: str = "vocoder.py") -> Path:
    path = directory / name
    path.write_text(BUGGY_WN101, encoding="utf-8")
    return path
