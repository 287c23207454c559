"""Apply: the plan's edits become new file contents, checked, then written as one transaction across files.

Every new content is analysed before anything is written (it must still be
Python, and the fixer must have changed it), and a file whose bytes changed
since the scan read them is left alone (another run, or an editor, got there
first: the final re-lint from the disk says what remains).  That check holds
up to each file's rename: right before it, under the transaction, the file
must still hold the bytes the fix was made from, and have one name (a hard
link would keep the old text); otherwise it is left alone with one warning
line.  Then, with ``--fix``, all the new contents are written or none is
(``common.journal.commit``, the front-end the sharded checkpoint uses too):

1. each goes to a staged file beside its target (``common.journal``'s
   unpredictable name for this process, created exclusively), flushed and fsynced;
2. the journal naming every (staged file, target) pair with the staged
   digests is written: the commit point;
3. the staged files are renamed over their targets, and the journal removed.

SIGINT/SIGTERM are held from 2 to the end of 3: the set finishes, then the run
ends with the signal's status, naming the files fixed.  An interruption before
2 leaves every file untouched (the staged files are removed when the process
can still do it; after SIGKILL the next ``--fix`` removes them); a crash after 2
is finished by the next ``--fix`` (``journals.recover``), so every file ends fixed, and
an audit meanwhile says so (``journals.pending``).  A run looks for journals and staged
files only inside its tree (``journals.tree_folders``), and honours a journal only as
``common.journal`` allows (its owner, the run's files as targets, staged names
and digests, a dead writer).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ...common import interrupts, journal
from ...common.atomic import (
    atomic_write_bytes,
    random_token,
    staged_writer,
)
from ...common.findings import InputError
from .. import notebook
from ..fixer import FixError, apply_fixes
from ..model import FileSummary
from ..project import Location, Project
from ..reading import SourceError, read_source_bytes
from ..rules import Candidate
from ..facts.kinds import digest_of
from ..workspace import Workspace
from .analyse import summarize_at
from .journals import OWNER_PREFIX, journal_directory
from .plan import Edit, FixPlan
from .run_rules import Binding

logger = logging.getLogger(__name__)

#: A test seam: called with ``"applied_one"`` after each rename of a multi-file commit.
_after_rename: Callable[[str], None] | None = None


@dataclass(frozen=True)
class Change:
    """One file's new content, checked: its path as given, old and new bytes, the candidates it fixes."""

    path: str
    old: bytes
    new: bytes
    applied: tuple[Candidate, ...]


@dataclass
class Outcome:
    """What a ``rewrite`` made: the changes ready to write, and one line per file left unchanged."""

    changes: list[Change] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


def rewrite(
    summary: FileSummary, fixes: Sequence[Candidate], location: Location, max_bytes: int,
    keep: frozenset[str] = frozenset(), digest: bytes | None = None,
) -> Change | None:
    """The new content of one file with ``fixes`` applied (None: nothing changes, or the file changed since the scan).

    Raises ``OSError``, ``FixError`` or ``SourceError``: the fix cannot be applied.
    """
    path = Path(summary.path)
    data = read_source_bytes(path, max_bytes)
    if digest is not None and digest_of(data) != digest:
        logger.info("%s: changed since it was read; not fixed in this run", summary.path)
        return None
    try:
        new_data, checked, applied = _fixed(path, data, summary, fixes, keep)
    except Exception:
        interrupts.raise_if_interrupted()  # libcst's cleanup turns a signal into a KeyError: the run was interrupted
        raise
    if not applied or new_data == data:
        return None
    summarize_at(checked, summary.path, location)  # the verification: the result is valid Python the analysis reads
    return Change(summary.path, data, new_data, tuple(applied))


def _fixed(
    path: Path, data: bytes, summary: FileSummary, fixes: Sequence[Candidate], keep: frozenset[str],
) -> tuple[bytes, bytes | str, list[Candidate]]:
    """The new bytes, the text the verification reads, and the candidates applied (libcst's code generation)."""
    if notebook.is_notebook(path):
        view = notebook.notebook_view(data)
        new_view, applied = apply_fixes(view.text, summary, fixes, keep)
        return notebook.rewrite_notebook(data, view, str(new_view)), new_view, applied
    fixed, applied = apply_fixes(data, summary, fixes, keep)
    new_data = fixed if isinstance(fixed, bytes) else fixed.encode("utf-8")  # bytes in, bytes out
    return new_data, new_data, applied


