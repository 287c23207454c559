"""All-or-nothing replacement of several files (the shards and index of one model).

A sharded fix changes several files; replacing them one by one would leave,
after a failure on the second (disk full, quota, a kill), a first shard folded
and an index that still names the unfolded keys; a weight whose g and v lived
in different shards is then lost.  So a fix of several files runs in phases:

1. **stage**: every new file is written beside its target under a staged name
   (``.NAME.PID.TOKEN.wnaudit-staged``, created exclusively under a random
   token), fsynced and verified.  A failure removes
   every staged file; nothing else was touched.
2. **commit**: the journal ``.INDEX.wnaudit-journal`` beside the index lists
   each staged file, its target and the staged file's SHA-256
   (:mod:`wnaudit.common.journal`); it is written atomically and fsynced.
   This is the commit point.
3. **apply**: each staged file is renamed over its target (SIGINT/SIGTERM are
   held back meanwhile, :func:`wnaudit.common.interrupts.held`), then the journal is removed.

A crash after the commit point leaves the journal: the next run (:func:`recover`)
renames the staged files still present and removes the journal (roll forward,
safe because every staged file was verified before the commit).  A journal is
honoured only if it can only finish what wnaudit started: it names this index,
targets only the index and its shards, under their exact staged names, with
matching digests (see :mod:`wnaudit.common.journal`); any other journal is
refused, touching nothing, and ``--discard-journal`` deletes it.  A crash before
it leaves staged files without a journal: the next run removes those a dead
process left (roll back; the originals were never touched).

``_fault`` is a test seam, called with each name in :data:`STEPS`.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Collection, Iterator

from ..common import journal as journals
from ..common.atomic import Verifier, resolve_target, staged_writer
from .errors import CheckpointError

logger = logging.getLogger(__name__)

STAGED_SUFFIX = journals.STAGED_SUFFIX
JOURNAL_SUFFIX = journals.JOURNAL_SUFFIX
STEPS = ("staged", "journaled", "applied_one", "applied")


def _no_fault(step: str) -> None:
    return None


_fault: Callable[[str], None] = _no_fault


def journal_path(index: Path) -> Path:
    return journals.journal_path(index)


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
        staged = journals.staged_path(real)
        with staged_writer(real, staged, verify=verify) as handle:
            yield handle
        self.staged.append((staged, real))
        _fault("staged")

    def discard(self) -> None:
        """Remove every staged file (the originals were never touched)."""
        journals.remove_staged(self.staged)
        self.staged.clear()

    def commit(self) -> None:
        """Journal the set, then rename every staged file over its target; signals wait till the end."""
        journals.commit(self.index, self.staged, _fault)
        self.staged.clear()


def pending_journal(index: Path) -> Path | None:
    return journals.pending(Path(index))


def check_pending(index: Path, targets: Collection[str]) -> None:
    """Raise the one line an audit gives for a checkpoint a fix left half-replaced (or a journal we refuse)."""
    journal = _honourable(index, targets)
    if journal is not None:
        raise CheckpointError(
            f"an interrupted --fix left this checkpoint half-replaced (journal {journal.path.name}); "
            "run wnaudit --fix on it to finish the fix, or --discard-journal to drop the journal"
        )


def _honourable(index: Path, targets: Collection[str]) -> journals.Journal | None:
    try:
        journal = journals.read_journal(index, targets)
        if journal is not None:
            journals.check_files(journal)
    except journals.JournalRefused as refused:
        raise CheckpointError(str(refused)) from None
    return journal


def recover(index: Path, targets: Collection[str]) -> str | None:
    """Finish (an honourable journal present) or roll back (staged files of dead runs) an interrupted fix.

    ``targets``: the files of this checkpoint (the index and its shards), named
    relative to the index's real directory.  Returns what was done, for the
    log, or None when there was nothing to do.
    """
    index = Path(index)
    done: str | None = None
    journal = _honourable(index, targets)
    if journal is not None:
        journals.apply_journal(journal)
        done = f"finished an interrupted fix ({len(journal.entries)} files)"
    removed = journals.remove_dead_staged(journals.real_owner(index).parent)
    if removed and done is None:
        done = f"rolled back an interrupted fix (removed {removed} staged files)"
    if done is not None:
        logger.warning("%s: %s", index, done)
    return done


def discard(index: Path) -> str | None:
    """``--discard-journal``: delete the index's journal unread, then roll back staged files of dead runs."""
    removed_journal = journals.discard_journal(Path(index))
    removed = journals.remove_dead_staged(journals.real_owner(Path(index)).parent)
    if removed_journal is None and not removed:
        return None
    done = f"discarded the journal {removed_journal.name}" if removed_journal is not None else "no journal to discard"
    done += f" and removed {removed} staged files" if removed else ""
    logger.warning("%s: %s", index, done)
    return done
