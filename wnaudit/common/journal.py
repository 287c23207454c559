"""The journal of a multi-file fix: the commit point that a later run may roll forward.

A fix that replaces several files stages each new file beside its target, then
writes a journal naming every (staged file, target) pair, then renames the
staged files over their targets.  After a crash past the journal, the next run
finishes the renames.  That makes the journal a powerful file: whoever can put
one in a directory could make wnaudit rename any file over any other.  A
downloaded model repository is such a directory.

So a journal is honoured only when it can only finish what wnaudit started:

- it names its *owner* (the file it sits beside, e.g. a shard index), and is
  read only under the owner's exact journal name;
- every target is one the caller says belongs to that owner (an index and its
  shards), named relative to the owner's directory: no absolute path, no
  ``..``, no NUL or control character, nothing that resolves outside;
- every staged name is exactly the one wnaudit gives that target for the
  writing process (``.TARGET.PID.wnaudit-staged`` beside the target);
- it records the SHA-256 of every staged file, and each staged file still
  present matches it (each one already renamed left that content at its target);
- the process that wrote it is no longer running.

Anything else raises :class:`JournalRefused` before a single file is touched;
the message is one line naming the journal and how to discard it
(:func:`discard_journal`).  This module knows nothing of checkpoints or source
files: callers say which targets an owner may have.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from .atomic import fsync_directory, process_alive

logger = logging.getLogger(__name__)

JOURNAL_SUFFIX = ".wnaudit-journal"
STAGED_SUFFIX = ".wnaudit-staged"
FORMAT = "wnaudit-journal"
VERSION = 2
#: A journal lists a few names and digests; anything bigger is not one of ours.
MAX_JOURNAL_BYTES = 16 * 1024 * 1024
#: How a user discards a journal wnaudit refuses; callers may replace it with their own wording.
DISCARD_HINT = "rerun with --discard-journal to delete it"

_HEX = frozenset("0123456789abcdef")


class JournalRefused(Exception):
    """A journal that wnaudit will not honour; nothing was touched.  The message is one line."""


@dataclass(frozen=True)
class JournalEntry:
    """One staged file and the target it replaces, both relative to the owner's directory."""

    staged: str
    target: str
    sha256: str


@dataclass(frozen=True)
class Journal:
    """A journal that passed every check of the module docstring."""

    path: Path
    owner: str
    pid: int
    entries: tuple[JournalEntry, ...]

    @property
    def directory(self) -> Path:
        return self.path.parent


def real_owner(owner: Path) -> Path:
    """The owner with symlinks resolved: the journal and staged files live beside the real file."""
    return Path(os.path.realpath(owner))


def journal_path(owner: Path) -> Path:
    """Where the journal of ``owner`` lives: ``.OWNER.wnaudit-journal`` beside the real owner."""
    real = real_owner(owner)
    return real.parent / f".{real.name}{JOURNAL_SUFFIX}"


def staged_name(target: str, pid: int) -> str:
    """The staged name wnaudit gives ``target`` (relative) for process ``pid``."""
    head, tail = os.path.split(target)
    return os.path.join(head, f".{tail}.{pid}{STAGED_SUFFIX}")


def staged_path(target: Path, pid: int | None = None) -> Path:
    """The staged file beside ``target`` (absolute) for this process, or ``pid``."""
    return target.parent / f".{target.name}.{os.getpid() if pid is None else pid}{STAGED_SUFFIX}"


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pending(owner: Path) -> Path | None:
    """The journal path if a journal (or anything under its name) is present."""
    path = journal_path(owner)
    return path if os.path.lexists(path) else None


# -- writing ---------------------------------------------------------------------------------


