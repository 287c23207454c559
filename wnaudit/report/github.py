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
from .sanitize import encodable, sanitize

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
    """One workflow command; untrusted text is sanitised first (GitHub's own escaping
    keeps CR/LF from ending the command, the sanitiser keeps escapes off the job log)."""
    props = ",".join(f"{key}={escape_property(sanitize(value))}" for key, value in properties)
    return f"::{level} {props}::{escape_data(sanitize(message))}"


def finding_command(item: Finding) -> str:
    """One annotation for one finding."""
    level = "error" if item.severity == Severity.ERROR else "warning"
    properties = [("file", display_path(item.path))]
    if item.line is not None and item.cell is None:  # a notebook's lines are not the file's lines
        properties += [("line", str(item.line)), ("col", str(item.column or 1))]
    properties.append(("title", item.code))
    message = item.message if item.object is None else f"{item.object}: {item.message}"
    if item.cell is not None:
        message = f"cell {item.cell}, line {item.line}: {message}"
    return _command(level, properties, with_fix_hint(item, message))


def error_command(error: InputError) -> str:
    """One annotation for an input that could not be read."""
    where = [("line", str(error.position[0])), ("col", str(error.position[1]))] if error.position else []
    return _command("error", [("file", display_path(error.path)), *where, ("title", "wnaudit: unreadable input")], error.message)


def render(
    result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False,
    **_: object,
) -> None:
    findings = sorted_findings(result)
    encoding = getattr(stream, "encoding", None)

    def write(line: str) -> None:
        stream.write(encodable(line, encoding) + "\n")

    for error in result.errors:
        write(error_command(error))
    for item in findings:
        write(finding_command(item))
    if statistics:
        # Plain lines are shown in the job log and never parsed as commands.
        for code, count, _fixable, title in code_statistics(findings):
            write(f"{count:>5}\t{code}\t{title}")
    if not quiet:
        if findings:
            write(f"wnaudit: {len(findings)} finding{'s' if len(findings) != 1 else ''}.")
        elif not result.errors:
            write("wnaudit: all checks passed.")
