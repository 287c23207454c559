"""Running the real ``wnaudit`` command line in a child process, as a user or CI does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

BUGGY = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_weight_norm(conv)\n"
)


def wnaudit(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``wnaudit ARGS`` in ``cwd`` (this checkout's package); stdout and stderr kept apart, as bytes."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from wnaudit.cli.command import main; sys.exit(main())", *args],
        cwd=cwd, capture_output=True, timeout=120, input=stdin,
        env=dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO_ROOT)),
    )