def write_journal(owner: Path, pairs: Sequence[tuple[Path, Path]]) -> Journal:
    """Record the staged set of this process (digests included); atomic and fsynced: the commit point.

    ``pairs`` are (staged file, target) paths; each staged file must carry the
    name :func:`staged_path` gives its target, inside the owner's directory.
    """
    path = journal_path(owner)
    directory = path.parent
    pid = os.getpid()
    entries = []
    for staged, target in pairs:
        relative_target = _relative(directory, Path(os.path.realpath(target)))
        relative_staged = _relative(directory, Path(os.path.realpath(staged.parent)) / staged.name)
        if relative_staged != staged_name(relative_target, pid):
            raise ValueError(f"{staged} is not the staged name of {target}")
        entries.append(JournalEntry(relative_staged, relative_target, file_digest(staged)))
    journal = Journal(path, real_owner(owner).name, pid, tuple(entries))
    document = {
        "format": FORMAT,
        "version": VERSION,
        "owner": journal.owner,
        "pid": pid,
        "files": [{"staged": e.staged, "target": e.target, "sha256": e.sha256} for e in entries],
    }
    temp = path.with_name(path.name + ".new")
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
    fsync_directory(directory)
    return journal


def _relative(directory: Path, path: Path) -> str:
    real_directory = os.path.realpath(directory)
    relative = os.path.relpath(path, real_directory)
    if relative == os.curdir or relative.startswith(os.pardir + os.sep) or relative == os.pardir:
        raise ValueError(f"{path} is not inside {directory}")
    return relative


# -- reading ---------------------------------------------------------------------------------


def read_journal(owner: Path, targets: Collection[str]) -> Journal | None:
    """The owner's journal if there is one and it passes every check; None if there is none.

    ``targets``: the names (relative to the owner's real directory) the
    owner's fix may replace.  Raises :class:`JournalRefused` otherwise.
    """
    path = journal_path(owner)
    if not os.path.lexists(path):
        return None
    document = _load_document(path)
    try:
        journal = _parse(path, document, {os.path.normpath(t) for t in targets}, real_owner(owner).name)
    except _Busy as busy:
        raise _refusal(path, str(busy), "wait for that run to finish") from None
    except _Bad as bad:
        raise _refusal(path, str(bad)) from None
    return journal


class _Bad(Exception):
    """What is wrong with a journal, for :class:`JournalRefused`."""


class _Busy(_Bad):
    """The journal's writer still runs: its fix is not interrupted, only in progress."""


def _refusal(path: Path, reason: str, hint: str = DISCARD_HINT) -> JournalRefused:
    return JournalRefused(f"refusing the journal {path.name!r} of an interrupted fix ({reason}); nothing changed; {hint}")