def try_rewrite(
    summary: FileSummary, fixes: Sequence[Candidate], location: Location, max_bytes: int, outcome: Outcome,
    keep: frozenset[str] = frozenset(), digest: bytes | None = None,
) -> Change | None:
    """``rewrite``, its failure noted in ``outcome`` (the file stays as it is)."""
    try:
        change = rewrite(summary, fixes, location, max_bytes, keep, digest)
    except (OSError, FixError, SourceError) as error:
        outcome.errors.append(InputError(summary.path, f"fix not applied, file unchanged: {error}"))
        return None
    if change is not None:
        outcome.changes.append(change)
    return change


# -- the transaction ---------------------------------------------------------------


def commit(changes: Sequence[Change], run_paths: Sequence[str]) -> list[Change]:
    """Write every change or none (see the module docstring); returns the changes left alone.

    A file is left alone (one warning line; its findings remain) when, right
    before its rename, it is no longer the file the fix was made from: another
    writer changed it, or it has several hard links (a rename would fix one
    name and leave the others).  ``OSError``: nothing was written.
    """
    current = [change for change in changes if _replaceable(change)]
    left = [change for change in changes if change not in current]
    if len(current) == 1:
        if not _write_one(current[0]):
            left.append(current[0])
    elif current:
        left.extend(_write_set(current, run_paths))
    return left


def _write_one(change: Change) -> bool:
    """One file, atomically, checked right before its rename; False: left alone."""
    def still_current(written: Path) -> None:
        if not _replaceable(change):
            raise _LeftAlone(change.path)

    try:
        atomic_write_bytes(Path(change.path), change.new, verify=still_current)
    except _LeftAlone:
        return False
    interrupts.note_fixed([change.path])
    return True


class _LeftAlone(Exception):
    """The file changed between the check and the write: nothing was replaced."""


def _write_set(changes: Sequence[Change], run_paths: Sequence[str]) -> list[Change]:
    """Several files as one transaction (``common.journal.commit``); returns the changes left alone at their rename."""
    directory = journal_directory([*run_paths, *(c.path for c in changes)])
    owner = directory / f"{OWNER_PREFIX}{os.getpid()}-{random_token()}"
    by_target: dict[str, Change] = {}
    pairs: list[tuple[Path, Path]] = []
    try:
        for change in changes:
            target = Path(os.path.realpath(change.path))
            staged = journal.staged_path(target)
            with staged_writer(target, staged) as handle:
                handle.write(change.new)
            pairs.append((staged, target))
            by_target[os.path.relpath(target, directory)] = change
    except BaseException:
        journal.remove_staged(pairs)
        raise

    def replaceable(entry: journal.JournalEntry) -> bool:
        return _replaceable(by_target[entry.target])

    replaced = {os.path.relpath(path, directory) for path in journal.commit(owner, pairs, _after_rename, replaceable)}
    logger.debug("wrote %d fixed files as one transaction", len(replaced))
    return [change for target, change in by_target.items() if target not in replaced]


def _replaceable(change: Change) -> bool:
    """Whether ``change.path`` is still the one file the fix was made from (checked right before its rename)."""
    try:
        info = os.stat(change.path)
        if info.st_nlink > 1:
            logger.warning(
                "%s: has %d hard links; not fixed (a fix replaces one name and would leave the others unfixed): "
                "fix it by hand or break the link", change.path, info.st_nlink,
            )
            return False
        with open(change.path, "rb") as handle:
            unchanged = handle.read(len(change.old) + 1) == change.old
    except OSError:
        unchanged = False
    if not unchanged:
        logger.warning("%s: changed by another writer since it was read; left as it is, not fixed", change.path)
    return unchanged


# -- the plan's edits, file by file ----------------------------------------------------


