"""Read a file only when it is a regular file of bounded size.

Opening a FIFO for reading blocks until a writer appears, and a device such as
``/dev/zero`` never ends: a linter walking someone else's tree must never do
either.  The file type is checked with ``stat`` before opening, the open is
non-blocking, and the type is checked again on the open descriptor (the path
may have been swapped in between); the read stops one byte past the limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_CHUNK = 1 << 20


class FileRefused(ValueError):
    """The path is not a regular file, or is larger than allowed; the message is one line."""


def describe_size(size: int) -> str:
    """``40.0 MiB`` / ``812 bytes``: sizes as a person reads them."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} byte{'s' if size != 1 else ''}"


def _kind(mode: int) -> str | None:
    """What a non-regular file is, for the message; ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def _too_large(size: int, limit: int, setting: str | None, *, grew: bool = False) -> FileRefused:
    at_least = "at least " if grew else ""
    hint = f" (raise it with {setting} in [tool.wnaudit])" if setting else ""
    return FileRefused(
        f"file is {at_least}{describe_size(size)} ({size:,} bytes), above the {describe_size(limit)} limit{hint}"
    )


def read_regular_file(path: str | os.PathLike[str], max_bytes: int, *, setting: str | None = None) -> bytes:
    """The content of ``path``; :class:`FileRefused` for a non-regular or too-large file.

    ``setting`` names the configuration key that sets ``max_bytes`` (said in
    the message).  Other failures raise ``OSError`` as ``open`` would.
    """
    status = os.stat(path)
    kind = _kind(status.st_mode)
    if kind is not None:
        raise FileRefused(f"not a regular file ({kind}); only regular files are read")
    if status.st_size > max_bytes:
        raise _too_large(status.st_size, max_bytes, setting)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(Path(path), flags)
    try:
        kind = _kind(os.fstat(descriptor).st_mode)
        if kind is not None:
            raise FileRefused(f"not a regular file ({kind}); only regular files are read")
        chunks: list[bytes] = []
        remaining = max_bytes + 1
        while remaining > 0:
            chunk = os.read(descriptor, min(remaining, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > max_bytes:  # it grew after the stat
        raise _too_large(len(data), max_bytes, setting, grew=True)
    return data
