"""The analysis of the files a lint analyses, kept so a warm run parses nothing.

A file's summary (``model.FileSummary``) is a function of its bytes, where it
sits (the path as named, its module name, whether it is a package, its
absolute path) and the project names it calls that stand for torch APIs
(``Workspace.aliases``); the analysis itself is wnaudit's code and CPython's
parser, which name the store's version directory.  The facts of the providers
the rules declare (``providers/``) are computed with the summary and kept in
it (``FileSummary.provided``): a provider reads only the file's trees and
module name, so the same key and version (which covers the provider's code)
decide them too, and a warm run recomputes none.  The key is a SHA-256 of
all of these; the entry is the summary with its two path fields blanked (the
key holds them), as plain JSON (``common/plain_json.py``), one file each, in
the one cache (``common/cache.py``).  A value that does not decode into the
data classes of ``model.py`` is a miss, never believed and never run.

``SummaryCache`` is also the handle through which the serving facts
(``serving/facts_cache.py``) and the record of derived answers
(``derived_cache.py``) reach the store: the engine opens it once per run.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

from ..common.cache import CacheStore, Kind, key_of
from ..common.plain_json import PlainCodec
from . import model
from .model import FileSummary
from .project import Location

logger = logging.getLogger(__name__)


def data_classes(module: ModuleType) -> list[type]:
    """The data classes ``module`` defines (what its cache entries may be built of)."""
    return [
        cls for cls in vars(module).values()
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
    ]


_CODEC = PlainCodec(data_classes(model))


def _summary(value: Any) -> FileSummary:
    return _CODEC.decode(value, FileSummary)  # type: ignore[no-any-return]


SUMMARIES = Kind("summary", sharded=False, check=_summary)


class SummaryCache:
    """Summaries by key (``key``): the store's ``summary`` kind."""

    def __init__(self, store: CacheStore | Path) -> None:
        """``store``: the run's store, or a directory to keep one in (tests)."""
        self.store = store if isinstance(store, CacheStore) else CacheStore(store)

    @property
    def hits(self) -> int:
        return self.store.hits.get(SUMMARIES.name, 0)

    @property
    def misses(self) -> int:
        return self.store.misses.get(SUMMARIES.name, 0)

    @classmethod
    def open(cls, enabled: bool = True) -> SummaryCache | None:
        """The cache for this run, or None when ``enabled`` is False or ``WNAUDIT_NO_CACHE`` is set."""
        store = CacheStore.open(enabled)
        return None if store is None else cls(store)

    @staticmethod
    def key(digest: bytes, path: str, location: Location, aliases: dict[str, frozenset[str]] | None) -> str:
        """Everything a summary depends on besides the code: the content's digest, where it sits, its aliases."""
        return key_of(
            digest.hex(), path, location.module, location.is_package, str(location.path),
            sorted((name, sorted(apis)) for name, apis in (aliases or {}).items()),
        )

    def get(self, key: str, path: str, file: str) -> FileSummary | None:
        """The stored summary (with ``path`` and ``file`` put back), or None."""
        summary: FileSummary | None = self.store.get(SUMMARIES, key)
        if summary is None:
            return None
        summary.path, summary.file = path, file
        return summary

    def put(self, key: str, summary: FileSummary) -> None:
        self.store.put(SUMMARIES, key, _CODEC.encode(dataclasses.replace(summary, path="", file=""), FileSummary))

    def save(self) -> None:
        """Write back what this run changed and keep the store bounded (silent on failure)."""
        self.store.save()
