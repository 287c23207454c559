"""How much a fix may write: the zip-bomb guard on the write side.

The audit inflates only small members, each bounded (a ``data.pkl``, a graph's JSON).  A fix
loads every tensor and writes the archive stored (uncompressed, as torch does), so a 1.5 MB
archive whose weight member is 1.5 GiB of deflated zeros would become a 1.5 GiB file.  torch
itself writes members stored, and real weights deflate by a few percent, so a fix may write
at most :data:`FIX_RATIO` times the input's size on disk (at least :data:`MIN_FIX_BYTES`), or
what ``--max-fix-bytes`` / ``max-fix-bytes`` in ``[tool.wnaudit]`` sets.  The bound is checked
on the members' declared sizes before anything is inflated, and on what a fix produces before
it is written.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

#: A fix may always write this much, whatever the input's size.
MIN_FIX_BYTES = 256 << 20
#: ... and up to this many times the input's size on disk.
FIX_RATIO = 16
FLAG = "--max-fix-bytes"
SETTING = "max-fix-bytes"


def fix_bound(on_disk: int, configured: int | None) -> int:
    """The most bytes a fix of an input of ``on_disk`` bytes may write."""
    return configured if configured is not None else max(MIN_FIX_BYTES, FIX_RATIO * on_disk)


def _too_much(what: str, size: int, on_disk: int, bound: int) -> str:
    return (
        f"not fixed: {what} {size:,} bytes from {on_disk:,} on disk (a zip bomb?), more than a fix writes "
        f"({bound:,} bytes); raise the bound with {FLAG} (or {SETTING} in [tool.wnaudit]) if you trust it"
    )


def zip_write_problem(path: Path, configured: int | None) -> str | None:
    """Why fixing the zip at ``path`` would write too much (its members' declared inflated sizes), or None."""
    on_disk = os.stat(path).st_size
    try:
        with zipfile.ZipFile(path) as archive:
            declared = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return None  # not a zip Python reads ("zip file version 6.4"): the format's own reader decides
    bound = fix_bound(on_disk, configured)
    return _too_much("its members inflate to", declared, on_disk, bound) if declared > bound else None


def written_problem(size: int, on_disk: int, configured: int | None) -> str | None:
    """Why writing ``size`` bytes as the fix of an input of ``on_disk`` bytes is too much, or None."""
    bound = fix_bound(on_disk, configured)
    return _too_much("the fixed file would hold", size, on_disk, bound) if size > bound else None
