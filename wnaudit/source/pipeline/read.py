"""Read bytes: a file's content as the rules see it, and the one line an unreadable file gets."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .. import notebook
from ..reading import SourceError, read_source_bytes


def read_source(path: Path, max_bytes: int) -> bytes | str:
    """A file's content as the rules see it: its bytes, or a notebook's view (text).

    Only regular files under ``max_bytes`` are read (see ``read_source_bytes``).
    """
    data = read_source_bytes(path, max_bytes)
    return notebook.notebook_view(data).text if notebook.is_notebook(path) else data


def read_failure(error: OSError | SourceError) -> str:
    """The one-line error of a file that could not be read (not a regular file, too big, not a notebook...)."""
    if isinstance(error, OSError):
        return f"cannot read: {error.strerror or error}"
    return str(error)


def readable_within(path_text: str, max_bytes: int) -> bool:
    """A regular file no bigger than the lint reads (else the read decides, and words the error)."""
    try:
        status = os.stat(path_text)
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size <= max_bytes
