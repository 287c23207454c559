"""A zip archive's central directory, read once per version of a file.

Python's ``zipfile`` reads a directory at about 20 µs an entry: for a
checkpoint of 100,000 tensors, two seconds on a busy machine.  Recognising
the file (:mod:`sniff`) and checking its records (:mod:`zip_layout`) both
need it, so the last directory read is kept, keyed by the file's identity
(device, inode, size, modification and change times): a file replaced or
rewritten in between is read again.
"""

from __future__ import annotations

import os
import threading
import zipfile
from typing import BinaryIO

_lock = threading.Lock()
_last: tuple[tuple[int, ...], list[zipfile.ZipInfo]] | None = None


def _identity(handle: BinaryIO) -> tuple[int, ...]:
    info = os.fstat(handle.fileno())
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def zip_infos(handle: BinaryIO) -> list[zipfile.ZipInfo]:
    """The members of the zip archive open in ``handle`` (``zipfile``'s errors propagate)."""
    global _last
    identity = _identity(handle)
    with _lock:
        last = _last
    if last is not None and last[0] == identity:
        return list(last[1])
    with zipfile.ZipFile(handle) as archive:
        infos = archive.infolist()
    if _identity(handle) == identity:  # unchanged while it was read
        with _lock:
            _last = (identity, list(infos))
    return infos
