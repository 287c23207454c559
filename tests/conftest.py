"""Suite-wide setup: the test suite never writes to the user's real cache directory; the hook-repo snapshot."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest
from git_repo import git


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point WNAUDIT_CACHE_DIR (read by the CLI and by subprocesses it starts) at a session tmp dir."""
    previous = os.environ.get("WNAUDIT_CACHE_DIR")
    os.environ["WNAUDIT_CACHE_DIR"] = str(tmp_path_factory.mktemp("wnaudit-cache"))
    yield
    if previous is None:
        os.environ.pop("WNAUDIT_CACHE_DIR", None)
    else:
        os.environ["WNAUDIT_CACHE_DIR"] = previous


REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's working tree, committed as it is now, for ``pre-commit try-repo``.

    try-repo on a dirty checkout carries only changes to *tracked* files, so a
    new file not yet added would be missing; committing a snapshot of the
    working tree (tracked and untracked, minus ignored files) tests exactly the
    code under test.  In CI the checkout is clean and the snapshot equals HEAD.
    """
    snapshot = tmp_path_factory.mktemp("wnaudit-hook-repo")
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO_ROOT)
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git("init", "-q", cwd=snapshot)
    git("add", "-A", cwd=snapshot)
    git("commit", "-q", "-m", "snapshot of the working tree under test", cwd=snapshot)
    return snapshot


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private per-user cache directory for the test (``WNAUDIT_CACHE_DIR``), caching enabled."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(directory))
    monkeypatch.delenv("WNAUDIT_NO_CACHE", raising=False)
    return directory
