"""What a file's bytes alone decide, kept so warm runs neither parse nor scan them again.

Every file read is parsed to report syntax errors, but most files name no
weight-norm API and are parsed only for that verdict; every file is also
scanned for its imports (``content.py``).  Both depend on nothing but the
file's bytes, the parser and wnaudit's code, so they are two kinds of the one
cache (``common/cache.py``), keyed by a 128-bit SHA-256 digest of the bytes,
in shard files.  Only verdicts a parse gives for the same bytes every time are
stored: ``"ok"`` and the one-line syntax error message; the scan's facts are
flags and the import statements' module and bound names.  No source text is
stored.  An entry that is not a verdict, or not facts, is dropped, never believed.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..common.cache import CacheStore, Kind, cache_root, digest_of, disabled_by_env, version_key
from . import content
from .content import ContentFacts

__all__ = ["OK", "SyntaxCache", "cache_root", "digest_of", "disabled_by_env", "version_key"]

logger = logging.getLogger(__name__)

#: The verdict of a file that parses.
OK = "ok"
#: How every cached error message starts (``pipeline.analyse.syntax_message``).
SYNTAX_ERROR_PREFIX = "syntax error at "


def _is_verdict(value: object) -> bool:
    return isinstance(value, str) and (value == OK or (value.startswith(SYNTAX_ERROR_PREFIX) and "\n" not in value))


def _verdict(value: object) -> str | None:
    return value if _is_verdict(value) else None  # type: ignore[return-value]


#: The parse's verdict on a content.
VERDICTS = Kind("syntax", sharded=True, check=_verdict)
#: The byte-level facts of a content (``content.encode`` form).
FACTS = Kind("content", sharded=True, check=content.decode)


class SyntaxCache:
    """Verdicts and content facts by digest: the store's ``syntax`` and ``content`` kinds, written back by ``save``."""

    def __init__(self, store: CacheStore | Path) -> None:
        """``store``: the run's store, or a directory to keep one in (tests)."""
        self.store = store if isinstance(store, CacheStore) else CacheStore(store)

    @property
    def hits(self) -> int:
        return self.store.hits.get(VERDICTS.name, 0)

    @property
    def misses(self) -> int:
        return self.store.misses.get(VERDICTS.name, 0)

    @classmethod
    def open(cls, enabled: bool = True) -> SyntaxCache | None:
        """The cache for this run, or None when ``enabled`` is False or ``WNAUDIT_NO_CACHE`` is set."""
        store = CacheStore.open(enabled)
        return None if store is None else cls(store)

    def get(self, digest: bytes) -> str | None:
        """``"ok"``, the syntax error message, or None when this content was never parsed."""
        return self.store.get(VERDICTS, digest.hex())  # type: ignore[no-any-return]

    def put(self, digest: bytes, verdict: str) -> None:
        if not _is_verdict(verdict):
            raise ValueError(f"not a cacheable syntax verdict: {verdict!r}")
        self.store.put(VERDICTS, digest.hex(), verdict)

    def get_facts(self, digest: bytes) -> ContentFacts | None:
        """The byte-level facts of this content (``content.facts_of``), or None when never scanned or damaged."""
        return self.store.get(FACTS, digest.hex())  # type: ignore[no-any-return]

    def put_facts(self, digest: bytes, facts: ContentFacts) -> None:
        self.store.put(FACTS, digest.hex(), content.encode(facts))

    def save(self) -> None:
        """Write the shards this run changed (merged with what other runs wrote since); silent on failure."""
        self.store.save()
