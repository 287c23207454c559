"""Replace a file atomically: readers see the old file or the new one, never half.

Used by every in-place fix (source and checkpoint).  The new content goes to a
temporary file in the target's directory (same filesystem, so ``os.replace`` is
atomic), is flushed and fsynced, takes the original's permission bits, and is
renamed over the target; the directory is fsynced so the rename survives a
crash.  On any failure the temporary file is removed and the target is left
untouched.

``_fault`` is a test seam: tests set it to raise at a named step to prove that
no step can lose or half-write a file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

logger = logging.getLogger(__name__)

#: Steps at which a fault can be injected, in order.
STEPS = ("created", "written", "before_fsync", "after_fsync", "before_rename", "after_rename")


def _no_fault(step: str) -> None:
    return None


_fault: Callable[[str], None] = _no_fault


class AtomicWriteError(OSError):
    """The target could not be replaced; it is unchanged."""


def resolve_target(path: Path) -> Path:
    """Write through a symlink to its target, so the link stays a link."""
    return Path(os.path.realpath(path))


@contextlib.contextmanager
def atomic_writer(path: Path, *, mode: int | None = None) -> Iterator[BinaryIO]:
    """Yield a binary stream; on clean exit it atomically replaces ``path``.

    ``mode`` defaults to the existing file's permission bits (or 0o644 masked
    by the umask for a new file).
    """
    target = resolve_target(Path(path))
    directory = target.parent
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".wnaudit-tmp", dir=directory)
    except OSError as error:
        raise AtomicWriteError(error.errno, f"cannot create a temporary file beside {target}: {error.strerror}") from error
    temp = Path(temp_name)
    try:
        _fault("created")
        with os.fdopen(fd, "wb") as handle:
            yield handle  # type: ignore[misc]
            _fault("written")
            handle.flush()
            _fault("before_fsync")
            os.fsync(handle.fileno())
            _fault("after_fsync")
        os.chmod(temp, mode)
        _fault("before_rename")
        os.replace(temp, target)
        _fault("after_rename")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _fsync_directory(directory)
    logger.debug("replaced %s atomically", target)


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Atomically replace ``path`` with ``data``."""
    with atomic_writer(path, mode=mode) as handle:
        handle.write(data)
