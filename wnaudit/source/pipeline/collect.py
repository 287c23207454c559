"""Collect: the findings of a plan or a fix, as the renderers take them (``Inputs.placed`` orders them, by cell in notebooks)."""

from __future__ import annotations

from typing import Iterable

from ...common.findings import Finding
from ..rules import Candidate
from .plan import FixPlan
from .run_rules import to_finding


def planned_findings(plan: FixPlan) -> list[Finding]:
    """The findings of the scan (a run that writes nothing reports them as they are)."""
    return [to_finding(path, c) for path, found in plan.findings.items() for c in found]


def fixed_findings(fixed: Iterable[tuple[str, Candidate]]) -> list[Finding]:
    return [to_finding(path, c) for path, c in fixed]