def imported_from(summaries: Sequence[FileSummary], project: Project) -> dict[str, frozenset[str]]:
    """File -> the names the other scanned files import from it (the fixer must not drop those imports).

    A file that imports the module itself may use any of its names: ``"*"`` says so.
    """
    names: dict[str, set[str]] = {}
    for summary in summaries:
        location = project.locate(summary.file or summary.path)
        for target in summary.imports:
            found = project.resolve(target, location)
            if found is not None:
                names.setdefault(str(found[0]), set()).add(found[1].partition(".")[0] or "*")
    return {file: frozenset(found) for file, found in names.items()}


@dataclass
class Files:
    """What the apply stage needs of the scan: the run's files by identity, their analyses and the digests read."""

    #: resolved path -> the path as given.
    given: dict[str, str]
    #: resolved path -> the completed first-pass facts of a linted file.
    summaries: dict[str, FileSummary]
    #: path as given -> the digest of the bytes analysed.
    digests: dict[str, bytes]

    def ordered(self, edited: list[str]) -> list[str]:
        """Edited files in the order of the scan, then those with no analysis of their own (a diff lists them so)."""
        position = {file: index for index, file in enumerate(self.summaries)}
        return sorted(edited, key=lambda file: (file not in position, position.get(file, 0), file))


def apply_plan(
    plan: FixPlan, files: Files, workspace: Workspace, max_bytes: int,
    replan: Callable[[frozenset[Binding]], FixPlan],
) -> tuple[Outcome, list[tuple[str, Candidate]]]:
    """Every file's new content (not written), and the (finding's path, candidate) pairs they fix.

    Files that take a binding rewritten for calls in other files go first:
    when one cannot be rewritten, ``replan`` withholds it, and the calls' own
    files are fixed without migrating their removals (never half a fix).
    """
    outcome = Outcome()
    keep = imported_from(list(files.summaries.values()), workspace.project)
    origins = {id(edit.candidate): edit for edit in plan.edits}
    failed = _rewrite_bindings(plan, files, workspace, max_bytes, outcome, keep)
    later = replan(failed) if failed else plan
    origins.update((id(edit.candidate), edit) for edit in later.edits)
    for file in files.ordered([f for f in later.files() if f not in plan.rebinding_files()]):
        _rewrite_file(file, [e.candidate for e in later.edits_in(file)], files, workspace, max_bytes, outcome, keep)
    fixed = [
        (origins[id(c)].origin, c) for change in outcome.changes for c in change.applied
        if id(c) in origins and origins[id(c)].reported
    ]
    return outcome, fixed


def _rewrite_bindings(
    plan: FixPlan, files: Files, workspace: Workspace, max_bytes: int, outcome: Outcome, keep: dict[str, frozenset[str]],
) -> frozenset[Binding]:
    """Rewrite the files holding shared bindings; return the bindings that could not be rewritten."""
    failed: set[Binding] = set()
    for file in files.ordered([f for f in plan.files() if f in plan.rebinding_files()]):
        edits = plan.edits_in(file)
        change = _rewrite_file(file, [e.candidate for e in edits], files, workspace, max_bytes, outcome, keep)
        done = {id(c) for c in change.applied} if change is not None else set()
        failed.update(_binding(edit) for edit in edits if edit.rebinds and id(edit.candidate) not in done)
    return frozenset(failed)


def _binding(edit: Edit) -> Binding:
    fix = edit.candidate.fix
    assert fix is not None and fix.binding is not None
    return (edit.file, fix.binding[0])


def _rewrite_file(
    file: str, fixes: list[Candidate], files: Files, workspace: Workspace, max_bytes: int, outcome: Outcome,
    keep: dict[str, frozenset[str]],
) -> Change | None:
    """One edited file's new content; a file with no analysis of its own (a serving file) is analysed now."""
    if file not in files.given:
        return None
    path = files.given[file]
    location = workspace.project.locate_input(path)
    summary = files.summaries.get(file)
    if summary is None:
        try:
            summary = summarize_at(read_source_bytes(Path(path), max_bytes), path, location)
        except (OSError, SourceError) as error:
            outcome.errors.append(InputError(path, f"fix not applied, file unchanged: {error}"))
            return None
    return try_rewrite(summary, fixes, location, max_bytes, outcome, keep.get(summary.file, frozenset()), files.digests.get(path))
