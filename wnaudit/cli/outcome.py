"""What every ``wnaudit`` command that reports findings shares: its configuration, its report, its exit status.

``check`` (the lint and the audits) and ``probe`` (the runtime entrance) load
``[tool.wnaudit]`` with the command line's selections on top, write findings
through the same renderers and exit the same way: 0 clean, 1 findings, 2 an
error.  Kept apart from ``command.py`` so that a command registered on first
use can import it without importing the group that registers it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Sequence

from ..common.config import Config, ConfigError, load_config
from ..common.findings import RunResult
from ..report import TEXT_FORMATS, renderer
from ..report.sanitize import encodable, sanitize
from .errors import EXIT_ERROR, OneLineUsageError
from .streams import Written, write_report, write_stderr

EXIT_CLEAN, EXIT_FINDINGS = 0, 1


def split_codes(values: Sequence[str]) -> list[str]:
    return [part.strip().upper() for value in values for part in value.split(",") if part.strip()]


def load_run_config(
    paths: tuple[Path, ...], config_path: Path | None, *, select: tuple[str, ...], extend_select: tuple[str, ...],
    ignore: tuple[str, ...], exclude: tuple[str, ...], extend_exclude: tuple[str, ...], force_exclude: bool | None,
    use_cache: bool = False,
) -> Config:
    """``[tool.wnaudit]`` with the command line's selections on top; a bad one is a usage error.

    ``use_cache``: the code registry may come from the per-user cache (``report.codes.code_registry``).
    """
    from ..report.codes import code_registry

    known = code_registry(kept=use_cache)
    try:
        return load_config(list(paths), config_path, known_codes=known).with_overrides(
            select=split_codes(select), extend_select=split_codes(extend_select), ignore=split_codes(ignore),
            exclude=exclude, extend_exclude=extend_exclude, force_exclude=force_exclude, known_codes=known,
        )
    except ConfigError as error:
        raise OneLineUsageError(str(error)) from error


def write_findings(
    result: RunResult, closed: frozenset[str], *, output_format: str, color_choice: str, diff: bool, fix: bool,
    quiet: bool, statistics: bool, show_fixes: bool, unsafe_fixes: bool, checked: int,
) -> Written:
    """Write the patches (``--diff``) and the report; one error line if either cannot be written."""
    # --diff: stdout is the patch alone (it must apply); the report goes to stderr.
    written = Written.DONE
    if diff:
        written, why = write_report(lambda: _write_diffs(result.diffs), sys.stdout, "stdout" in closed)
        result.diffs = []
        if written is not Written.DONE:
            return _say_unwritten("the patches", written, why, fix=False)
    stream = sys.stderr if diff else sys.stdout
    color = use_color(color_choice, stream) and output_format in TEXT_FORMATS

    def render() -> None:
        renderer(output_format)(
            result, stream, color=color, quiet=quiet, statistics=statistics, show_fixes=show_fixes,
            unsafe_fixes=unsafe_fixes, checked=checked,
        )

    written, why = write_report(render, stream, ("stderr" if diff else "stdout") in closed)
    return _say_unwritten("the report", written, why, fix=fix)


def _say_unwritten(what: str, written: Written, why: str, *, fix: bool) -> Written:
    if written is Written.FAILED:
        kept = "; the files this run fixed stay fixed" if fix else ""
        report_error_line("error", f"cannot write {what}: {why}{kept}")
    return written


def report_error_line(kind: str, text: str) -> None:
    """One ``wnaudit: error: ...`` (or ``warning``) line on stderr, sanitised.

    Written to the stream itself, not through ``click.echo``: click strips
    escape sequences when stderr is not a terminal, which would name a file
    that does not exist; the sanitiser shows them escaped instead.
    """
    write_stderr(encodable(f"wnaudit: {kind}: {sanitize(text)}", getattr(sys.stderr, "encoding", None)))


def use_color(choice: str, stream: object) -> bool:
    """``--color``, else ``NO_COLOR`` (no-color.org), else ``FORCE_COLOR``, else ``TERM=dumb`` (none), else whether ``stream`` is a terminal."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":  # a terminal that shows escape sequences as text
        return False
    return is_terminal(stream)


def is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def _write_diffs(diffs: Sequence[str | bytes]) -> None:
    """The ``--diff`` patches, exactly as made (bytes in the file's own encoding go out as bytes)."""
    for patch in diffs:
        if isinstance(patch, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(patch)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(patch if patch.endswith("\n") else patch + "\n")
    sys.stdout.flush()


def exit_status(result: RunResult, exit_zero: bool) -> int:
    if result.errors:
        return EXIT_ERROR
    if result.findings and not exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN
