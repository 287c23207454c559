"""The journal check: what an interrupted multi-file ``--fix`` left in the run's tree, finished or reported.

A crash after a fix's commit point leaves a journal and staged files
(``apply``'s transaction); the next ``--fix`` finishes it (``recover``) and an
audit meanwhile says which files are half-fixed (``pending``).  Every run
asks, before it reads an input, so this module needs none of the stages:
a warm run that gives a kept answer imports it alone.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Sequence

from ...common import journal
from ...common.atomic import process_alive
from ...common.findings import InputError
from ..project import has_parent_part, real_directory

logger = logging.getLogger(__name__)

#: The journal's owner name (a name only: no such file exists) in the directory of the run's files.
OWNER_PREFIX = ".wnaudit-source-fix-"
_JOURNAL_NAME = re.compile(r"^\." + re.escape(OWNER_PREFIX) + r"(\d+)(?:-[0-9a-f]{16})?" + re.escape(journal.JOURNAL_SUFFIX) + r"$")


def journal_directory(paths: Sequence[str]) -> Path:
    """Where a run over ``paths`` keeps its journal: the deepest directory holding every one (symlinks resolved)."""
    return Path(os.path.commonpath(_real_directories(paths)))


def _real_directories(paths: Sequence[str]) -> list[str]:
    """The real directory of each file, once each: a directory is resolved once, a symlinked file on its own.

    A path with a ``..`` part is resolved whole, as the kernel does (``link/..`` is the link target's parent,
    not the link's directory): where the file is, and where the run's identities (``resolved_text``) say it is.
    """
    resolved: dict[str, str] = {}
    out: dict[str, None] = {}
    for path in paths:
        if os.path.islink(path) or has_parent_part(path):
            out[os.path.dirname(os.path.realpath(path))] = None
            continue
        out[real_directory(os.path.dirname(os.path.abspath(path)), resolved)] = None  # one lstat per new directory
    return list(out)


def recover(run_paths: Sequence[str], discard: bool = False) -> list[InputError]:
    """Finish the fixes an interrupted ``--fix`` committed over these files, then remove dead runs' staged files.

    Journals are looked for only inside the run's tree (:func:`tree_folders`):
    one above it (a shared ``/tmp``, a parent checkout) is neither honoured nor
    blocking.  One whose writer still runs is another fix in progress, and left
    to it; one refused is one line each (``discard``: deleted instead).
    """
    errors: list[InputError] = []
    folders = tree_folders(run_paths)
    for folder in folders:
        for name, pid in _journals_in(folder):
            if pid != os.getpid() and process_alive(pid):
                continue
            if discard:
                journal.discard_journal(folder / _owner_name(name))
                logger.warning("%s: discarded the journal of an interrupted fix", folder / name)
                continue
            try:
                done = journal.finish(folder / _owner_name(name), _relative_targets(folder, run_paths))
            except journal.JournalRefused as refused:
                errors.append(InputError(str(folder / name), str(refused)))
                continue
            if done is not None:
                logger.warning("%s: finished an interrupted fix of %d files", done.path, len(done.entries))
    if not errors:  # a refused journal's staged files are kept for it
        for folder in folders:
            journal.remove_dead_staged(folder)
    return errors


def pending(run_paths: Sequence[str], resolved: Sequence[str] | None = None) -> list[InputError]:
    """For an audit: one line per journal an interrupted ``--fix`` left in the run's tree (files half-fixed).

    ``resolved``: where each run path resolves (links followed), when the run knows already (``tree_folders``).
    """
    errors: list[InputError] = []
    for folder in tree_folders(run_paths, resolved):
        for name, pid in _journals_in(folder):
            if process_alive(pid):
                continue  # a fix in progress, not an interrupted one
            try:
                found = journal.read_journal(folder / _owner_name(name), _relative_targets(folder, run_paths))
                if found is not None:
                    journal.check_files(found)
            except journal.JournalRefused as refused:
                errors.append(InputError(str(folder / name), str(refused)))
                continue
            if found is not None:
                errors.append(InputError(str(folder / name), (
                    f"an interrupted --fix left {len(found.entries)} files half-fixed; run wnaudit --fix on them to "
                    "finish the fix, or --discard-journal to drop the journal"
                )))
    return errors


def tree_folders(run_paths: Sequence[str], resolved: Sequence[str] | None = None) -> list[Path]:
    """The directories of the run's files and those between them and the deepest directory holding them all.

    A run's journal lives in that deepest directory, its staged files beside
    their targets: these are the only places a run looks for what an
    interrupted one left, never above.  ``resolved``: where each run path
    resolves, when known (a file's real directory is the directory of that path).
    """
    if not run_paths:
        return []
    directories = list(dict.fromkeys(map(os.path.dirname, resolved))) if resolved is not None else _real_directories(run_paths)
    top = Path(os.path.commonpath(directories))
    folders: dict[Path, None] = {top: None}
    for directory in directories:
        folder = Path(directory)
        while folder not in folders and folder != folder.parent:
            folders[folder] = None
            folder = folder.parent
    return list(folders)


def _owner_name(journal_name: str) -> str:
    return journal_name[1 : -len(journal.JOURNAL_SUFFIX)]


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
