"""Replace a file atomically: readers see the old file or the new one, never half.

Used by every in-place fix (source and checkpoint).  The new content goes to a
temporary file (nameless where the filesystem allows) in the target's directory (same filesystem, so ``os.replace`` is
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
import errno
import functools
import logging
import os
import shutil
import stat
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


#: Verifies a finished temporary file (given a path it can be opened by) before it replaces anything.
Verifier = Callable[[Path], None]


#: Flags of every file wnaudit creates by name: exclusively, never through a link planted at the name.
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def random_token() -> str:
    """16 random hex digits: part of every name wnaudit creates, so nobody can plant a link there first."""
    return os.urandom(8).hex()


@contextlib.contextmanager
def atomic_writer(
    path: Path, *, mode: int | None = None, verify: Verifier | None = None, follow_links: bool = True,
) -> Iterator[BinaryIO]:
    """Yield a binary stream; on clean exit it atomically replaces ``path``.

    ``mode`` defaults to the existing file's permission bits (or 0o666 masked
    by the umask for a new file).  If the body raises, nothing is replaced.
    ``verify`` is called on the complete, fsynced file before the rename; if
    it raises, nothing is replaced.

    Where the filesystem supports it the file is created nameless
    (``O_TMPFILE``) and linked in only for the rename, so even SIGKILL leaves
    no temporary file behind; elsewhere its name carries the process id and a
    random token (created with :data:`CREATE_FLAGS`), and the next write beside
    the same target removes those a dead process left.  ``follow_links=False``
    (wnaudit's own files, e.g. a journal): a link at ``path`` is replaced, never
    written through.
    """
    target = resolve_target(Path(path)) if follow_links else Path(os.path.abspath(path))
    directory = target.parent
    existing = _existing(target)
    if mode is None:
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else _default_mode()
    remove_stale_temporaries(target)
    fd, temp = _create_temporary(target, mode)
    try:
        # Wrap the descriptor first so that every failure below closes it.
        with os.fdopen(fd, "wb") as handle:
            _fault("created")
            yield handle  # type: ignore[misc]
            written = temp if temp is not None else Path(f"/proc/self/fd/{handle.fileno()}")
            _seal(handle, written, verify=verify, existing=existing, mode=mode)
            if temp is None:
                temp = _link_nameless(handle.fileno(), target)
            _fault("before_rename")
            os.replace(temp, target)
            temp = None
            _fault("after_rename")
    except BaseException:
        if temp is not None:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
        raise
    _fsync_directory(directory)
    logger.debug("replaced %s atomically", target)


@contextlib.contextmanager
def staged_writer(target: Path, staged: Path, *, verify: Verifier | None = None) -> Iterator[BinaryIO]:
    """Like :func:`atomic_writer`, but the finished file is left under the name ``staged``.

    For changes to several files that must land together: the caller stages
    every file, records the set (a journal), then renames each one over its
    target.  The staged file has the target's permission bits and owner; on
    any failure it is removed.
    """
    target = resolve_target(Path(target))
    existing = _existing(target)
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else _default_mode()
    try:
        fd = os.open(staged, CREATE_FLAGS, 0o600)
    except OSError as error:
        raise AtomicWriteError(error.errno, f"cannot create a file beside {target}: {error.strerror}") from error
    try:
        with os.fdopen(fd, "wb") as handle:
            _fault("created")
            yield handle  # type: ignore[misc]
            _seal(handle, staged, verify=verify, existing=existing, mode=mode)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            staged.unlink()
        raise


def _existing(target: Path) -> os.stat_result | None:
    """The regular file a write will replace, if there is one (its mode and owner are kept); a link's are not."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _seal(handle: BinaryIO, written: Path, *, verify: Verifier | None, existing: os.stat_result | None, mode: int) -> None:
    """What every write does once its content is in: flush, fsync, verify, then owner and mode.

    ``written`` is a path that reads the new file back (its name, or its
    descriptor under /proc for a nameless one).
    """
    _fault("written")
    handle.flush()
    _fault("before_fsync")
    os.fsync(handle.fileno())
    _fault("after_fsync")
    if verify is not None:
        verify(written)
    if existing is not None:
        _keep_owner(handle.fileno(), existing)
    os.fchmod(handle.fileno(), mode)  # after chown, which may clear set-id bits


def fsync_directory(directory: Path) -> None:
    """Make renames and removals in ``directory`` survive a crash."""
    _fsync_directory(directory)


def temporary_name(target: Path, pid: int | None = None) -> Path:
    """A fresh hidden name beside ``target`` that says which process made it."""
    token = random_token()
    return target.parent / f".{target.name}.{pid if pid is not None else os.getpid()}.{token}{TEMP_SUFFIX}"


def _create_temporary(target: Path, mode: int) -> tuple[int, Path | None]:
    """An open descriptor for the new content, and its name (None: nameless until linked)."""
    nameless = getattr(os, "O_TMPFILE", 0)
    if nameless and os.path.isdir("/proc/self/fd") and _linkat() is not None:
        try:
            return os.open(target.parent, nameless | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600), None
        except OSError as error:
            if error.errno not in _NO_TMPFILE:
                raise AtomicWriteError(
                    error.errno, f"cannot create a temporary file beside {target}: {error.strerror}"
                ) from error
    temp = temporary_name(target)
    try:
        return os.open(temp, CREATE_FLAGS, 0o600), temp
    except OSError as error:
        raise AtomicWriteError(error.errno, f"cannot create a temporary file beside {target}: {error.strerror}") from error


#: errno values meaning "this filesystem (or kernel) has no O_TMPFILE".
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT}


