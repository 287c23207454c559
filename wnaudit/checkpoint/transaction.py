"""All-or-nothing replacement of several files (the shards and index of one model).

A sharded fix changes several files; replacing them one by one would leave,
after a failure on the second (disk full, quota, a kill), a first shard folded
and an index that still names the unfolded keys; a weight whose g and v lived
in different shards is then lost.  So a fix of several files runs in phases:

1. **stage**: every new file is written beside its target under a staged name
   (``.NAME.PID.wnaudit-staged``), fsynced and verified.  A failure removes
   every staged file; nothing else was touched.
2. **commit**: the journal ``.INDEX.wnaudit-journal`` beside the index lists
   each staged file and its target; it is written atomically and fsynced.
   This is the commit point.
3. **apply**: each staged file is renamed over its target (SIGINT/SIGTERM are
   held back meanwhile, :func:`wnaudit.common.interrupts.held`), then the journal is removed.

A crash after the commit point leaves the journal: the next run (:func:`recover`)
renames the staged files still present and removes the journal (roll forward,
safe because every staged file was verified before the commit).  A crash before
it leaves staged files without a journal: the next run removes those a dead
process left (roll back; the originals were never touched).

``_fault`` is a test seam, called with each name in :data:`STEPS`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from ..common.interrupts import held
from ..common.atomic import Verifier, fsync_directory, process_alive, resolve_target, staged_writer
from .errors import CheckpointError

logger = logging.getLogger(__name__)

STAGED_SUFFIX = ".wnaudit-staged"
JOURNAL_SUFFIX = ".wnaudit-journal"
JOURNAL_VERSION = 1
STEPS = ("staged", "journaled", "applied_one", "applied")


def _no_fault(step: str) -> None:
    return None


_fault: Callable[[str], None] = _no_fault


def journal_path(index: Path) -> Path:
    return index.parent / f".{index.name}{JOURNAL_SUFFIX}"


@dataclass
class Transaction:
    """The staged replacements of one multi-file fix; see the module docstring."""

    index: Path
    staged: list[tuple[Path, Path]] = field(default_factory=list)  # (staged file, real target)

    @contextlib.contextmanager
    def stage(self, target: Path, verify: Verifier | None = None) -> Iterator[BinaryIO]:
        """Write the new content of ``target``; it replaces the target only at :meth:`commit`."""
        real = resolve_target(target)
        if any(real == known for _, known in self.staged):
            raise CheckpointError(f"{target.name} would be written twice in one fix")
        staged = real.parent / f".{real.name}.{os.getpid()}{STAGED_SUFFIX}"
        with staged_writer(real, staged, verify=verify) as handle:
            yield handle
        self.staged.append((staged, real))
        _fault("staged")

    def discard(self) -> None:
        """Remove every staged file (the originals were never touched)."""
        for staged, _ in self.staged:
            with contextlib.suppress(FileNotFoundError):
                staged.unlink()
        self.staged.clear()

    def commit(self) -> None:
        """Journal the set, then rename every staged file over its target; signals wait till the end."""
        with held():  # SIGINT/SIGTERM wait until the set is complete
            journal = journal_path(self.index)
            document = {
                "version": JOURNAL_VERSION,
                "files": [[os.path.relpath(s, journal.parent), os.path.relpath(t, journal.parent)] for s, t in self.staged],
            }
            temp = journal.with_name(journal.name + ".new")
            with open(temp, "w", encoding="utf-8") as handle:
                json.dump(document, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, journal)
            fsync_directory(journal.parent)
            _fault("journaled")
            _apply(journal, self.staged)
            self.staged.clear()


def _apply(journal: Path, pairs: list[tuple[Path, Path]]) -> None:
    directories = {journal.parent}
    for staged, target in pairs:
        if staged.exists():
            os.replace(staged, target)
            directories.add(target.parent)
            _fault("applied_one")
    for directory in directories:
        fsync_directory(directory)
    journal.unlink()
    fsync_directory(journal.parent)
    _fault("applied")


def pending_journal(index: Path) -> Path | None:
    journal = journal_path(Path(index))
    return journal if journal.exists() else None


def recover(index: Path) -> str | None:
    """Finish (journal present) or roll back (staged files of dead runs) an interrupted fix.

    Returns what was done, for the log, or None when there was nothing to do.
    """
    index = Path(index)
    journal = journal_path(index)
    done: str | None = None
    if journal.exists():
        pairs = _read_journal(journal)
        _apply(journal, pairs)
        done = f"finished an interrupted fix ({len(pairs)} files)"
    removed = _remove_dead_staged(index.parent)
    if removed and done is None:
        done = f"rolled back an interrupted fix (removed {removed} staged files)"
    if done is not None:
        logger.warning("%s: %s", index, done)
    return done


def _read_journal(journal: Path) -> list[tuple[Path, Path]]:
    try:
        document = json.loads(journal.read_text(encoding="utf-8"))
        if document["version"] != JOURNAL_VERSION:
            raise ValueError(f"version {document['version']!r}")
        pairs = [(journal.parent / staged, journal.parent / target) for staged, target in document["files"]]
    except Exception as error:  # noqa: BLE001 - a journal we cannot read: say so, touch nothing
        raise CheckpointError(f"cannot read the journal {journal.name} of an interrupted fix ({error}); nothing changed") from error
    root = Path(os.path.realpath(journal.parent))
    for staged, target in pairs:
        for path in (staged, target):
            if os.path.commonpath([root, os.path.realpath(path)]) != str(root):
                raise CheckpointError(f"the journal {journal.name} names {path}, outside its directory; nothing changed")
        if not staged.name.endswith(STAGED_SUFFIX):
            raise CheckpointError(f"the journal {journal.name} names {staged.name}, which is not a staged file")
    return pairs


def _remove_dead_staged(directory: Path) -> int:
    removed = 0
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            if not (name.startswith(".") and name.endswith(STAGED_SUFFIX)):
                continue
            pid = name[: -len(STAGED_SUFFIX)].rpartition(".")[2]
            if pid.isdigit() and not process_alive(int(pid)):
                with contextlib.suppress(OSError):
                    (directory / name).unlink()
                    removed += 1
    return removed
