"""WN110's index asking the fact store for serving facts by a key it built (``facts/kinds.SERVING``).

A thin path kept for ``serving/index.py``: ``load`` and ``store`` are the store's ``lookup`` and ``keep``
of the ``SERVING`` kind, so the store still decides hit or miss and counts them.
"""

from __future__ import annotations

from ..facts.kinds import SERVING, ServingOf, serving_key
from ..facts.store import FactStore
from .facts import ServingFacts


def facts_key(digest: bytes, module: str, is_package: bool) -> str:
    return serving_key(ServingOf(digest, module, is_package))


def load(store: FactStore, key: str) -> ServingFacts | None:
    return store.lookup(SERVING, key)


def store(facts: FactStore, key: str, found: ServingFacts) -> None:
    facts.keep(SERVING, key, found)
