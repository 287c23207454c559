"""git for the tests that build throwaway repositories (pre-commit runs on what a repository stages)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(*args: str, cwd: Path) -> str:
    """Run git in ``cwd`` with a fixed identity and no signing or user config surprises; its stdout."""
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="wnaudit tests", GIT_AUTHOR_EMAIL="tests@wnaudit.invalid",
        GIT_COMMITTER_NAME="wnaudit tests", GIT_COMMITTER_EMAIL="tests@wnaudit.invalid",
    )
    command = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout
