"""``--format github``: GitHub Actions workflow commands that annotate a pull request.

Each finding becomes ``::error file=...,line=...,col=...,title=WN101::message``
(``::warning`` for warning-level codes); tensor findings have no line, so they
annotate the file alone.  Unreadable inputs are annotated as errors too, so a
broken checkpoint is visible on the pull request rather than only in the log.
"""

from __future__ import annotations

from typing import TextIO

from ..common.findings import Finding, InputError, RunResult, Severity
from . import code_statistics, sorted_findings, with_fix_hint
from .paths import display_path

#: GitHub's escaping for the message part of a workflow command.
_DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
#: Property values (file=, title=) additionally escape the separators.
_PROPERTY_ESCAPES = _DATA_ESCAPES + ((":", "%3A"), (",", "%2C"))


def escape_data(text: str) -> str:
    """Escape the message of a workflow command (``%`` first, so nothing is escaped twice)."""
    for raw, escaped in _DATA_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def escape_property(text: str) -> str:
    """Escape a ``key=value`` property of a workflow command."""
    for raw, escaped in _PROPERTY_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def _command(level: str, properties: list[tuple[str, str]], message: str) -> str:
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{level} {props}::{escape_data(message)}"


def finding_command(item: Finding) -> str:
    """One annotation for one finding."""
    level = "error" if item.severity == Severity.ERROR else "warning"
    properties = [("file", display_path(item.path))]
    if item.line is not None:
        properties += [("line", str(item.line)), ("col", str(item.column or 1))]
    properties.append(("title", item.code))
    message = item.message if item.object is None else f"{item.object}: {item.message}"
    return _command(level, properties, with_fix_hint(item, message))


def error_command(error: InputError) -> str:
    """One annotation for an input that could not be read."""
    return _command("error", [("file", display_path(error.path)), ("title", "wnaudit: unreadable input")], error.message)


def render(result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False) -> None:
    findings = sorted_findings(result)
    for error in result.errors:
        stream.write(error_command(error) + "\n")
    for item in findings:
        stream.write(finding_command(item) + "\n")
    if statistics:
        # Plain lines are shown in the job log and never parsed as commands.
        for code, count, _fixable, title in code_statistics(findings):
            stream.write(f"{count:>5}\t{code}\t{title}\n")
    if not quiet:
        if findings:
            stream.write(f"wnaudit: {len(findings)} finding{'s' if len(findings) != 1 else ''}.\n")
        elif not result.errors:
            stream.write("wnaudit: all checks passed.\n")
