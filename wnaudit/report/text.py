"""``--format text``: one line per finding, colour only on a terminal."""

from __future__ import annotations

from typing import TextIO

import click

from ..common.findings import Finding, RunResult, Severity
from . import code_statistics, sorted_findings


def location(finding: Finding) -> str:
    """``path:line:col`` for source, ``path: object`` for tensors."""
    if finding.line is not None:
        return f"{finding.path}:{finding.line}:{finding.column or 1}:"
    if finding.object is not None:
        return f"{finding.path}: {finding.object}:"
    return f"{finding.path}:"


def _style(text: str, color: bool, **style: object) -> str:
    return click.style(text, **style) if color else text  # type: ignore[arg-type]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


def render(result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False) -> None:
    findings = sorted_findings(result)
    for diff in result.diffs:
        stream.write(diff if diff.endswith("\n") else diff + "\n")
    for item in findings:
        code_color = "red" if item.severity == Severity.ERROR else "yellow"
        fix_mark = " [*]" if item.fixable else ""
        stream.write(
            f"{_style(location(item), color, bold=True)} {_style(item.code, color, fg=code_color, bold=True)}{fix_mark} {item.message}\n"
        )
    if statistics:
        for code, count, fixable, title in code_statistics(findings):
            stream.write(f"{count:>5}\t{code}\t{'[*] ' if fixable else ''}{title}\n")
    if quiet:
        return
    summary: list[str] = []
    if result.fixed:
        summary.append(f"Fixed {len(result.fixed)} finding{'s' if len(result.fixed) != 1 else ''}.")
    if findings:
        fixable = sum(1 for f in findings if f.fixable)
        line = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}"
        line += f" ({fixable} fixable with --fix)." if fixable else "."
        summary.append(line)
    elif not result.errors:
        summary.append("All checks passed!")
    if result.checked_sources is not None or result.checked_checkpoints is not None:  # directory walks
        sources, checkpoints = result.checked_sources or 0, result.checked_checkpoints or 0
        summary.append(f"Checked {_count(sources, 'source file')} and {_count(checkpoints, 'checkpoint')}.")
    for line in summary:
        stream.write(_style(line, color, bold=True) + "\n")
