"""Serving-path facts of a file, kept in the one cache so a warm run parses nothing for WN110.

A file's ``ServingFacts`` depend on its bytes, its module name and whether it
is a package: the key is a SHA-256 of those (and a tag).  Entries are plain
JSON decoded into the data classes of ``facts.py`` only (``common/plain_json.py``);
anything else is a miss, never believed.
"""

from __future__ import annotations

from typing import Any

from ...common.cache import Kind, key_of
from ...common.plain_json import PlainCodec
from ..summary_cache import SummaryCache, data_classes
from . import facts
from .facts import ServingFacts

_CODEC = PlainCodec(data_classes(facts))


def _facts(value: Any) -> ServingFacts:
    return _CODEC.decode(value, ServingFacts)  # type: ignore[no-any-return]


#: Bumped when what ``facts.py`` records changes (2: parameter effects, what code uses of a model;
#: 3: the module's ``__main__`` blocks and the functions only they name; 4: mappings of parts as classes,
#: ``self.<method>(...)`` results, classes chosen from a table; 6: the function of each attribute call, the
#: names of training functions; 7: registries: class decorators, registrars, table entries, registrations by call; 8: training functions kept
#: once, by scope with their names; 9: functions that save checkpoints; 10: legacy, partial and returned-at folds and sites; 11: a fold of a member recorded as that member; 12: choices bound to local names, dict entries,
#: isinstance and annotation evidence; 13: folds under a configuration flag; 14: a fold's ``exclude=`` as a partial
#: fold; 15: the names the code gives a value, for the configuration flags).
_VERSION = 15
SERVING_FACTS = Kind("serving", sharded=False, check=_facts)


def facts_key(digest: bytes, module: str, is_package: bool) -> str:
    return key_of("serving-facts", _VERSION, digest.hex(), module, is_package)


def load(cache: SummaryCache, key: str) -> ServingFacts | None:
    return cache.store.get(SERVING_FACTS, key)  # type: ignore[no-any-return]


def store(cache: SummaryCache, key: str, found: ServingFacts) -> None:
    cache.store.put(SERVING_FACTS, key, _CODEC.encode(found, ServingFacts))
