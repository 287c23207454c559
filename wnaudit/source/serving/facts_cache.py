"""Serving-path facts of a file, kept in the summary cache so a warm run parses nothing for WN110.

A file's ``ServingFacts`` depend on its bytes, its module name and whether it
is a package: the key is a SHA-256 of those (and a tag, so it never equals
a summary's key).  Entries are read back with an unpickler that builds only
the data classes of ``facts.py``; anything else is a miss, never run.
"""

from __future__ import annotations

import hashlib
import json

from ..summary_cache import SummaryCache, restricted_unpickler
from . import facts
from .facts import ServingFacts

_FactsUnpickler = restricted_unpickler(facts)


def facts_key(digest: bytes, module: str, is_package: bool) -> str:
    parts = ["serving-facts", digest.hex(), module, is_package]
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode("utf-8", "surrogatepass")).hexdigest()


def load(cache: SummaryCache, key: str) -> ServingFacts | None:
    return cache.get_entry(key, _FactsUnpickler, ServingFacts)


def store(cache: SummaryCache, key: str, found: ServingFacts) -> None:
    cache.put_entry(key, found)
