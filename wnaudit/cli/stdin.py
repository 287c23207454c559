"""``wnaudit - --stdin-filename path.py``: lint the source on stdin as if it were that file, as ruff does.

Editors pipe the buffer being edited.  The findings name ``--stdin-filename``
and its imports resolve from there.  With ``--fix`` stdout is the fixed source,
the findings that remain go to stderr; with ``--diff`` stdout is the patch.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from ..common.config import Config
from ..common.findings import InputError, RunResult

#: The path findings name when no ``--stdin-filename`` is given.
STDIN_NAME = "-"


def wants_stdin(paths: tuple[Path, ...], stdin_filename: str | None) -> bool:
    """``-`` alone, or no path but ``--stdin-filename``."""
    return [str(p) for p in paths] == ["-"] or (not paths and stdin_filename is not None)


def read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    return stream.read() if stream is not None else sys.stdin.read().encode("utf-8")


def check_stdin(source: bytes, name: str, config: Config, *, fix: bool, diff: bool, unsafe_fixes: bool) -> tuple[RunResult, bytes | None]:
    """The findings for ``source`` as file ``name``, and what stdout gets (the fixed source or the patch; None: the report)."""
    from ..source import SourceError, fix_source, lint_source

    result = RunResult()
    if config.force_exclude and config.is_path_excluded(Path(name)):
        return result, source if fix else None  # ruff's behaviour: an excluded file passes through unchanged
    try:
        if fix or diff:
            fixed, done = fix_source(source, name, config, unsafe_fixes=unsafe_fixes)
            assert isinstance(fixed, bytes)
            result.fixed = [] if diff else done
            result.findings = lint_source(source if diff else fixed, name, config)
            return result, (_patch(source, fixed, name) if diff else fixed)
        result.findings = lint_source(source, name, config)
    except SourceError as error:
        result.errors.append(InputError(name, str(error)))
        return result, source if fix else None
    return result, None


def _patch(before: bytes, after: bytes, name: str) -> bytes:
    """A unified diff ``git apply`` takes (``a/NAME``, ``b/NAME``); empty when nothing changes."""
    if before == after:
        return b""
    lines = difflib.unified_diff(
        before.decode("utf-8", "surrogateescape").splitlines(keepends=True),
        after.decode("utf-8", "surrogateescape").splitlines(keepends=True),
        f"a/{name}", f"b/{name}",
    )
    return "".join(lines).encode("utf-8", "surrogateescape")


def write_stdout(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
