"""The WN1xx source rules, gathered from their family modules.

Each module in this package (other than ``base``) holds one family of rules:
the rule classes with their detection, messages, examples and fix functions.
The rules are collected from those modules, so adding a rule (or a family
module) needs no edit here.  ``VALID`` examples must produce no finding of
the rule's code and ``INVALID`` ones exactly one, fixed to their
``expected_replacement``; the test suite runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ...common.findings import CodeInfo
from ..gathering import gathered
from ..model import FileSummary
from ..providers.base import Provider
from .base import Candidate, Fix, Invalid, Rule, Valid

if TYPE_CHECKING:
    from ..context import Context

_NOT_FAMILIES = frozenset({"base"})


def _gather() -> tuple[type[Rule], ...]:
    """Every concrete rule class defined in the family modules, in code order."""
    found = gathered(__name__, __path__, Rule, _NOT_FAMILIES, lambda rule: rule.code)
    return tuple(found[code] for code in sorted(found))


RULES: tuple[type[Rule], ...] = _gather()

#: The WN1xx code declarations, for the registry (``wnaudit.report.codes``).
SOURCE_CODES: tuple[CodeInfo, ...] = tuple(rule.info() for rule in RULES)
BY_CODE: dict[str, CodeInfo] = {info.code: info for info in SOURCE_CODES}
BY_NAME: dict[str, type[Rule]] = {rule.__name__: rule for rule in RULES}


def declared_providers() -> tuple[type[Provider], ...]:
    """The fact providers the rules declare (``Rule.PROVIDERS``), each once, by name: what the analysis computes."""
    found = {provider.name: provider for rule in RULES for provider in rule.PROVIDERS}
    return tuple(found[name] for name in sorted(found))


def all_rules() -> list[type[Rule]]:
    """Every source rule, in code order (for docs, SARIF and listings)."""
    return list(RULES)


def candidates(summary: FileSummary, context: Context, enabled: "Callable[[str], bool] | None" = None) -> list[Candidate]:
    """The file's candidates from every rule.

    ``enabled`` says which codes the run reports: a rule that reads the whole
    project (``Rule.project_wide``) runs only when it accepts its code; the
    others always run, since a fix may need their findings (WN103 migrates
    the removals WN101 would report).
    """
    out = [
        c for rule in RULES if not rule.project_wide or enabled is None or enabled(rule.code)
        for c in rule().check(summary, context)
    ]
    out.sort(key=lambda c: (c.site.line, c.site.column, c.code))
    return out


__all__ = ["BY_CODE", "BY_NAME", "RULES", "SOURCE_CODES", "Candidate", "Fix", "Invalid", "Rule", "Valid", "all_rules", "candidates", "declared_providers"]
