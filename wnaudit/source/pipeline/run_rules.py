"""Run the rules: the candidates of every linted file, as the run reports them (suppressions, selection, reach of fixes).

A candidate is a rule's answer for one site; it is a finding unless a
``# noqa`` or the config turns it off.  A fix that edits another file is
offered only when that file is in the run, and never one that would rewrite
a binding a suppressed call shares.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Callable, Iterable

from ...common.config import Config
from ...common.findings import Applicability, Finding, finding
from ..context import Context
from ..model import FileSummary
from ..rules import BY_CODE, Candidate, candidates
from ..facts.kinds import OK, SYNTAX, Blob
from ..workspace import Workspace
from .analyse import parse_failure

logger = logging.getLogger(__name__)

#: A binding a fix may rewrite: (resolved file, span).
Binding = tuple[str, tuple[int, int, int, int]]


def identity(candidate: Candidate) -> tuple:
    return (candidate.code, candidate.site.key)


def rules_for(config: Config, summary: FileSummary) -> Callable[[str], bool]:
    """The codes the run reports for a file (a project-wide rule runs only for those)."""
    return lambda code: config.enabled(code, summary.path)


def applies(code: str, unsafe_fixes: bool) -> bool:
    """Whether this run applies fixes of ``code``: safe ones always, "needs review" ones only with ``--unsafe-fixes``."""
    return unsafe_fixes or BY_CODE[code].applicability is Applicability.SAFE


def _suppressed(summary: FileSummary, candidate: Candidate) -> bool:
    codes = summary.noqa.get(candidate.site.line)
    # A listed code may be a prefix (``# noqa: WN1``), as flake8 reads it.
    return codes is not None and (not codes or any(candidate.code.startswith(code) for code in codes))


def active(summary: FileSummary, found: Iterable[Candidate], config: Config) -> list[Candidate]:
    """The candidates that are findings: not suppressed, their code selected for the file."""
    return [c for c in found if not _suppressed(summary, c) and config.enabled(c.code, summary.path)]


def to_finding(path: str, candidate: Candidate) -> Finding:
    return finding(
        BY_CODE[candidate.code], path, candidate.message, fixable=candidate.fixable,
        line=candidate.site.line, column=candidate.site.column,
    )


def within(found: list[Candidate], files: frozenset[str]) -> list[Candidate]:
    """``found`` with fixes that edit another file kept only where that file is in this run (else: no fix offered).

    A WN110 fix adds the fold to the serving file, a WN103 fix through an
    imported flag choice rewrites the binding in the file that writes it; a
    run that does not lint that file does not write it, so the finding is not
    shown as fixable there (never half a fix: the call's own file alone).
    """
    out = []
    for c in found:
        if c.insert is not None and c.insert.file not in files:
            c = dataclasses.replace(c, insert=None)
        if c.fix is not None and c.fix.binding_file and c.fix.binding_file not in files:
            c = dataclasses.replace(c, fix=None)
        out.append(c)
    return out


def file_candidates(summary: FileSummary, context: Context, config: Config, files: frozenset[str]) -> list[Candidate]:
    """One file's candidates, with only the fixes the run's ``files`` can take.

    Empty when a rule raises on it (a bug, an input past a bound): the file is
    noted on the workspace (one error line, exit 2) and the run goes on, so it
    costs that file's findings and never the other files' report.
    """
    try:
        return within(candidates(summary, context, rules_for(config, summary)), files)
    except Exception as error:  # noqa: BLE001 - see above
        context.workspace.analyses.note_failure(summary.path, error)
        return []


def binding_of(summary: FileSummary, candidate: Candidate) -> Binding | None:
    """The binding a candidate's fix rewrites, as (file, span) (None: the fix rewrites only its own call)."""
    fix = candidate.fix
    if fix is None or fix.binding is None:
        return None
    return (fix.binding_file or summary.file or summary.path, fix.binding[0])


def _suppressed_bindings(
    summaries: list[FileSummary], found: dict[str, list[Candidate]], kept: dict[str, list[Candidate]],
    workspace: Workspace,
) -> frozenset[Binding]:
    """Bindings a fix must not rewrite: one call through them is suppressed (``# noqa``, or its code off for that file).

    ``norm_f = weight_norm if flag else spectral_norm`` is shared by every
    call through ``norm_f``: rewriting it for one call changes the others too,
    and a fix must never change code the user suppressed.  A ``# noqa`` for
    the code on the binding's own line protects it as well.  Only the files
    of the run are seen (a call in a file outside it is not known).
    """
    out: set[Binding] = set()
    for summary in summaries:
        reported = {identity(c) for c in kept[summary.path]}
        for candidate in found[summary.path]:
            binding = binding_of(summary, candidate)
            if binding is None or binding in out:
                continue
            if identity(candidate) not in reported:
                logger.debug("%s:%d: %s suppressed: its binding is not rewritten", summary.path, candidate.site.line, candidate.code)
                out.add(binding)
            elif _binding_line_suppressed(summary, binding, candidate, workspace):
                out.add(binding)
    return frozenset(out)


def _binding_line_suppressed(summary: FileSummary, binding: Binding, candidate: Candidate, workspace: Workspace) -> bool:
    holder = summary if binding[0] == (summary.file or summary.path) else workspace.analyses.first(Path(binding[0]))
    codes = holder.noqa.get(binding[1][0]) if holder is not None else None
    return codes is not None and (not codes or any(candidate.code.startswith(code) for code in codes))


def offered(
    summaries: list[FileSummary], found: dict[str, list[Candidate]], config: Config, workspace: Workspace,
    withheld: frozenset[Binding] = frozenset(),
) -> tuple[dict[str, list[Candidate]], dict[str, list[Candidate]], frozenset[Binding]]:
    """(every candidate, the active ones, the bindings withheld): no fix that would rewrite a suppressed call's binding."""
    kept = {s.path: active(s, found[s.path], config) for s in summaries}
    blocked = _suppressed_bindings(summaries, found, kept, workspace) | withheld
    if blocked:
        found = {s.path: withhold(s, found[s.path], blocked) for s in summaries}
        kept = {s.path: active(s, found[s.path], config) for s in summaries}
    return found, kept, blocked


def withhold(summary: FileSummary, found: list[Candidate], blocked: frozenset[Binding]) -> list[Candidate]:
    """``found`` without the fixes that would rewrite a ``blocked`` binding (the findings stay, not fixable)."""
    if not blocked:
        return found
    return [dataclasses.replace(c, fix=None) if binding_of(summary, c) in blocked else c for c in found]


def findings_of(summaries: list[FileSummary], context: Context, config: Config, files: frozenset[str]) -> list[Finding]:
    """The findings of ``summaries`` (suppressions and selection applied), for a run that fixes nothing."""
    found = {s.path: file_candidates(s, context, config, files) for s in summaries}
    kept = offered(summaries, found, config, context.workspace)[1]
    return [to_finding(s.path, c) for s in summaries for c in kept[s.path]]


def serving_syntax_errors(context: Context, unparsed: dict[str, str], workspace: Workspace) -> list[tuple[str, str]]:
    """(path as given, one line) for the linted files the prefilter ruled out that WN110 read and could not parse.

    ``unparsed``: resolved path -> path as given, of the run's files that were
    not analysed.  When WN110's answers were kept from an earlier run, its
    serving files were not read again: the fact store holds the verdict
    that run found for the bytes it read (the same bytes, or the kept
    answers would not stand).
    """
    out: dict[str, str] = {}
    facts = workspace.facts
    for path, error in context.serving_failures().items():
        given = unparsed.get(str(path))
        if given is None:
            continue
        out[given] = parse_failure(error)
        data = workspace.reads.source_bytes(path)
        if data is not None and isinstance(error, SyntaxError):
            facts.put(SYNTAX, Blob.of(data), out[given])
    for resolved, given in unparsed.items():
        digest = workspace.reads.kept_serving_read(resolved)
        if given in out or digest is None:
            continue
        verdict = facts.known(SYNTAX, Blob(bytes.fromhex(digest)))
        if verdict is not None and verdict != OK:
            out[given] = verdict
    return sorted(out.items())
