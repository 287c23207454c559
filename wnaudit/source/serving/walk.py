"""The project's Python files as WN110 reads them: which directories a walk enters, which files it keeps.

One walk per project root and run (``Workspace.project_files``); a record of
derived answers checks its result again before it is reused.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Iterable

from ...common.config import DEFAULT_MAX_SOURCE_BYTES

logger = logging.getLogger(__name__)

#: A walk of more files than this is cut short (a home directory is not a project).
MAX_PROJECT_FILES = 50_000
_SKIPPED_DIRS = frozenset({"__pycache__", "site-packages", "dist-packages", "node_modules", "test", "tests", "testing"})


def is_test_file(path: Path) -> bool:
    name = path.name
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def too_big(path: Path) -> bool:
    """Larger than the lint reads a source file (``max-source-bytes``' default): never read whole here either."""
    try:
        return path.stat().st_size > DEFAULT_MAX_SOURCE_BYTES
    except OSError:
        return True


def skipped(name: str) -> bool:
    """A directory the project walk does not enter: hidden ones, caches, installed code, tests."""
    return name.startswith(".") or name in _SKIPPED_DIRS


def project_files(root: Path, whole: bool) -> Iterable[Path]:
    """The project's Python files: the whole tree under a marked root, else the root's files and packages."""
    count = 0
    for directory, dirs, files in os.walk(root):
        here = Path(directory)
        if "pyvenv.cfg" in files:
            dirs[:] = []
            continue
        dirs[:] = sorted(
            d for d in dirs
            if not skipped(d)
            and (whole or os.path.isfile(os.path.join(directory, d, "__init__.py")))
        )
        for name in sorted(files):
            if name.endswith(".py"):
                path = here / name
                if is_test_file(path) or too_big(path):
                    continue
                count += 1
                if count > MAX_PROJECT_FILES:
                    logger.warning("%s: more than %d Python files; the serving-path search stops there", root, MAX_PROJECT_FILES)
                    return
                yield path
