"""Serving-path facts of a file, kept in the summary cache so a warm run parses nothing for WN110.

A file's ``ServingFacts`` depend on its bytes, its module name and whether it
is a package: the key is a SHA-256 of those (and a tag, so it never equals
a summary's key).  Entries are read back with an unpickler that builds only
the data classes of ``facts.py``; anything else is a miss, never run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle

from ..summary_cache import SummaryCache
from . import facts
from .facts import ServingFacts

_ALLOWED = frozenset(
    (facts.__name__, cls.__name__) for cls in vars(facts).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == facts.__name__
)


class _FactsUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> type:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of serving facts")
        return getattr(facts, name)  # type: ignore[no-any-return]


def facts_key(digest: bytes, module: str, is_package: bool) -> str:
    parts = ["serving-facts", digest.hex(), module, is_package]
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode("utf-8", "surrogatepass")).hexdigest()


def load(cache: SummaryCache, key: str) -> ServingFacts | None:
    return cache.get_entry(key, _FactsUnpickler, ServingFacts)


def store(cache: SummaryCache, key: str, found: ServingFacts) -> None:
    cache.put_entry(key, found)
