"""Apply the fixes a file's candidates carry; the only door from the lint to libcst.

The lint runs on ``ast``; libcst (``wnaudit.source.rewrite``) is imported
only here, and only when a fix or a diff is asked for, so linting never pays
for it.  What each fix does is the rule's business (its fix function, in its
family module under ``rules/``); ``rewrite.transform`` applies them and keeps
the file's formatting, encoding and imports right.
"""

from __future__ import annotations

from typing import Iterable, overload

from .model import FileSummary
from .rewrite.errors import FixError
from .rules.base import Candidate

__all__ = ["FixError", "apply_fixes"]


@overload
def apply_fixes(
    data: bytes, summary: FileSummary, fixes: Iterable[Candidate], keep: frozenset[str] = ...,
) -> tuple[bytes, list[Candidate]]: ...


@overload
def apply_fixes(
    data: str, summary: FileSummary, fixes: Iterable[Candidate], keep: frozenset[str] = ...,
) -> tuple[str, list[Candidate]]: ...


@overload
def apply_fixes(
    data: str | bytes, summary: FileSummary, fixes: Iterable[Candidate], keep: frozenset[str] = ...,
) -> tuple[str | bytes, list[Candidate]]: ...


def apply_fixes(
    data: str | bytes, summary: FileSummary, fixes: Iterable[Candidate], keep: frozenset[str] = frozenset(),
) -> tuple[str | bytes, list[Candidate]]:
    """Return the fixed content (same type as ``data``) and the candidates actually fixed.

    A candidate whose fix rewrites a binding in another file (``Fix.binding_file``)
    is applied in that file's call: only its binding changes, its call is elsewhere.
    ``keep``: names other files import from this one; imports the fix leaves
    unused are dropped, but never these (the other files still need them);
    ``"*"`` in it (another file imports the module itself) keeps them all.
    """
    wanted: dict[tuple[int, int, int, int], list[Candidate]] = {}
    inserts: list[Candidate] = []
    rebinds: list[Candidate] = []
    here = summary.file or summary.path
    for candidate in fixes:
        fix = candidate.fix
        if fix is not None and fix.binding_file:
            if fix.binding_file == here:
                rebinds.append(candidate)  # a binding written here, whichever file the call is in
        elif fix is not None:
            site = candidate.site
            wanted.setdefault((site.line, site.column - 1, site.end_line, site.end_column - 1), []).append(candidate)
        elif candidate.insert is not None and candidate.insert.file == here:
            inserts.append(candidate)  # a statement for this file, whichever file the finding is in
    if not wanted and not inserts and not rebinds:
        return data, []
    from .rewrite.transform import rewrite  # libcst: only now that there is something to fix

    return rewrite(data, summary, wanted, keep, inserts, rebinds)
