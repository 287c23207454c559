"""The per-file fact providers, gathered from their modules (``base.Provider``).

Each module in this package (other than ``base`` and private ones) holds
providers; they are collected from the modules, so adding a provider needs
no edit here.  A rule names the providers it reads in ``Rule.PROVIDERS``;
the analysis computes the declared ones (``compute``) and the rule reads a
fact through ``Context.fact``.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from typing import Iterable

from .base import Provider, Sites

_NOT_PROVIDERS = frozenset({"base"})


def gather() -> dict[str, type[Provider]]:
    """Every concrete provider defined in the modules of this package (its folder as ``__path__`` lists it), by name."""
    found: dict[str, type[Provider]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name in _NOT_PROVIDERS or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Provider) and value.__module__ == module.__name__ and value.is_concrete():
                if value.name in found and found[value.name] is not value:
                    raise ValueError(f"provider {value.name} is defined twice ({found[value.name].__name__}, {value.__name__})")
                found[value.name] = value
    return found


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
