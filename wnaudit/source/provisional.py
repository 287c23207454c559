"""A memo entry held while its answer is computed, and dropped when the computation raises.

The resolvers keep a placeholder under a key while they compute it (a cycle
of re-exports reaching the key again reads "nothing").  A file whose analysis
fails (``pipeline/run_rules.py`` reports it and goes on) must not leave that
placeholder behind: the next file asking the same question would take it for
the answer and lose its findings.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, MutableMapping, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


@contextmanager
def provisional(memo: MutableMapping[_K, _V], key: _K, placeholder: _V) -> Iterator[None]:
    """Hold ``placeholder`` under ``key`` for the block; remove it if the block raises."""
    memo[key] = placeholder
    try:
        yield
    except BaseException:
        memo.pop(key, None)
        raise
