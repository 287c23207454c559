"""Remember the analysis of the files a lint analyses, so a warm run parses nothing.

A file's summary (``model.FileSummary``) is a function of its bytes, where it
sits (the path as named, its module name, whether it is a package, its
absolute path) and the project names it calls that stand for torch APIs
(``Workspace.aliases``); the analysis itself is wnaudit's code and CPython's
parser.  The key is a SHA-256 of all of these; the directory is named like
the syntax cache's (``syntax_cache.version_key``: wnaudit version, a
fingerprint of its source, the Python version), under the same cache root.

Entries are pickles of the summary with its two path fields blanked (the
key holds them).  They are read back with an unpickler that can build
nothing but the plain data classes of ``model.py`` (and the built-in
containers pickle spells with opcodes): a damaged or foreign file is ignored,
never run.  One file per entry, replaced whole (temporary file +
``os.replace``); the directory is bounded (``MAX_TOTAL_BYTES``, the entries
written longest ago go first).  Any failure to write disables the cache for
the run, with a debug log line, never an error.  Directories of other
versions unused for 30 days are removed, as the syntax cache's are.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import logging
import os
import pickle
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from . import model
from .model import FileSummary
from .project import Location
from .syntax_cache import cache_root, disabled_by_env, prune_stale, replace_whole, version_key

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

#: Entry files may hold about this many bytes together.
MAX_TOTAL_BYTES = 64 << 20
#: A summary bigger than this is not stored.
MAX_ENTRY_BYTES = 8 << 20
_SUFFIX = ".pickle"
_TEMP_SUFFIX = ".tmp"
def restricted_unpickler(module: ModuleType) -> type[pickle.Unpickler]:
    """An unpickler that can build the plain data classes of ``module`` and nothing else (no code runs)."""
    allowed = frozenset(
        cls.__name__ for cls in vars(module).values()
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
    )

    class _Restricted(pickle.Unpickler):
        def find_class(self, name_of_module: str, name: str) -> type:
            if name_of_module != module.__name__ or name not in allowed:
                raise pickle.UnpicklingError(f"{name_of_module}.{name} is not part of a cache entry")
            return getattr(module, name)  # type: ignore[no-any-return]

    return _Restricted


#: Summaries are built of the data classes of ``model.py`` only.
_SummaryUnpickler = restricted_unpickler(model)


class SummaryCache:
    """Summaries by key (``key``), one file each."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.hits = 0
        self.misses = 0
        self._written = False
        self._disabled = False

    @classmethod
    def open(cls, enabled: bool = True) -> SummaryCache | None:
        """The cache for this run, or None when ``enabled`` is False or ``WNAUDIT_NO_CACHE`` is set."""
        if not enabled or disabled_by_env():
            return None
        try:
            root = cache_root()
        except (RuntimeError, KeyError) as error:
            logger.debug("summary cache disabled: no cache directory: %s", error)
            return None
        return cls(root / "summaries" / version_key())

    @staticmethod
    def key(digest: bytes, path: str, location: Location, aliases: dict[str, frozenset[str]] | None) -> str:
        """Everything a summary depends on besides the code: the content's digest, where it sits, its aliases."""
        parts = [
            digest.hex(), path, location.module, location.is_package, str(location.path),
            sorted((name, sorted(apis)) for name, apis in (aliases or {}).items()),
        ]
        return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode("utf-8", "surrogatepass")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}{_SUFFIX}"

    def get(self, key: str, path: str, file: str) -> FileSummary | None:
        """The stored summary (with ``path`` and ``file`` put back), or None."""
        summary = self.get_entry(key, _SummaryUnpickler, FileSummary)
        if summary is None:
            return None
        summary.path, summary.file = path, file
        return summary

    def put(self, key: str, summary: FileSummary) -> None:
        self.put_entry(key, dataclasses.replace(summary, path="", file=""))

    def get_bytes(self, key: str) -> bytes | None:
        """An entry's stored bytes (None: none stored, or unreadable)."""
        try:
            return self._path(key).read_bytes()
        except OSError:
            return None

    def get_entry(self, key: str, unpickler: type[pickle.Unpickler], expected: type[_T]) -> _T | None:
        """An entry read back with ``unpickler`` (which decides what it may build), if it is an ``expected``."""
        raw = self.get_bytes(key)
        if raw is None:
            self.misses += 1
            return None
        try:
            found = unpickler(io.BytesIO(raw)).load()
        except Exception as error:  # any damage: a miss, rewritten by the next put
            logger.debug("summary cache: ignoring damaged entry %s: %s", key, error)
            found = None
        if not isinstance(found, expected):
            self.misses += 1
            return None
        self.hits += 1
        return found

    def put_entry(self, key: str, value: object) -> None:
        self.put_bytes(key, pickle.dumps(value, protocol=5))

    def put_bytes(self, key: str, data: bytes, limit: int = MAX_ENTRY_BYTES) -> None:
        """Store ``data`` under ``key``, replaced whole (nothing bigger than ``limit``)."""
        if self._disabled or len(data) > limit:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            replace_whole(self._path(key), data, f".{key[:8]}.")
        except OSError as error:
            logger.debug("summary cache disabled: cannot write under %s: %s", self.directory, error)
            self._disabled = True
            return
        self._written = True

    def save(self) -> None:
        """Keep the directory bounded (only after a run wrote to it)."""
        if not self._written:
            return
        self._written = False
        with contextlib.suppress(OSError):
            entries = []
            for entry in os.scandir(self.directory):
                with contextlib.suppress(OSError):
                    info = entry.stat()
                    entries.append((info.st_mtime, info.st_size, entry.path))
            total = sum(size for _, size, _ in entries)
            for _, size, path in sorted(entries):
                if total <= MAX_TOTAL_BYTES:
                    break
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    total -= size
        prune_stale(self.directory, _TEMP_SUFFIX)