def _load_document(path: Path) -> Any:
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise _Bad("it is not a regular file")
        if info.st_size > MAX_JOURNAL_BYTES:
            raise _Bad(f"it is {info.st_size} bytes, too big for a journal")
        with open(path, "rb") as handle:
            return json.loads(handle.read(MAX_JOURNAL_BYTES + 1).decode("utf-8"))
    except _Bad as bad:
        raise _refusal(path, str(bad)) from None
    except OSError as error:
        raise _refusal(path, f"cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise _refusal(path, "it is not UTF-8") from None
    except json.JSONDecodeError as error:
        raise _refusal(path, f"it is not JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:
        raise _refusal(path, "its JSON is nested too deeply") from None


def _parse(path: Path, document: Any, targets: set[str], owner: str) -> Journal:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise _Bad("it is not a wnaudit journal")
    if document.get("version") != VERSION:
        raise _Bad(f"its version {document.get('version')!r} is not {VERSION}")
    if document.get("owner") != owner:
        raise _Bad(f"it belongs to {_shown(document.get('owner'))}, not {owner!r}")
    pid = document.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        raise _Bad(f"its process id {_shown(pid)} is not one")
    if pid != os.getpid() and process_alive(pid):
        raise _Busy(f"process {pid}, which wrote it, is still running")
    files = document.get("files")
    if not isinstance(files, list) or not files:
        raise _Bad("it lists no files")
    entries = tuple(_entry(path.parent, item, targets, pid) for item in files)
    if len({e.target for e in entries}) != len(entries):
        raise _Bad("it names a target twice")
    return Journal(path, owner, pid, entries)


def _entry(directory: Path, item: Any, targets: set[str], pid: int) -> JournalEntry:
    if not isinstance(item, dict) or set(item) != {"staged", "target", "sha256"}:
        raise _Bad("an entry is not a {staged, target, sha256} record")
    target = _checked_name(directory, item["target"], "target")
    if target not in targets:
        raise _Bad(f"it names the target {target!r}, which is not a file of this fix")
    staged = _checked_name(directory, item["staged"], "staged file")
    if staged != staged_name(target, pid):
        raise _Bad(f"it names {staged!r}, which is not the staged name of {target!r}")
    digest = item["sha256"]
    if not isinstance(digest, str) or len(digest) != 64 or not set(digest) <= _HEX:
        raise _Bad(f"the digest of {staged!r} is not a SHA-256")
    return JournalEntry(staged, target, digest)


def _checked_name(directory: Path, name: Any, what: str) -> str:
    """A relative name inside ``directory``: no NUL/control character, absolute path or ``..``."""
    if not isinstance(name, str) or not name:
        raise _Bad(f"a {what} name {_shown(name)} is not a file name")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise _Bad(f"a {what} name {name!r} holds a control character")
    if os.path.isabs(name) or name.startswith(("/", "\\")):
        raise _Bad(f"the {what} {name!r} is an absolute path")
    parts = name.replace("\\", "/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise _Bad(f"the {what} {name!r} is not a plain relative name")
    root = os.path.realpath(directory)
    real = os.path.realpath(os.path.join(root, os.path.dirname(name)))
    if os.path.commonpath([root, real]) != root:
        raise _Bad(f"the {what} {name!r} lies outside the journal's directory")
    return name


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- honouring -------------------------------------------------------------------------------


def check_files(journal: Journal) -> None:
    """Every staged file present is a regular file with its recorded digest; every absent one left it at its target."""
    try:
        for entry in journal.entries:
            staged = journal.directory / entry.staged
            target = journal.directory / entry.target
            if os.path.lexists(staged):
                _require_digest(staged, entry, "staged file")
            elif os.path.lexists(target):
                _require_digest(target, entry, "already renamed target")
            else:
                raise _Bad(f"neither {entry.staged!r} nor its target {entry.target!r} exists")
    except _Bad as bad:
        raise _refusal(journal.path, str(bad)) from None


def _require_digest(path: Path, entry: JournalEntry, what: str) -> None:
    name = os.path.basename(path)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise _Bad(f"the {what} {name!r} is not a regular file")
        digest = file_digest(path)
    except OSError as error:
        raise _Bad(f"cannot read the {what} {name!r}: {error.strerror or error}") from None
    if digest != entry.sha256:
        raise _Bad(f"the {what} {name!r} does not have the digest the journal records")


def apply_journal(journal: Journal, step: Callable[[str], None] | None = None) -> int:
    """Rename each staged file still present over its target, then remove the journal.

    Call :func:`check_files` first (:func:`finish` does).  ``step`` is called
    with ``"applied_one"`` after each rename and ``"applied"`` at the end (a
    test seam).  Returns how many files were renamed.
    """
    directories = {journal.directory}
    renamed = 0
    for entry in journal.entries:
        staged = journal.directory / entry.staged
        target = journal.directory / entry.target
        if os.path.lexists(staged):
            os.replace(staged, target)
            directories.add(target.parent)
            renamed += 1
            if step is not None:
                step("applied_one")
    for directory in directories:
        fsync_directory(directory)
    with contextlib.suppress(FileNotFoundError):
        journal.path.unlink()
    fsync_directory(journal.directory)
    if step is not None:
        step("applied")
    return renamed


def finish(owner: Path, targets: Collection[str]) -> Journal | None:
    """Honour the owner's journal if it passes every check (then it is gone); None if there was none."""
    journal = read_journal(owner, targets)
    if journal is None:
        return None
    check_files(journal)
    apply_journal(journal)
    logger.info("%s: finished an interrupted fix (%d files)", journal.path, len(journal.entries))
    return journal


def discard_journal(owner: Path) -> Path | None:
    """Delete the owner's journal, whatever it says; the files it names are left alone.

    Staged files left beside their targets are then what they are without a
    journal: leftovers of a fix that never committed.  Returns the removed path.
    """
    path = journal_path(owner)
    if not os.path.lexists(path):
        return None
    path.unlink()
    fsync_directory(path.parent)
    logger.info("%s: discarded the journal of an interrupted fix", path)  # the caller says it once, as a warning
    return path
