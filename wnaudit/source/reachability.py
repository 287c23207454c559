"""Memoised "does anything reachable from here carry the fact?" over the import graph, without recursion.

The workspace asks it of modules and the names they import: a chain of
imports thousands of modules long (``sglang``'s) must not become a chain of
Python frames, so the depth-first search keeps its own stack.  Nodes that
reach each other (a strongly connected component: modules importing each
other) share one answer, found with Tarjan's algorithm: while a component is
being explored an edge back into it reads "no" for now, and when its first
node is done, that node's answer, which collects every member's, becomes the
answer of all of them.  So no answer depends on which file asked first, and
each node's own part (``Step``) is computed once per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

#: A node: (module file, attribute name; ``*``: the module).
Key = tuple[Path, str]
#: A node's own part: True (the fact is here), or the nodes whose answers decide it (any of them).
Step = Callable[[Path, str], "bool | Iterable[Key]"]


@dataclass
class _Frame:
    key: Key
    order: int
    low: int
    successors: Iterator[Key] = field(default_factory=lambda: iter(()))
    result: bool = False


class Reachable:
    """Answers per node, kept for the run; ``recall``/``record``: an earlier run's answers, and where to keep new ones."""

    def __init__(
        self, recall: "Callable[[Key], bool | None] | None" = None, record: "Callable[[Key, bool], None] | None" = None,
    ) -> None:
        self.known: dict[Key, bool] = {}
        self._recall = recall
        self._record = record
        self._open: dict[Key, int] = {}  # on the component stack -> its order of discovery
        self._stack: list[Key] = []
        self._frames: list[_Frame] = []  # the search's path, deepest last (a step may ask again: nested searches)
        self._count = 0

    def settled(self, key: Key) -> bool:
        """Whether ``key``'s answer is final (its component is done)."""
        return key in self.known

    def ask(self, key: Key, step: Step) -> bool:
        """The answer for ``key``; ``step`` gives a node's own part (it may itself ask: the search nests)."""
        known = self._answer(key)
        if known is not None:
            return known
        order = self._open.get(key)
        if order is not None:  # asked from inside the component being explored: "no" for now
            self._lower(order)
            return False
        base = len(self._frames)
        try:
            self._push(key, step)
            while True:
                done = self._advance(step, base)
                if done is not None:
                    return done
        except BaseException:
            self._abandon(base, key)
            raise

    def _answer(self, key: Key) -> bool | None:
        known = self.known.get(key)
        if known is None and self._recall is not None:
            known = self._recall(key)
            if known is not None:
                self.known[key] = known
        return known

    def _lower(self, order: int) -> None:
        if self._frames:
            top = self._frames[-1]
            top.low = min(top.low, order)

    def _push(self, key: Key, step: Step) -> None:
        order = self._open[key] = self._count
        self._count += 1
        self._stack.append(key)
        frame = _Frame(key, order, order)
        self._frames.append(frame)  # before the step runs: a nested ask reaching back lowers this frame
        own = step(*key)
        if own is True:
            frame.result = True
        elif own is not False:
            frame.successors = iter(own)

    def _advance(self, step: Step, base: int) -> bool | None:
        """One move of the search: follow the next edge, or finish the deepest node (its answer when it is the asked one)."""
        frame = self._frames[-1]
        if not frame.result:
            for successor in frame.successors:
                known = self._answer(successor)
                if known is not None:
                    if known:
                        frame.result = True
                        break
                    continue
                order = self._open.get(successor)
                if order is not None:  # a cycle back into the component being explored
                    frame.low = min(frame.low, order)
                    continue
                self._push(successor, step)
                return None
        self._frames.pop()
        if frame.low >= frame.order:  # the component's first node: its answer is every member's
            while True:
                member = self._stack.pop()
                del self._open[member]
                self.known[member] = frame.result
                if self._record is not None:
                    self._record(member, frame.result)
                if member == frame.key:
                    break
        self._lower(frame.low)
        if len(self._frames) > base:
            if frame.result:
                self._frames[-1].result = True
            return None
        return frame.result

    def _abandon(self, base: int, key: Key) -> None:
        """A step raised: drop the frames of this search and its open nodes (nothing half-answered is kept)."""
        del self._frames[base:]
        while self._stack:
            member = self._stack.pop()
            del self._open[member]
            if member == key:
                break
