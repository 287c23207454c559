"""Pause Python's cyclic garbage collector around work that allocates many long-lived objects."""

from __future__ import annotations

import contextlib
import gc
from typing import Callable, Iterator


@contextlib.contextmanager
def cyclic_gc_paused(collect_first: bool = False) -> Iterator[None]:
    """No cycle collection inside the block (``collect_first``: start from a collected heap).

    The source analysis allocates records that live until a file is done, and
    the collector would rescan them again and again; a benchmark arm must not
    have a collection land inside its timed call.  Whatever cycles the block
    leaves are collected after it, once the collector is back on.
    """
    was_enabled = gc.isenabled()
    if collect_first:
        gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: A lint's collection thresholds: young objects between collections, and how rarely the older generations are walked.
LINT_THRESHOLDS = (50_000, 50, 1_000)


@contextlib.contextmanager
def fewer_collections(thresholds: tuple[int, int, int] = LINT_THRESHOLDS) -> Iterator[None]:
    """Collect cycles less often inside the block (Python's default: every 700 new container objects).

    A cold lint builds a large heap of long-lived facts (analyses, WN110's serving
    facts) that every older-generation collection walks again: a fifth to a quarter
    of the main process's CPU on a big tree.  Cycles are still collected.
    """
    before = gc.get_threshold()
    gc.set_threshold(*thresholds)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextlib.contextmanager
def long_lived_heap() -> Iterator[Callable[[], None]]:
    """Yield ``settle``: what the block has built when it calls it is set aside from collection until the block ends.

    A cold lint's scan leaves hundreds of thousands of records (analyses, byte
    facts, locations) that live until the run ends, and every middle-generation
    collection of the rules phase walked them again: 0.7 s of the main process
    on a 2.8 M-line tree.  ``gc.freeze`` takes them out of the collector's sight
    (a cycle among them that is garbage already waits for the block's end: a
    few thousand objects on that tree); the block's end gives them back.  A
    process that froze its own heap before (a server about to fork) keeps it so.
    """
    ours = gc.get_freeze_count() == 0
    frozen = False

    def settle() -> None:
        nonlocal frozen
        if ours:
            gc.freeze()
            frozen = True

    try:
        yield settle
    finally:
        if frozen:
            gc.unfreeze()
