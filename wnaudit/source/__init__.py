"""Source rules (WN1xx): find the weight-norm traps in model code and fix them in place.

Torch-free by design.  ``lint_files`` is the CLI's entry point; ``lint_source``
and ``fix_source`` work on one file's content (flake8 plugin, editors);
``all_rules`` lists the rule classes (codes, titles, fix safety, examples).
Each rule class is also importable from here by its name
(``from wnaudit.source import LegacyRemoveWeightNorm``), without this file
listing it: the rules live in ``wnaudit/source/rules/``.
"""

from __future__ import annotations

from typing import Any

from .reading import SourceError
from .rules import BY_NAME, Rule, all_rules

#: The engine's entry points, imported on first use: the registry reads ``rules`` without the engine.
_ENGINE = frozenset({"fix_source", "lint_files", "lint_source"})


def __getattr__(name: str) -> Any:
    """An engine entry point, or a rule class by its class name (the rules are gathered from their modules)."""
    if name in _ENGINE:
        from . import engine

        return getattr(engine, name)
    try:
        return BY_NAME[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *_ENGINE, *BY_NAME})


__all__ = ["Rule", "SourceError", "all_rules", "fix_source", "lint_files", "lint_source", *sorted(BY_NAME)]
