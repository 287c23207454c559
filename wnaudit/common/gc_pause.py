"""Pause Python's cyclic garbage collector around work that allocates many long-lived objects."""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


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
