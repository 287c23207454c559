"""Suite-wide setup: the test suite never writes to the user's real cache directory."""

from __future__ import annotations

import os
from typing import Iterator

import pytest


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
