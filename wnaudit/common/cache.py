"""The one per-user cache: where it lives, how entries are stored, bounded and believed.

Every cache of wnaudit is a *kind* of entry in this store (``Kind``): the
source lint's syntax verdicts and byte facts, file summaries, serving facts,
and the record of cross-file answers.  They share:

- **one place**: ``$WNAUDIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/wnaudit`` when that
  is an absolute path (the XDG Base Directory spec says relative values are
  invalid and ignored), else ``~/.cache/wnaudit``; entries of this code live in
  ``<root>/<version_key()>/<kind>/``, named after wnaudit's own source and the
  Python version, so nothing older code wrote is read;
- **one switch**: ``open(enabled=False)`` or ``WNAUDIT_NO_CACHE`` and nothing is
  read or written (the CLI's ``--no-cache``);
- **one format**: a file is a header line ``wnaudit-cache 3 <kind> <sha256>``
  and a JSON object mapping keys to values, the digest being that of the JSON
  bytes.  Small entries share 256 shard files (by the key's first byte), big
  ones have a file each, named by their key and holding only it.  JSON only:
  nothing is ever unpickled;
- **one rule for belief**: a file whose header, digest or kind is wrong, an
  entry stored under another key's name, or a value its kind's ``check``
  rejects is ignored (a miss) and rewritten, never believed.  What a value
  rests on beyond its key (the derived answers' observations) is checked by
  its client before use;
- **one bound**: ``MAX_TOTAL_BYTES`` over all kinds together; after a run that
  wrote, the files written longest ago go first.  A shard keeps at most its
  share (``MAX_SHARD_BYTES``), dropping its oldest entries; a value bigger than
  ``MAX_FILE_BYTES`` is not kept;
- **one write discipline**: a file is replaced whole (temporary file +
  ``os.replace``), so readers see the old or the new file, never a part; a
  shard is merged with what other runs wrote since it was read (when two runs
  write one shard at once, one's new entries may be lost: misses, not wrong
  answers).  A failure to write disables the store for the run, with a debug
  log line, never an error.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NamedTuple

logger = logging.getLogger(__name__)

#: All kinds' files together may hold about this many bytes.
MAX_TOTAL_BYTES = 64 << 20
SHARDS = 256
#: A shard's share of the bound.
MAX_SHARD_BYTES = MAX_TOTAL_BYTES // SHARDS
#: No single file may take more than this share of the bound.
MAX_FILE_BYTES = MAX_TOTAL_BYTES * 3 // 8
#: Version directories (and old layouts) nobody wrote to for this long are removed.
STALE_SECONDS = 30 * 24 * 3600
FORMAT = 3
_MAGIC = b"wnaudit-cache"
_SUFFIX = ".json"
_TEMP_SUFFIX = ".tmp"
_KEY = re.compile(r"[0-9a-f]{32,64}")


def digest_of(data: bytes) -> bytes:
    """The cache key of a file's content (SHA-256 is hardware-accelerated where blake2b is not)."""
    return hashlib.sha256(data).digest()[:16]


