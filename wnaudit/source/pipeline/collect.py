"""Collect: the findings in the order and shape the renderers take (notebook findings by cell and line)."""

from __future__ import annotations

from typing import Iterable

from ...common.findings import Finding
from .. import notebook
from ..rules import Candidate
from .inputs import Inputs
from .plan import FixPlan
from .run_rules import to_finding


def planned_findings(plan: FixPlan) -> list[Finding]:
    """The findings of the scan (a run that writes nothing reports them as they are)."""
    return [to_finding(path, c) for path, found in plan.findings.items() for c in found]


def fixed_findings(fixed: Iterable[tuple[str, Candidate]]) -> list[Finding]:
    return [to_finding(path, c) for path, c in fixed]


def placed(findings: list[Finding], inputs: Inputs) -> list[Finding]:
    """``findings`` sorted, those in notebooks named by cell and line."""
    if inputs.views:
        findings = notebook.place_findings(findings, inputs.views)
    return sorted(findings, key=Finding.sort_key)
