"""Which module a tensor seen at run time belongs to: the watched model, else the modules being called.

Without a model, the roots are the modules whose methods are running (``self`` in the calling frames),
outermost first: the first whose index holds the tensor names it, so ``ups.0.weight`` reads as it
would from the model the test or the server called.  Only looked up the first time a tensor is seen.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..core import torch_api
from .targets import RootIndex

T = TypeVar("T")


class Resolver:
    """Answers a query against the index of each candidate root, building indexes once and again on a miss."""

    def __init__(self, model: Any | None):
        self.model = model
        self._model = None if model is None else torch_api.uncompiled(model)
        self._indexes: dict[int, RootIndex] = {}

    def find(self, query: Callable[[RootIndex], T | None]) -> T | None:
        for root in self._candidates():
            index = self._indexes.get(id(root))
            if index is not None and index.root is root:
                found = query(index)
                if found is not None:
                    return found
            # Not indexed yet, or changed since (a parametrization added, a fold inside the block): index it anew.
            index = self._indexes[id(root)] = RootIndex(root)
            found = query(index)
            if found is not None:
                return found
        return None

    def _candidates(self) -> Iterator[Any]:
        seen: set[int] = set()
        if self._model is not None:
            seen.add(id(self._model))
            yield self._model
        for module in calling_modules():
            if id(module) not in seen:
                seen.add(id(module))
                yield module


def calling_modules() -> list[Any]:
    """The modules whose methods are on the current thread's stack, outermost first (``torch.compile``
    wrappers replaced by the module they compile)."""
    module_type = torch_api.module_class()
    found: list[Any] = []
    frame = sys._getframe(1)
    try:
        while frame is not None:
            candidate = frame.f_locals.get("self") if "self" in frame.f_code.co_varnames else None
            if isinstance(candidate, module_type):
                found.append(torch_api.uncompiled(candidate))
            frame = frame.f_back  # type: ignore[assignment]
    finally:
        del frame
    found.reverse()
    return found
