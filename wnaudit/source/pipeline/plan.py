"""Fix plan: every edit the run would make, across files, each with its applicability.

WN103 migrates an application to the modern spelling; the removals that
migration would break are found by re-running the rules on the post-fix view
and are fixed with it, even where WN101 itself is not selected.  A fix may
edit another file than its finding's: a statement in the serving code of a
model built here (WN110), or the binding of a flag choice this file imports
(WN103).  The plan is one object: the findings now, and the edits by the file
they edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...common.config import Config
from ...common.findings import Applicability
from ..context import Context
from ..model import FileSummary
from ..rules import BY_CODE, Candidate
from .migration import settle_migrations, unfixed
from .run_rules import Binding, active, applies, file_candidates, identity, offered, withhold


@dataclass(frozen=True)
class Edit:
    """One fix: the file it edits (resolved path), the finding it fixes (path as given) and its applicability."""

    candidate: Candidate
    file: str
    origin: str
    #: Whether the run reports the finding it fixes (else a companion: a removal WN103's migration takes along).
    reported: bool

    @property
    def applicability(self) -> Applicability | None:
        return BY_CODE[self.candidate.code].applicability

    @property
    def rebinds(self) -> bool:
        """It rewrites a binding that calls in other files share (WN103 through an imported flag choice)."""
        fix = self.candidate.fix
        return fix is not None and bool(fix.binding_file)


@dataclass
class FixPlan:
    """The findings of the linted files now (path as given -> candidates) and every edit across files."""

    findings: dict[str, list[Candidate]]
    edits: list[Edit] = field(default_factory=list)

    def files(self) -> list[str]:
        """The files the plan edits, those rewriting a shared binding first (see ``apply``)."""
        edited = sorted({edit.file for edit in self.edits})
        rebinding = self.rebinding_files()
        return sorted(edited, key=lambda file: file not in rebinding)

    def rebinding_files(self) -> frozenset[str]:
        return frozenset(edit.file for edit in self.edits if edit.rebinds)

    def edits_in(self, file: str) -> list[Edit]:
        return [edit for edit in self.edits if edit.file == file]


def edited_file(summary: FileSummary, candidate: Candidate) -> str:
    """The file (resolved path) a candidate's fix edits: a statement's or a binding's file, else its own."""
    here = summary.file or summary.path
    if candidate.insert is not None:
        return candidate.insert.file
    fix = candidate.fix
    if fix is not None and fix.binding_file and fix.binding_file != here:
        return fix.binding_file
    return here


def plan_fixes(
    summaries: list[FileSummary], config: Config, before: Context, unsafe_fixes: bool = True,
    run_files: frozenset[str] = frozenset(), withheld: frozenset[Binding] = frozenset(),
) -> FixPlan:
    """The plan for ``summaries`` (completed first-pass facts of the linted files), ``before`` their context.

    Without ``unsafe_fixes`` only fixes whose rule is ``Applicability.SAFE`` are planned.
    ``run_files``: the resolved paths of every file in the run (a statement fix may go into
    one that has no finding of its own); the summarised files are always in it.
    ``withheld``: bindings not to rewrite besides those a suppression protects (one the
    fixer could not rewrite: the calls through it keep their removals as they are).
    """
    workspace = before.workspace
    files = run_files | frozenset(s.file or s.path for s in summaries)
    now = {s.path: file_candidates(s, before, config, files) for s in summaries}
    now, reported, blocked = offered(summaries, now, config, workspace, withheld)
    unsafe, along = _settled(summaries, reported, before, files)
    now = {path: unfixed(path, found, unsafe) for path, found in now.items()}
    reported = {path: unfixed(path, found, unsafe) for path, found in reported.items()}
    migrated = frozenset(
        (path, c.site.key) for path, found in reported.items() for c in found
        if c.code == "WN103" and c.fixable and applies(c.code, unsafe_fixes)
    )
    after = Context(summaries, migrated, workspace=workspace) if migrated else before
    plan = FixPlan({s.path: reported[s.path] for s in summaries})
    for summary in summaries:
        if migrated:
            post = unfixed(summary.path, withhold(summary, file_candidates(summary, after, config, files), blocked), unsafe)
            seen = {identity(c) for c in post}
            post += [c for c in along.get(summary.path, []) if identity(c) not in seen]
        else:
            post = now[summary.path]
        plan.edits.extend(_edits(summary, post, now[summary.path], reported[summary.path], config, unsafe_fixes))
    return plan


def _settled(
    summaries: list[FileSummary], reported: dict[str, list[Candidate]], before: Context, files: frozenset[str],
) -> tuple[dict[tuple[str, tuple], str], dict[str, list[Candidate]]]:
    """The WN103 migrations that are not safe, and the removals the safe ones take along (``migration.py``)."""
    if not any(c.code == "WN103" and c.fixable for found in reported.values() for c in found):
        return {}, {}
    return settle_migrations(summaries, reported, before, files)


def _edits(
    summary: FileSummary, post: list[Candidate], now: list[Candidate], reported: list[Candidate], config: Config,
    unsafe_fixes: bool,
) -> list[Edit]:
    """A file's edits: the fixes of its findings after migration, and those the migration brings (not found before)."""
    existing = {identity(c) for c in now}
    chosen = {identity(c) for c in active(summary, post, config)}
    shown = {identity(c) for c in reported}
    return [
        Edit(c, edited_file(summary, c), summary.path, identity(c) in shown) for c in post
        if c.fixable and applies(c.code, unsafe_fixes) and (identity(c) in chosen or identity(c) not in existing)
    ]
