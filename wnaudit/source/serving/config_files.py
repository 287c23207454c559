"""The configuration files a project ships beside its code, as WN110's flag reader finds and reads them.

Apart from the flag reader (``flags``, which parses Python and imports the
analysis): the record of derived answers checks these walks and reads on every
warm run, which needs nothing else of it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

from ...common.config import DEFAULT_MAX_SOURCE_BYTES
from ...common.files import FileRefused, read_regular_file
from .walk import MAX_PROJECT_FILES, Listings, skipped, walk_tree

logger = logging.getLogger(__name__)

#: The configuration files a project ships beside its code.
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
#: A project with more config files than this is read up to it (the rest is data).
_MAX_CONFIG_FILES = 2_000


def config_files(root: Path, listings: Listings | None = None) -> list[Path]:
    """The YAML/JSON files under ``root``, walked as the project's Python files are (``listings``: listed already)."""
    found: list[Path] = []
    seen = 0
    for directory, dirs, files in walk_tree(root, listings):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        seen += len(dirs) + len(files)
        if seen > MAX_PROJECT_FILES or len(found) >= _MAX_CONFIG_FILES:
            break
        found.extend(Path(directory) / name for name in sorted(files) if name.endswith(_CONFIG_SUFFIXES))
    return found[:_MAX_CONFIG_FILES]


def read_config(path: Path) -> bytes | None:
    """A shipped config's bytes as the flag reader reads them (None: not a regular file, too big, or unreadable)."""
    try:
        return read_regular_file(str(path), DEFAULT_MAX_SOURCE_BYTES)
    except (OSError, FileRefused) as error:
        logger.debug("%s: not read: %s", path, error)
        return None


def read_configs(root: Path, read: Callable[[Path], bytes | None] = read_config) -> list[tuple[Path, bytes | None]]:
    """The configs under ``root`` and their bytes (``read``: ``read_config``, or one that also notes what it read)."""
    return [(path, read(path)) for path in config_files(root)]
