"""The one way a stage or rule gets a per-file fact: ``FactStore.get(kind, subject)``.

A kind (``FactKind``) is declared once: its name, the key of what it reads
(a file's bytes by digest, where the file sits, ...), how a value is kept
between runs (the on-disk ``Kind`` of ``common/cache.py`` and its encoder;
none: this run only) and, when it is a pure function of its subject, how it
is computed.  The store answers from memory first, then from the run's disk
store when it has one, then from a value computed ahead (in the ``-j``
workers), then by computing it; it counts hits, misses and computes per kind
and writes what the run added at ``save``.  So no stage, rule or memo opens,
reads or writes a cache: each asks the store, and a new kind is a new
declaration, not new plumbing.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ...common.cache import CacheStore, Kind

logger = logging.getLogger(__name__)

S = TypeVar("S")
V = TypeVar("V")


def _as_is(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class FactKind(Generic[S, V]):
    """One kind of per-file fact, declared once.

    ``key``: the store key of a subject (what the fact reads, hashed);
    ``disk``: how values are kept between runs (None: this run only);
    ``encode``: a value as the disk keeps it (raises ValueError for one it must not keep);
    ``restore``: puts back into a value read from disk what its key holds (a summary's paths);
    ``compute``: the fact of a subject, for kinds that are a pure function of it (None: a stage computes it
    and hands it over with ``put`` or ``get``'s ``compute``); ``remember``: keep values in memory for the run.
    """

    name: str
    key: Callable[[S], str]
    disk: Kind | None = None
    encode: Callable[[V], Any] = _as_is
    restore: Callable[[V, S], V] | None = None
    compute: Callable[[S], V] | None = None
    remember: bool = True


class FactStore:
    """The run's facts of every kind: memory, then the disk store (``disk``; None: ``--no-cache``), then compute."""

    def __init__(self, disk: CacheStore | None = None) -> None:
        self.disk = disk
        self._memory: dict[str, dict[str, Any]] = {}
        self._ahead: dict[str, dict[str, Any]] = {}
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()
        self.computes: Counter[str] = Counter()

    @classmethod
    def open(cls, enabled: bool = True) -> FactStore:
        """The run's store: on the per-user disk store unless ``enabled`` is False (or the environment turns it off)."""
        return cls(CacheStore.open(enabled))

    @property
    def persistent(self) -> bool:
        """Whether facts outlive the run (a disk store is open)."""
        return self.disk is not None

    def memory(self, kind: FactKind[Any, Any]) -> dict[str, Any]:
        """The kind's values known this run, by key (the same mapping every time)."""
        found = self._memory.get(kind.name)
        if found is None:
            found = self._memory[kind.name] = {}
        return found

    def keep_in(self, kind: FactKind[Any, Any], mapping: dict[str, Any]) -> None:
        """Keep the kind's values in ``mapping`` (a record saved with what they rest on: WN110's verdicts)."""
        self._memory[kind.name] = mapping

    # -- asking ---------------------------------------------------------------------
    def get(self, kind: FactKind[S, V], subject: S, compute: Callable[[S], V] | None = None) -> V | None:
        """The fact of ``subject``: known, kept on disk, handed over ahead, or computed now (None: none of these)."""
        compute = compute or kind.compute
        if compute is not None and not self._kept(kind):  # nowhere to look: no key to build
            self.misses[kind.name] += 1
            self.computes[kind.name] += 1
            return compute(subject)
        return self.lookup(kind, kind.key(subject), subject, compute)

    def _kept(self, kind: FactKind[Any, Any]) -> bool:
        """Whether a value of ``kind`` can be found again (in memory, or on disk)."""
        return kind.remember or (self.disk is not None and kind.disk is not None)

    def known(self, kind: FactKind[S, V], subject: S) -> V | None:
        """The fact when the store has it without computing it (memory, disk, or ahead)."""
        if not self._kept(kind):
            return None
        return self.lookup(kind, kind.key(subject), subject, None)

    def has(self, kind: FactKind[S, V], subject: S) -> bool:
        """Whether the fact is known this run (memory only: no disk read, nothing counted)."""
        return kind.key(subject) in self.memory(kind)

    def recall(self, kind: FactKind[S, V], subject: S) -> V | None:
        """The fact when this run already knows it (memory only: no disk read, nothing counted)."""
        return self.memory(kind).get(kind.key(subject))

    def lookup(self, kind: FactKind[S, V], key: str, subject: S | None = None, compute: Callable[[S], V] | None = None) -> V | None:
        """``get`` by a key already built (``subject``: for ``restore`` and ``compute``; None: neither applies)."""
        memory = self.memory(kind)
        if key in memory:
            self.hits[kind.name] += 1
            return memory[key]  # type: ignore[no-any-return]
        value = self._from_disk(kind, key, subject)
        if value is not None:
            self.hits[kind.name] += 1
            if kind.remember:
                memory[key] = value
            return value
        self.misses[kind.name] += 1
        ahead = self._ahead.get(kind.name)
        if ahead is not None and key in ahead:
            value = ahead.pop(key)
        elif compute is not None and subject is not None:
            value = compute(subject)
            self.computes[kind.name] += 1
        else:
            return None
        self.keep(kind, key, value)
        return value

    def _from_disk(self, kind: FactKind[S, V], key: str, subject: S | None) -> V | None:
        if self.disk is None or kind.disk is None:
            return None
        value: V | None = self.disk.get(kind.disk, key)
        if value is not None and kind.restore is not None and subject is not None:
            value = kind.restore(value, subject)
        return value

    # -- telling --------------------------------------------------------------------
    def put(self, kind: FactKind[S, V], subject: S, value: V) -> None:
        """The fact of ``subject``, computed by a stage (in a worker, or from a parse made for several kinds)."""
        if self._kept(kind):
            self.keep(kind, kind.key(subject), value)

    def keep(self, kind: FactKind[Any, V], key: str, value: V) -> None:
        """``put`` by a key already built: remembered for the run and, for a kept kind, written at ``save``."""
        if kind.disk is not None and value is not None and self.disk is not None:
            self.disk.put(kind.disk, key, kind.encode(value))  # one the kind must not keep raises, before it is remembered
        if kind.remember:
            self.memory(kind)[key] = value

    def offer(self, kind: FactKind[S, V], subject: S, value: V) -> None:
        """A fact computed ahead (by a worker) for a subject not asked yet: used instead of computing it on a miss."""
        found = self._ahead.get(kind.name)
        if found is None:
            found = self._ahead[kind.name] = {}
        found[kind.key(subject)] = value

    def save(self) -> None:
        """Write back what this run added (silent on failure) and log what each kind cost."""
        if self.disk is not None:
            self.disk.save()
        for name in sorted({*self.hits, *self.misses}):
            logger.debug("facts %s: %d hits, %d misses, %d computed", name, self.hits[name], self.misses[name], self.computes[name])
