"""What a WN103 migration takes along: every legacy removal that may receive a module it migrates.

Migrating ``torch.nn.utils.weight_norm(conv)`` to the parametrization breaks
each legacy ``remove_weight_norm`` that later meets that module: it raises
``ValueError``, or, where a helper catches the error (``try:
remove_weight_norm(m) except ValueError: pass`` in another module), it
silently folds nothing and the model is served with its norm live.  The
post-migration rules find the removals in the code the application reaches
(WN101, WN106); a helper that the code calls with the module is not reached
by the styles, which flow from callee to caller.  So, for each migration:
the units that build the application (the run's units that reach it) and
what they call, a few steps down, are searched for legacy weight-norm
removals.  Each unguarded or swallowed one is migrated with the fix: it
calls the both-spellings helper (folding the modules that stay legacy as
before).  One that cannot be migrated (behind a check of the module's hooks,
suppressed, or in a file outside the run) makes the migration unsafe: the
WN103 finding stays, without a fix, and says which removal stops it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..context import Context
from ..model import FileSummary, Removal
from ..resolve import API_ROOTS
from ..rules import Candidate
from ..rules.base import LEGACY, WEIGHT_NORM, Fix
from ..rules.removals import call_helper

#: Key of a unit: (resolved file, qualified name).
Key = tuple[str, str]
#: How many calls down from the code that builds the module a removal is looked for.
_CALL_DEPTH = 3


@dataclass(frozen=True)
class Taken:
    """What one migration takes along: the removals migrated with it, or why it cannot be made."""

    #: (path of the removal's summary as given, the removal).
    removals: tuple[tuple[str, Removal], ...] = ()
    #: Why the migration is not safe ("": it is).
    blocker: str = ""


def settle_migrations(
    code: str, summaries: list[FileSummary], kept: dict[str, list[Candidate]], context: Context,
    run_files: frozenset[str],
) -> tuple[dict[tuple[str, str, tuple], str], dict[str, list[Candidate]]]:
    """WN103's ``Rule.SETTLE_FIXES`` step: (why each unsafe migration of ``code`` is not offered, by (path, code,
    site key); the removals the safe ones take along, by the path of the file they are in)."""
    given = {s.file or s.path: s for s in summaries}
    graph = _Graph(context, summaries)
    blocked: dict[tuple[str, str, tuple], str] = {}
    along: dict[str, list[Candidate]] = {}
    for summary in summaries:
        for candidate in kept.get(summary.path, []):
            if candidate.code != code or candidate.fix is None:
                continue
            taken = _taken(summary, candidate, graph, given, run_files)
            if taken.blocker:
                blocked[(summary.path, code, candidate.site.key)] = taken.blocker
                continue
            for path, removal in taken.removals:
                along.setdefault(path, []).append(_companion(removal))
    return blocked, along


def _taken(
    summary: FileSummary, candidate: Candidate, graph: "_Graph", given: dict[str, FileSummary], run_files: frozenset[str],
) -> Taken:
    """The removals one migration (``candidate``, a WN103 finding of ``summary``) must take along."""
    start = (summary.file or summary.path, candidate.site.unit)
    builders = graph.callers(start)
    removals: list[tuple[str, Removal]] = []
    for key in sorted(graph.callees(builders)):
        holder = graph.summary(key[0])
        if holder is None:
            continue
        for removal in holder.removals:
            if removal.site.unit != key[1] or removal.style != LEGACY or removal.kind != WEIGHT_NORM:
                continue
            if removal.guard == "dual":
                continue  # a modern fallback beside it already folds the parametrization
            where = f"`{Path(holder.path).name}:{removal.site.line}`"
            if removal.guard == "checked":
                return Taken(blocker=f"the legacy {removal.api} at {where} runs only where a check of the module's "
                                     "legacy hook passes, which the migrated module fails, and a fix cannot rewrite it")
            if key[0] not in run_files or key[0] not in given:
                return Taken(blocker=f"the legacy {removal.api} at {where} may receive the migrated module and its "
                                     "file is not in this run (lint it too)")
            if _suppressed(holder, removal):
                return Taken(blocker=f"the legacy {removal.api} at {where}, suppressed there, may receive the "
                                     "migrated module")
            if key not in builders:  # the post-migration rules already take the builders' own removals
                removals.append((holder.path, removal))
    return Taken(tuple(removals))


def _suppressed(summary: FileSummary, removal: Removal) -> bool:
    codes = summary.noqa.get(removal.site.line)
    return codes is not None and (not codes or bool({"WN101", "WN106"} & codes))


def _companion(removal: Removal) -> Candidate:
    """The removal, migrated with the application: the both-spellings helper folds either spelling."""
    code = "WN106" if removal.guard == "swallowed" else "WN101"
    return Candidate(
        code,
        removal.site,
        f"legacy {removal.api} may receive a module whose weight norm the WN103 fix migrates to a parametrization: "
        "it would raise ValueError (or, caught, fold nothing); remove it with either spelling's remover",
        Fix(call_helper, WEIGHT_NORM, helper=True, torch=True),
    )


class _Graph:
    """The run's units and what they call (``Context``'s edges), walked both ways."""

    def __init__(self, context: Context, summaries: Iterable[FileSummary]) -> None:
        self.context = context
        self._callers: dict[Key, set[Key]] | None = None
        self._summaries = list(summaries)
        # Every migration walks the same units: a run of many migrations would otherwise ask each unit's calls and
        # each file's summary again, once per migration that reaches it.
        self._held: dict[str, FileSummary | None] = {}
        self._called: dict[Key, tuple[Key, ...]] = {}

    def summary(self, file: str) -> FileSummary | None:
        """The file's facts; a file that applies no norm (a helper module of removals) is read all the same."""
        if file not in self._held:
            self._held[file] = self.context.summary_at(file) or self.context.workspace.analyses.first(Path(file))
        return self._held[file]

    def _calls(self, key: Key) -> tuple[Key, ...]:
        """What the unit calls: the context's edges, and the units of files it leaves out (they apply no norm)."""
        called = self._called.get(key)
        if called is None:
            called = self._called[key] = tuple(self._find_calls(key))
        return called

    def _find_calls(self, key: Key) -> list[Key]:
        found = list(self.context.callees(key))
        summary = self.summary(key[0])
        unit = summary.units.get(key[1]) if summary is not None else None
        if summary is None or unit is None:
            return found
        project = self.context.workspace.project
        for ref in unit.refs:
            if ref.partition(".")[0] in API_ROOTS or self.context.resolve(summary, ref):
                continue
            target = project.resolve(ref, project.locate(key[0]))
            held = self.summary(str(target[0])) if target is not None else None
            if target is None or held is None:
                continue
            name = f"{held.module}.{target[1].partition('.')[0]}" if held.module else target[1].partition(".")[0]
            if name in held.units:
                found.append((str(project.locate(target[0]).path), name))
        return found

    def _reverse(self) -> dict[Key, set[Key]]:
        if self._callers is None:
            self._callers = {}
            for summary in self._summaries:
                file = summary.file or summary.path
                for unit in summary.units:
                    for callee in self._calls((file, unit)):
                        self._callers.setdefault(callee, set()).add((file, unit))
        return self._callers

    def callers(self, start: Key) -> set[Key]:
        """``start`` and the run's units that call or inherit from it, directly or through others."""
        reverse = self._reverse()
        seen = {start}
        queue = [start]
        while queue:
            for caller in reverse.get(queue.pop(), ()):
                if caller not in seen:
                    seen.add(caller)
                    queue.append(caller)
        return seen

    def callees(self, starts: set[Key]) -> set[Key]:
        """``starts`` and what they call, up to ``_CALL_DEPTH`` steps down."""
        seen = set(starts)
        frontier = sorted(starts)
        for _ in range(_CALL_DEPTH):
            frontier = sorted({c for key in frontier for c in self._calls(key) if c not in seen})
            seen.update(frontier)
        return seen
