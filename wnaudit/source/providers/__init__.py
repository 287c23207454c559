"""The per-file fact providers, gathered from their modules (``base.Provider``).

Each module in this package (other than ``base`` and private ones) holds
providers; they are collected from the modules, so adding a provider needs
no edit here.  A rule names the providers it reads in ``Rule.PROVIDERS``;
the analysis computes the declared ones (``compute``) and the rule reads a
fact through ``Context.fact``.
"""

from __future__ import annotations

import ast
from typing import Iterable

from ..gathering import gathered
from .base import Provider, Sites

_NOT_PROVIDERS = frozenset({"base"})


def gather() -> dict[str, type[Provider]]:
    """Every concrete provider defined in the modules of this package (its folder as ``__path__`` lists it), by name."""
    return gathered(__name__, __path__, Provider, _NOT_PROVIDERS, lambda provider: provider.name)


class Running:
    """The declared providers of one file, walked piece by piece beside the analysis (the same trees)."""

    def __init__(self, providers: Iterable[type[Provider]], module: str) -> None:
        self._running = [provider(module) for provider in providers]

    def walk(self, tree: ast.Module, sites: Sites) -> None:
        for provider in self._running:
            provider.walk(tree, sites)

    def facts(self) -> dict[str, str]:
        """Each provider's fact, encoded as ``FileSummary.provided`` keeps it."""
        return {type(p).name: type(p).encode(p.fact()) for p in self._running}


__all__ = ["Provider", "Running", "Sites", "gather"]
