"""Report formats: each renders a :class:`~wnaudit.common.findings.RunResult` to a stream."""

from __future__ import annotations

import importlib
from collections import Counter
from typing import Protocol, TextIO

from ..common.findings import Finding, RunResult
from .codes import code_info


class Renderer(Protocol):
    def __call__(self, result: RunResult, stream: TextIO, *, color: bool, quiet: bool, statistics: bool) -> None: ...


#: format name -> "module:function"; imported only when used.
FORMATS: dict[str, str] = {
    "text": "wnaudit.report.text:render",
    "json": "wnaudit.report.json_report:render",
    "github": "wnaudit.report.github:render",
    "sarif": "wnaudit.report.sarif:render",
}


def renderer(name: str) -> Renderer:
    module_name, function = FORMATS[name].split(":")
    return getattr(importlib.import_module(module_name), function)


def sorted_findings(result: RunResult) -> list[Finding]:
    """The run's findings in report order (path, line, column, object, code)."""
    return sorted(result.findings, key=lambda f: f.sort_key())


def with_fix_hint(finding: Finding, message: str) -> str:
    """``message`` plus how to fix it, for formats whose readers never see ``[*]``."""
    if finding.fixable and "--fix" not in message:
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
