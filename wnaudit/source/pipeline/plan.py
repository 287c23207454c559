"""Fix plan: every edit the run would make, across files, each with its applicability.

A rule whose fix changes what the other rules find says so on its class
(``Rule.RERUN_AFTER_FIX``, WN103's migration to the modern spelling): the
rules are re-run on the post-fix view and the findings that view brings are
fixed with it, even where their rule itself is not selected.  A cross-file
step that settles such fixes first is named on the class too
(``Rule.SETTLE_FIXES``); this module reads both for any rule and names none.  A fix may
edit another file than its finding's: a statement in the serving code of a
model built here (WN110), or the binding of a flag choice this file imports
(WN103).  The plan is one object: the findings now, and the edits by the file
they edit.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from typing import Callable

from ...common.config import Config
from ...common.findings import Applicability
from ..context import Context
from ..model import FileSummary
from ..rules import BY_CODE, RULES, Candidate
from .run_rules import Binding, active, applies, file_candidates, identity, offered, withhold


#: Fixes withheld by a rule's settle step: why, by (path as given, code, site key).
Blocked = dict[tuple[str, str, tuple], str]
#: A rule's ``SETTLE_FIXES`` step: (code, summaries, reported, context, run files) -> (blocked, taken along by path).
Settle = Callable[
    [str, list[FileSummary], dict[str, list[Candidate]], Context, frozenset[str]],
    tuple[Blocked, dict[str, list[Candidate]]],
]


def _rerun_after_fix() -> frozenset[str]:
    """The codes whose fixes change what the other rules find (``Rule.RERUN_AFTER_FIX``), read from the classes."""
    return frozenset(rule.code for rule in RULES if rule.RERUN_AFTER_FIX)


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
    rerun = _rerun_after_fix()
    migrated = frozenset(
        (path, c.site.key) for path, found in reported.items() for c in found
        if c.code in rerun and c.fixable and applies(c.code, unsafe_fixes)
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
) -> tuple[Blocked, dict[str, list[Candidate]]]:
    """The fixes each rule's settle step withholds, and the findings the others take along (``Rule.SETTLE_FIXES``)."""
    blocked: Blocked = {}
    along: dict[str, list[Candidate]] = {}
    for code, target in ((rule.code, rule.SETTLE_FIXES) for rule in RULES if rule.SETTLE_FIXES):
        if not any(c.code == code and c.fixable for found in reported.values() for c in found):
            continue
        withheld, taken = _settle_step(target)(code, summaries, reported, before, files)
        blocked.update(withheld)
        for path, found in taken.items():
            along.setdefault(path, []).extend(found)
    return blocked, along


def _settle_step(target: str) -> Settle:
    """The function ``"module:function"`` names, imported when first needed."""
    module_name, _, function = target.partition(":")
    step: Settle = getattr(importlib.import_module(module_name), function)
    return step


def unfixed(path: str, found: list[Candidate], blocked: Blocked) -> list[Candidate]:
    """``found`` with each blocked fix withdrawn, its message saying why."""
    if not blocked:
        return found
    return [_withdrawn(c, blocked.get((path, c.code, c.site.key))) for c in found]


def _withdrawn(candidate: Candidate, reason: str | None) -> Candidate:
    if reason is None:
        return candidate
    return dataclasses.replace(candidate, fix=None, message=f"{candidate.message}; no fix offered: {reason}")


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
