"""Report formats: each renders a :class:`~wnaudit.common.findings.RunResult` to a stream."""

from __future__ import annotations

import importlib
from collections import Counter
from typing import Protocol, TextIO

from ..common.findings import Applicability, Finding, RunResult
from .codes import code_info


class Renderer(Protocol):
    """Every format takes the same keywords; each uses those that make sense for it.

    ``show_fixes``: list the findings ``--fix`` fixed.  ``unsafe_fixes``: fixes
    that need review were enabled (``--unsafe-fixes``).  ``checked``: how many
    inputs were read; 0 says that nothing was checked at all.
    """

    def __call__(
        self, result: RunResult, stream: TextIO, *, color: bool, quiet: bool, statistics: bool,
        show_fixes: bool = False, unsafe_fixes: bool = False, checked: int | None = None,
    ) -> None: ...


#: format name -> "module:function"; imported only when used.
FORMATS: dict[str, str] = {
    "concise": "wnaudit.report.text:render_concise",
    "full": "wnaudit.report.text:render_full",
    "grouped": "wnaudit.report.text:render_grouped",
    "json": "wnaudit.report.json_report:render",
    "github": "wnaudit.report.github:render",
    "sarif": "wnaudit.report.sarif:render",
}

#: Older names still accepted on the command line (``text`` was the only text format).
FORMAT_ALIASES: dict[str, str] = {"text": "concise"}

#: The formats whose output is meant for a person reading a terminal or a log.
TEXT_FORMATS = frozenset({"concise", "full", "grouped"})


def renderer(name: str) -> Renderer:
    module_name, function = FORMATS[FORMAT_ALIASES.get(name, name)].split(":")
    return getattr(importlib.import_module(module_name), function)


def sorted_findings(result: RunResult) -> list[Finding]:
    """The run's findings in report order (path, line, column, object, code)."""
    return sorted(result.findings, key=lambda f: f.sort_key())


def needs_review(finding: Finding) -> bool:
    """A fixable finding whose fix ``--fix`` applies only with ``--unsafe-fixes``."""
    return finding.fixable and finding.applicability == Applicability.UNSAFE


def fix_command(finding: Finding) -> str:
    """The command line that applies this finding's fix."""
    return "wnaudit --fix --unsafe-fixes" if needs_review(finding) else "wnaudit --fix"


def with_fix_hint(finding: Finding, message: str) -> str:
    """``message`` plus how to fix it, for formats whose readers never see ``[*]``."""
    if not finding.fixable:
        return message
    if needs_review(finding):
        return message + " (fix needs review: wnaudit --fix --unsafe-fixes)"
    if "--fix" not in message:
        return message + " (fixable with wnaudit --fix)"
    return message


def code_statistics(findings: list[Finding]) -> list[tuple[str, int, int, str]]:
    """``--statistics`` rows: (code, count, fixable count, title), most frequent first."""
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fixable)
    return [
        (code, count, fixable[code], _title(code))
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def _title(code: str) -> str:
    info = code_info(code)
    return info.title if info is not None else ""
