"""Apply: the plan's edits become new file contents, checked, then written as one transaction across files.

Every new content is analysed before anything is written (it must still be
Python, and the fixer must have changed it), and a file whose bytes changed
since the scan read them is left alone (another run, or an editor, got there
first: the final re-lint from the disk says what remains).  Then, with
``--fix``, all the new contents are written or none is:

1. each goes to a staged file beside its target (``common.journal``'s exact
   name for this process), flushed and fsynced;
2. the journal naming every (staged file, target) pair with the staged
   digests is written: the commit point;
3. the staged files are renamed over their targets, and the journal removed.

An interruption before 2 leaves every file untouched (the staged files are
removed when the process can still do it); after 2 the next ``--fix`` run
finishes the renames (``recover``), so every file ends fixed.  A journal is
honoured only as ``common.journal`` allows (its owner, the run's files as
targets, exact staged names and digests, a dead writer).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ...common import journal
from ...common.atomic import atomic_write_bytes, process_alive
from ...common.findings import InputError
from .. import notebook
from ..fixer import FixError, apply_fixes
from ..model import FileSummary
from ..project import Location, Project
from ..reading import SourceError, read_source_bytes
from ..rules import Candidate
from ..syntax_cache import digest_of
from ..workspace import Workspace
from .analyse import summarize_at
from .plan import Edit, FixPlan
from .rules import Binding

logger = logging.getLogger(__name__)

#: The journal's owner name (a name only: no such file exists) in the directory of the run's files.
OWNER_PREFIX = ".wnaudit-source-fix-"
_JOURNAL_NAME = re.compile(r"^\." + re.escape(OWNER_PREFIX) + r"(\d+)" + re.escape(journal.JOURNAL_SUFFIX) + r"$")

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
    if notebook.is_notebook(path):
        view = notebook.notebook_view(data)
        new_view, applied = apply_fixes(view.text, summary, fixes, keep)
        new_data = notebook.rewrite_notebook(data, view, str(new_view))
        checked: bytes | str = new_view
    else:
        fixed, applied = apply_fixes(data, summary, fixes, keep)
        new_data = checked = fixed if isinstance(fixed, bytes) else fixed.encode("utf-8")  # bytes in, bytes out
    if not applied or new_data == data:
        return None
    summarize_at(checked, summary.path, location)  # the verification: the result is valid Python the analysis reads
    return Change(summary.path, data, new_data, tuple(applied))


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


def journal_directory(paths: Sequence[str]) -> Path:
    """Where a run over ``paths`` keeps its journal: the deepest directory holding every one (symlinks resolved)."""
    return Path(os.path.commonpath([os.path.dirname(os.path.realpath(p)) for p in paths]))


def commit(changes: Sequence[Change], run_paths: Sequence[str]) -> None:
    """Write every change or none (see the module docstring); ``OSError``: nothing was written."""
    if not changes:
        return
    if len(changes) == 1:
        atomic_write_bytes(Path(changes[0].path), changes[0].new)
        return
    directory = journal_directory([*run_paths, *(c.path for c in changes)])
    owner = directory / f"{OWNER_PREFIX}{os.getpid()}"
    pairs: list[tuple[Path, Path]] = []
    try:
        for change in changes:
            target = Path(os.path.realpath(change.path))
            staged = journal.staged_path(target)
            pairs.append((staged, target))
            _write_staged(staged, change.new, target)
        written = journal.write_journal(owner, pairs)  # the commit point
    except BaseException:
        for staged, _ in pairs:
            with contextlib.suppress(OSError):
                staged.unlink()
        with contextlib.suppress(OSError):
            journal.journal_path(owner).with_name(journal.journal_path(owner).name + ".new").unlink()
        raise
    journal.apply_journal(written, _after_rename)
    logger.debug("wrote %d fixed files as one transaction", len(changes))


def _write_staged(staged: Path, data: bytes, target: Path) -> None:
    """The new content beside its target, with the target's permission bits, on disk before the journal names it."""
    mode = stat.S_IMODE(os.stat(target).st_mode)
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            staged.unlink()
        raise
    os.chmod(staged, mode)


def recover(run_paths: Sequence[str]) -> list[InputError]:
    """Finish the transactions an interrupted ``--fix`` committed over these files; one line per journal refused.

    A journal sits in the directory of the files of the run that wrote it: this
    run's directory or one above.  One whose writer still runs is another
    fix in progress, and left to it.
    """
    if not run_paths:
        return []
    errors: list[InputError] = []
    directory = journal_directory(run_paths)
    for folder in [directory, *directory.parents]:
        for name, pid in _journals_in(folder):
            if pid != os.getpid() and process_alive(pid):
                continue
            targets = _relative_targets(folder, run_paths)
            try:
                done = journal.finish(folder / f"{OWNER_PREFIX}{pid}", targets)
            except journal.JournalRefused as refused:
                errors.append(InputError(str(folder / name), str(refused)))
                continue
            if done is not None:
                logger.warning("%s: finished an interrupted fix of %d files", done.path, len(done.entries))
    return errors


def _journals_in(folder: Path) -> list[tuple[str, int]]:
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries if entry.name.startswith("." + OWNER_PREFIX)]
    except OSError:
        return []
    return [(name, int(found.group(1))) for name in sorted(names) if (found := _JOURNAL_NAME.match(name))]


def _relative_targets(folder: Path, run_paths: Sequence[str]) -> set[str]:
    root = os.path.realpath(folder)
    out = set()
    for path in run_paths:
        real = os.path.realpath(path)
        if real.startswith(root + os.sep):
            out.add(os.path.relpath(real, root))
    return out



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
