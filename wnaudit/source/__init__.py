"""Source rules (WN1xx): find the weight-norm traps in model code and fix them in place.

Torch-free by design.  ``lint_files`` is the CLI's entry point; ``lint_source``
and ``fix_source`` work on one file's content (flake8 plugin, editors);
``all_rules`` lists the rule classes (codes, titles, fix safety, examples).
Each rule class is also importable from here by its name
(``from wnaudit.source import LegacyRemoveWeightNorm``), without this file
listing it: the rules live in ``wnaudit/source/rules/``.

Nothing is imported here until it is asked for: a warm lint gives a kept answer
(``lint_run``) without importing the rules or the stages (about 90 ms of a run's start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .engine import fix_source as fix_source, lint_source as lint_source
    from .lint_run import lint_files as lint_files
    from .reading import SourceError as SourceError
    from .rules import Rule as Rule, all_rules as all_rules

#: Public names and the module each comes from, imported on first use.
_NAMED = {
    "fix_source": "engine", "lint_source": "engine", "lint_files": "lint_run",
    "SourceError": "reading", "Rule": "rules", "all_rules": "rules",
}


def __getattr__(name: str) -> Any:
    """A public name, or a rule class by its class name (the rules are gathered from their modules).

    A lower-case name that is no public one is a submodule not imported yet: the import
    system asks for it before importing it, and gathering the rules then would import them all.
    """
    from importlib import import_module

    if name in _NAMED:
        return getattr(import_module(f"{__name__}.{_NAMED[name]}"), name)
    if name == "__all__":
        return [*sorted(_NAMED), *sorted(_rule_classes())]
    if name[:1].isupper():
        rule = _rule_classes().get(name)
        if rule is not None:
            return rule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rule_classes() -> dict[str, type]:
    from .rules import BY_NAME

    return dict(BY_NAME)


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMED, *_rule_classes()})