def key_of(*parts: object) -> str:
    """A key for entries that depend on several inputs: a SHA-256 of their JSON form."""
    text = json.dumps(parts, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def is_key(text: object) -> bool:
    return isinstance(text, str) and _KEY.fullmatch(text) is not None


@functools.lru_cache(maxsize=None)
def code_fingerprint(root: Path | None = None) -> str:
    """A digest of wnaudit's own source: changed code never reads what older code stored.

    ``root``: the cache's root, where the last digest is kept with the stats of the files it was computed from
    (``_FINGERPRINT``): while every stat is the one kept, that digest is the one their bytes give (the rule of
    ``stat_key``), and they are not read (about 10 ms of every run's start, for some 240 modules).
    """
    package = Path(__file__).resolve().parents[1]
    files = _source_files(package)
    stats = _stats_digest(package, files) if root is not None else None
    if stats is not None and root is not None:
        kept = _kept_fingerprint(root, stats)
        if kept is not None:
            return kept
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    fingerprint = digest.hexdigest()[:12]
    if stats is not None and root is not None:
        _keep_fingerprint(root, stats, fingerprint)
    return fingerprint


#: The file beside the version directories that keeps the last code's digest: "<digest of the stats> <digest>".
_FINGERPRINT = "code-fingerprint"


def _source_files(package: Path) -> list[Path]:
    return sorted(package.rglob("*.py"))


def _stats_digest(package: Path, files: list[Path]) -> str | None:
    """A digest of every module's path and stat (None: one changed too recently for its stat to vouch, or has none)."""
    digest = hashlib.sha256()
    for path in files:
        taken = take_stamp(str(path))
        key = stat_key(taken, "") if taken is not None else None
        if key is None:
            return None
        digest.update(json.dumps([path.relative_to(package).as_posix(), *key[:5]]).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _kept_fingerprint(root: Path, stats: str) -> str | None:
    try:
        kept_stats, _, fingerprint = (root / _FINGERPRINT).read_text("ascii").partition(" ")
    except (OSError, ValueError):
        return None
    return fingerprint if kept_stats == stats and re.fullmatch(r"[0-9a-f]{12}", fingerprint) else None


def _keep_fingerprint(root: Path, stats: str, fingerprint: str) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
        replace_whole(root / _FINGERPRINT, f"{stats} {fingerprint}".encode("ascii"))
    except OSError as error:
        logger.debug("cache: cannot keep the code's digest under %s: %s", root, error)


#: A file whose mtime or ctime is less than this much older than the moment its stat was taken is "racily
#: clean" (git's word): a change right after could keep every timestamp (coarse clocks, 1-2 s file systems),
#: so its stat never vouches for what was read and it is read again.
RACY_NS = 3_000_000_000
#: A stat key: [size, mtime_ns, ctime_ns, inode, device, digest of what was read after that stat].
StatKey = list


class Stamp(NamedTuple):
    """A path's ``os.stat`` and the wall clock just before it: taken *before* its bytes (or entries) are read."""

    clock_ns: int
    status: os.stat_result


def take_stamp(path: str, follow_links: bool = True) -> Stamp | None:
    """The stamp of ``path``, links followed (``follow_links=False``: of the link itself), whatever it is (None: no stat)."""
    clock = time.time_ns()
    try:
        return Stamp(clock, os.stat(path, follow_symlinks=follow_links))
    except (OSError, ValueError):
        return None


def stat_key(taken: Stamp, digest: str) -> StatKey | None:
    """What vouches for ``digest`` in a later run (None: racily clean, never vouched for).

    Sound because the kernel sets ``st_ctime`` on every change of a file's
    bytes or metadata (of a directory's entries) and no user call can set it
    back: a path that changed after the stamp has a later ctime (its clock had
    passed the stamp's ctime by ``RACY_NS``), and one replaced by another has a
    new inode or ctime.  Every cache that trusts a stat uses this one rule.
    """
    status = taken.status
    if max(status.st_mtime_ns, status.st_ctime_ns) > taken.clock_ns - RACY_NS:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev, digest]


def same_stat(entry: StatKey, status: os.stat_result) -> bool:
    """Whether ``status`` is the one ``entry`` recorded (its digest aside)."""
    return (
        entry[0] == status.st_size and entry[1] == status.st_mtime_ns and entry[2] == status.st_ctime_ns
        and entry[3] == status.st_ino and entry[4] == status.st_dev
    )


def is_stat_key(value: Any) -> bool:
    """A stored ``StatKey`` of the right shape (five integers and a text)."""
    return (  # unrolled: a warm run checks tens of thousands
        type(value) is list and len(value) == 6 and type(value[0]) is int and type(value[1]) is int
        and type(value[2]) is int and type(value[3]) is int and type(value[4]) is int and type(value[5]) is str
    )


def version_key(root: Path | None = None) -> str:
    """What every entry also depends on: wnaudit's code and the parser (messages change in patch releases).

    ``root``: the cache's root, where the code's digest may be kept (``code_fingerprint``).
    """
    major, minor, micro = sys.version_info[:3]
    return f"wnaudit-{code_fingerprint(root)}-{sys.implementation.name}-{major}.{minor}.{micro}"


def cache_root() -> Path:
    """``$WNAUDIT_CACHE_DIR``, else an absolute ``$XDG_CACHE_HOME``/wnaudit, else ``~/.cache/wnaudit``.

    Raises ``RuntimeError`` when there is none (no usable home directory):
    a relative home would put the cache inside whatever project is linted.
    """
    explicit = os.environ.get("WNAUDIT_CACHE_DIR")
    if explicit:
        return Path(explicit).absolute()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "wnaudit"
    if xdg:
        logger.debug("cache: ignoring XDG_CACHE_HOME=%r: not an absolute path (XDG Base Directory spec)", xdg)
    home = Path.home()
    if not home.is_absolute():
        raise RuntimeError(f"home directory {str(home)!r} is not an absolute path")
    return home / ".cache" / "wnaudit"


def disabled_by_env() -> bool:
    return os.environ.get("WNAUDIT_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


@dataclass(frozen=True)
class Kind:
    """A kind of entry: its directory name, whether its entries share shard files, and what a value must be.

    ``check`` returns the value as the client uses it, or None when the stored
    JSON value is not one of this kind (then it is dropped, never believed).
    """

    name: str
    sharded: bool
    check: Callable[[Any], Any]


def _header(kind: Kind, body: bytes) -> bytes:
    return b"%s %d %s %s\n" % (_MAGIC, FORMAT, kind.name.encode("ascii"), hashlib.sha256(body).hexdigest().encode("ascii"))


def encode_file(kind: Kind, entries: dict[str, Any]) -> bytes:
    """A store file holding ``entries`` (key -> JSON value)."""
    body = json.dumps(entries, separators=(",", ":")).encode("ascii")  # ensure_ascii: lone surrogates are escaped
    return _header(kind, body) + body


def decode_file(kind: Kind, raw: bytes) -> dict[str, Any]:
    """The entries of a store file of ``kind``; ``ValueError`` when it is not one, intact."""
    header, newline, body = raw.partition(b"\n")
    if not newline or header + b"\n" != _header(kind, body):
        raise ValueError("not an intact cache file of this kind")
    try:
        entries = json.loads(body)
    except RecursionError as error:  # nesting no entry of ours has
        raise ValueError("nested too deeply") from error
    if not isinstance(entries, dict):
        raise ValueError("not a map of entries")
    return entries


class CacheStore:
    """The entries of one version directory, read per file on first use and written back by ``save``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._shard_paths: dict[tuple[str, str], Path] = {}
        self._files: dict[Path, dict[str, Any]] = {}  # loaded shard files: key -> stored JSON value
        self._dirty: dict[Path, Kind] = {}
        self._wrote = False
        self._disabled = False
        self.hits: dict[str, int] = {}
        self.misses: dict[str, int] = {}

    @classmethod
    def open(cls, enabled: bool = True) -> CacheStore | None:
        """The store for this run, or None when ``enabled`` is False, ``WNAUDIT_NO_CACHE`` is set, or there is no home."""
        if not enabled or disabled_by_env():
            return None
        try:
            root = cache_root()
        except (RuntimeError, KeyError) as error:
            logger.debug("cache disabled: no cache directory: %s", error)
            return None
        return cls(root / version_key(root))

    # -- where ----------------------------------------------------------------------
    def _file(self, kind: Kind, key: str) -> Path:
        if kind.sharded:
            return self._shard_path(kind.name, key[:2])
        return self.directory / kind.name / f"{key}{_SUFFIX}"

    def _shard_path(self, kind: str, prefix: str) -> Path:
        """Built once per shard (a warm run asks thousands of times)."""
        found = self._shard_paths.get((kind, prefix))
        if found is None:
            found = self._shard_paths[(kind, prefix)] = self.directory / kind / f"{prefix}{_SUFFIX}"
        return found

    def _read(self, kind: Kind, path: Path) -> dict[str, Any] | None:
        """A file's entries (None: absent, unreadable or damaged, then noted to be rewritten)."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            logger.debug("cache: cannot read %s: %s", path, error)
            return None
        try:
            return decode_file(kind, raw)
        except ValueError as error:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
            logger.debug("cache: ignoring damaged %s (%s); it is rewritten", path, error)
            return None

    def _shard(self, kind: Kind, key: str) -> tuple[Path, dict[str, Any]]:
        path = self._file(kind, key)
        entries = self._files.get(path)
        if entries is None:
            entries = self._files[path] = self._read(kind, path) or {}
        return path, entries

    # -- entries --------------------------------------------------------------------
    def get(self, kind: Kind, key: str) -> Any:
        """The value stored under ``key`` as ``kind.check`` returns it, or None (never stored, or not believed)."""
        if kind.sharded:
            path, entries = self._shard(kind, key)
            stored = entries.get(key)
        else:
            path = self._file(kind, key)
            stored = (self._read(kind, path) or {}).get(key)
        value = None if stored is None else self._checked(kind, stored)
        if value is None:
            self.misses[kind.name] = self.misses.get(kind.name, 0) + 1
            if stored is not None and kind.sharded:  # a damaged entry goes at the next save
                del entries[key]
                self._dirty[path] = kind
            return None
        self.hits[kind.name] = self.hits.get(kind.name, 0) + 1
        return value

    @staticmethod
    def _checked(kind: Kind, stored: object) -> Any:
        try:
            return kind.check(stored)
        except (ValueError, RecursionError) as error:
            logger.debug("cache: ignoring a %s entry that is not one: %s", kind.name, error)
            return None

    def put(self, kind: Kind, key: str, value: object) -> None:
        """Keep ``value`` (JSON data) under ``key``: a shard's at ``save``, an own file's now."""
        if not is_key(key):
            raise ValueError(f"not a cache key: {key!r}")
        if kind.sharded:
            path, entries = self._shard(kind, key)
            if entries.get(key) != value:
                entries.pop(key, None)  # re-insert last: the newest entries survive trimming
                entries[key] = value
                self._dirty[path] = kind
            return
        data = encode_file(kind, {key: value})
        if len(data) <= MAX_FILE_BYTES:
            self._write(self._file(kind, key), data)

    def _write(self, path: Path, data: bytes) -> bool:
        if self._disabled:
            return False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_whole(path, data)
        except OSError as error:
            logger.debug("cache disabled: cannot write under %s: %s", self.directory, error)
            self._disabled = True
            return False
        self._wrote = True
        return True

    def save(self) -> None:
        """Write the shards this run changed (merged with other runs'), then keep the store bounded."""
        dirty, self._dirty = self._dirty, {}
        for path, kind in sorted(dirty.items()):
            if not self._write_shard(kind, path):
                break
        if self._wrote:
            self._wrote = False
            with contextlib.suppress(OSError):
                os.utime(self.directory)  # in use: not stale
            evict_oldest(self.directory, MAX_TOTAL_BYTES)
            prune_stale(self.directory)

    def _write_shard(self, kind: Kind, path: Path) -> bool:
        ours = self._files.get(path, {})
        merged = {**(self._read(kind, path) or {}), **ours}  # another run may have added entries since we read
        for key in [k for k in merged if not is_key(k) or k[:2] != path.stem]:
            del merged[key]  # an entry in the wrong shard is no entry
        data = encode_file(kind, merged)
        while len(data) > MAX_SHARD_BYTES and merged:
            for key in list(merged)[: max(1, len(merged) // 4)]:  # the oldest quarter first
                del merged[key]
            data = encode_file(kind, merged)
        self._files[path] = merged
        return self._write(path, data)


def replace_whole(target: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target``, then rename it over ``target``.

    A reader sees the old file or the new one, never a part; a failure leaves
    no temporary file behind (a cache needs no fsync: a lost entry is a miss).
    """
    handle, temp = tempfile.mkstemp(prefix=f".{target.stem[:8]}.", suffix=_TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def evict_oldest(directory: Path, limit: int) -> None:
    """Remove the files of every kind written longest ago until they hold at most ``limit`` bytes together."""
    files = []
    with contextlib.suppress(OSError):
        for kind_dir in os.scandir(directory):
            if not kind_dir.is_dir(follow_symlinks=False):
                continue
            for entry in os.scandir(kind_dir.path):
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    files.append((info.st_mtime, info.st_size, entry.path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size


def prune_stale(directory: Path) -> None:
    """Remove other versions' directories nobody wrote to for ``STALE_SECONDS``, and temporary files of killed runs."""
    now = time.time()
    with contextlib.suppress(OSError):
        for sibling in directory.parent.iterdir():
            if sibling != directory and sibling.is_dir() and now - sibling.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(sibling, ignore_errors=True)
    with contextlib.suppress(OSError):
        for temp in directory.glob(f"*/*{_TEMP_SUFFIX}"):
            with contextlib.suppress(OSError):
                if now - temp.stat().st_mtime > 3600:
                    temp.unlink()