_AT_FDCWD, _AT_SYMLINK_FOLLOW = -100, 0x400


@functools.lru_cache(maxsize=1)
def _linkat() -> Callable[..., int] | None:
    """libc's ``linkat``: ``os.link`` calls ``link()``, which cannot link an ``O_TMPFILE`` file."""
    try:
        import ctypes

        function = ctypes.CDLL(None, use_errno=True).linkat
    except (ImportError, OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    return function  # type: ignore[no-any-return]


def _link_nameless(fd: int, target: Path) -> Path:
    """Give the nameless file a hidden name, just before it is renamed over the target."""
    import ctypes

    temp = temporary_name(target)
    linkat = _linkat()
    assert linkat is not None  # checked before the nameless file was created
    if linkat(_AT_FDCWD, f"/proc/self/fd/{fd}".encode(), _AT_FDCWD, os.fsencode(temp), _AT_SYMLINK_FOLLOW) != 0:
        code = ctypes.get_errno()
        raise AtomicWriteError(code, f"cannot link the new file beside {target}: {os.strerror(code)}")
    return temp


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (its temporaries are not stale)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporary files a killed wnaudit left beside ``target`` (its own naming, dead pid)."""
    removed: list[Path] = []
    prefix = f".{target.name}."
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        pid_text, _, token = name[len(prefix) : -len(TEMP_SUFFIX)].partition(".")
        if not pid_text.isdigit() or len(token) not in (8, 16) or process_alive(int(pid_text)):
            continue
        stale = target.parent / name
        with contextlib.suppress(OSError):
            stale.unlink()
            removed.append(stale)
            logger.info("removed %s, left by an interrupted wnaudit run", stale)
    return removed


def _keep_owner(fd: int, existing: os.stat_result) -> None:
    """Give the new file the old one's owner and group where we may (e.g. as root)."""
    if not hasattr(os, "fchown"):  # pragma: no cover - Windows
        return
    temp_stat = os.fstat(fd)
    if (temp_stat.st_uid, temp_stat.st_gid) == (existing.st_uid, existing.st_gid):
        return
    with contextlib.suppress(PermissionError):
        os.fchown(fd, existing.st_uid, existing.st_gid)


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(
    path: Path, data: bytes, *, mode: int | None = None, verify: Verifier | None = None, follow_links: bool = True,
) -> None:
    """Atomically replace ``path`` with ``data``."""
    with atomic_writer(path, mode=mode, verify=verify, follow_links=follow_links) as handle:
        handle.write(data)


#: Bytes per read of a verified copy.
_COPY_CHUNK = 1 << 20


def atomic_copy(source: Path, target: Path, mismatch: Callable[[str], Exception]) -> None:
    """Replace ``target`` with a byte copy of ``source``, compared with it before the rename.

    ``--fix -o OUT`` on an input with nothing to fold still writes OUT, so a
    pipeline can rely on the file being there; ``mismatch`` builds the caller's
    own error when the written copy differs (the target is then left as it was).
    """
    with open(source, "rb") as original:
        size = os.fstat(original.fileno()).st_size

        def same_bytes(written: Path) -> None:
            with open(written, "rb") as copy:
                if os.fstat(copy.fileno()).st_size != size or not _same_stream(original, copy):
                    raise mismatch("the copy differs from the input")

        with atomic_writer(target, verify=same_bytes) as handle:
            shutil.copyfileobj(original, handle, _COPY_CHUNK)


def _same_stream(left: BinaryIO, right: BinaryIO) -> bool:
    """Both files hold the same bytes from their starts (the caller has compared their sizes)."""
    left.seek(0)
    right.seek(0)
    while True:
        a, b = left.read(_COPY_CHUNK), right.read(_COPY_CHUNK)
        if a != b:
            return False
        if not a:
            return True
