"""Replace a file atomically: readers see the old file or the new one, never half.

Used by every in-place fix (source and checkpoint).  The new content goes to a
temporary file in the target's directory (same filesystem, so ``os.replace`` is
atomic), is flushed and fsynced, takes the original's permission bits (and, when
allowed, its owner), and is renamed over the target; the directory is fsynced so
the rename survives a crash.  On any failure the temporary file is removed and
the target is left untouched.  A symlinked target is written through: the link
stays a link and the file it points to is replaced.

``_fault`` is a test seam: tests set it to raise at a named step (see
``STEPS``) to prove that no step can lose or half-write a file.
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

#: Suffix of the temporary file; never a checkpoint or source suffix, so a file
#: left behind by a killed process is not picked up by the next run.
TEMP_SUFFIX = ".wnaudit-tmp"


def _no_fault(step: str) -> None:
    return None


_fault: Callable[[str], None] = _no_fault


class AtomicWriteError(OSError):
    """The target could not be replaced; it is unchanged."""


def resolve_target(path: Path) -> Path:
    """Write through a symlink to its target, so the link stays a link."""
    return Path(os.path.realpath(path))


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_writer(path: Path, *, mode: int | None = None) -> Iterator[BinaryIO]:
    """Yield a binary stream; on clean exit it atomically replaces ``path``.

    ``mode`` defaults to the existing file's permission bits (or 0o666 masked
    by the umask for a new file).  If the body raises, nothing is replaced.
    """
    target = resolve_target(Path(path))
    directory = target.parent
    try:
        existing: os.stat_result | None = target.stat()
    except FileNotFoundError:
        existing = None
    if mode is None:
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else _default_mode()
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=directory)
    except OSError as error:
        raise AtomicWriteError(
            error.errno, f"cannot create a temporary file beside {target}: {error.strerror}"
        ) from error
    temp = Path(temp_name)
    try:
        # Wrap the descriptor first so that every failure below closes it.
        with os.fdopen(fd, "wb") as handle:
            _fault("created")
            yield handle  # type: ignore[misc]
            _fault("written")
            handle.flush()
            _fault("before_fsync")
            os.fsync(handle.fileno())
            _fault("after_fsync")
        if existing is not None:
            _keep_owner(temp, existing)
        os.chmod(temp, mode)  # after chown, which may clear set-id bits
        _fault("before_rename")
        os.replace(temp, target)
        _fault("after_rename")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _fsync_directory(directory)
    logger.debug("replaced %s atomically", target)


def _keep_owner(temp: Path, existing: os.stat_result) -> None:
    """Give the new file the old one's owner and group where we may (e.g. as root)."""
    if not hasattr(os, "chown"):  # pragma: no cover - Windows
        return
    temp_stat = temp.stat()
    if (temp_stat.st_uid, temp_stat.st_gid) == (existing.st_uid, existing.st_gid):
        return
    with contextlib.suppress(PermissionError):
        os.chown(temp, existing.st_uid, existing.st_gid)


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
