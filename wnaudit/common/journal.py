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
- every staged name is one wnaudit gives that target for the writing process
  (``.TARGET.PID.TOKEN.wnaudit-staged`` beside the target, TOKEN 16 random hex
  digits: nobody can plant a link at a name they cannot guess);
- it records the SHA-256 of every staged file, and each staged file still
  present matches it (each one already renamed left that content at its target);
- the process that wrote it is no longer running.

Anything else raises :class:`JournalRefused` before a single file is touched;
the message is one line naming the journal and how to discard it
(:func:`discard_journal`).  This module knows nothing of checkpoints or source
files: callers say which targets an owner may have.

Every file written here is created exclusively (``O_CREAT | O_EXCL |
O_NOFOLLOW``, mode 0o600) under an unpredictable name, so a link planted
beside the owner is never written through; :func:`commit` is the one
front-end of a multi-file fix (journal, then renames, signals held).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from . import interrupts
from .atomic import atomic_write_bytes, fsync_directory, process_alive, random_token

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
#: A staged file: ``.TARGET.PID.TOKEN.wnaudit-staged``, and ``.TARGET.PID.wnaudit-staged`` from before tokens.
_STAGED_FORMS = (
    re.compile(r"^\.(?P<tail>.+)\.(?P<pid>\d+)\.[0-9a-f]{16}" + re.escape(STAGED_SUFFIX) + "$", re.DOTALL),
    re.compile(r"^\.(?P<tail>.+)\.(?P<pid>\d+)" + re.escape(STAGED_SUFFIX) + "$", re.DOTALL),
)
#: A staged file older than this is a leftover even if its process id was reused by a live process.
STALE_SECONDS = 24 * 3600


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


def staged_name(target: str, pid: int, token: str | None = None) -> str:
    """A staged name wnaudit gives ``target`` (relative) for process ``pid``; ``token`` random unless given."""
    head, tail = os.path.split(target)
    return os.path.join(head, f".{tail}.{pid}.{random_token() if token is None else token}{STAGED_SUFFIX}")


def staged_path(target: Path, pid: int | None = None) -> Path:
    """A fresh staged file name beside ``target`` (absolute) for this process, or ``pid``: nobody can predict it."""
    return target.parent / staged_name(target.name, os.getpid() if pid is None else pid)


def is_staged_name(staged: str, target: str, pid: int) -> bool:
    """Whether ``staged`` (relative) is a name wnaudit gives ``target`` for process ``pid``, beside it."""
    head, tail = os.path.split(staged)
    return head == os.path.dirname(target) and any(
        (found := form.match(tail)) is not None and found["tail"] == os.path.basename(target) and found["pid"] == str(pid)
        for form in _STAGED_FORMS
    )


def staged_owner(name: str) -> int | None:
    """The process id in a staged file's name, or None when ``name`` is not one of wnaudit's staged files."""
    for form in _STAGED_FORMS:
        found = form.match(name)
        if found is not None:
            return int(found["pid"])
    return None


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
        if not is_staged_name(relative_staged, relative_target, pid):
            raise ValueError(f"{staged} is not the staged name of {target}")
        entries.append(JournalEntry(relative_staged, relative_target, file_digest(staged)))
    journal = Journal(path, real_owner(owner).name, pid, tuple(entries))
    _store(journal)
    return journal


def _store(journal: Journal) -> None:
    """Write the journal atomically: a nameless or random-named exclusive file, fsynced, renamed over its name."""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "owner": journal.owner,
        "pid": journal.pid,
        "files": [{"staged": e.staged, "target": e.target, "sha256": e.sha256} for e in journal.entries],
    }
    atomic_write_bytes(journal.path, json.dumps(document).encode("utf-8"), mode=0o600, follow_links=False)


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
    if not is_staged_name(staged, target, pid):
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


#: Whether an entry's target may still be replaced (the caller's check, right before its rename).
Replaceable = Callable[[JournalEntry], bool]


def apply_journal(journal: Journal, step: Callable[[str], None] | None = None, replaceable: Replaceable | None = None) -> int:
    """Rename each staged file still present over its target, then remove the journal.

    Call :func:`check_files` first (:func:`finish` does).  ``step`` is called
    with ``"applied_one"`` after each rename and ``"applied"`` at the end (a
    test seam).  ``replaceable`` is asked right before each rename; a target it
    refuses is left alone: the journal is rewritten without it first (so a
    crash can never roll the stale staged file forward), then its staged file
    is removed.  Returns how many files were renamed.
    """
    directories = {journal.directory}
    renamed = 0
    remaining = list(journal.entries)
    for entry in journal.entries:
        staged = journal.directory / entry.staged
        target = journal.directory / entry.target
        if not os.path.lexists(staged):
            continue
        if replaceable is not None and not replaceable(entry):
            remaining.remove(entry)
            if remaining:
                _store(Journal(journal.path, journal.owner, journal.pid, tuple(remaining)))
            else:  # nothing left to finish: a journal listing no file would only be refused
                journal.path.unlink()
            staged.unlink()
            continue
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


def commit(
    owner: Path, pairs: Sequence[tuple[Path, Path]], step: Callable[[str], None] | None = None,
    replaceable: Replaceable | None = None,
) -> list[Path]:
    """Journal the staged set (the commit point), then rename every staged file over its target.

    The one front-end of a multi-file fix.  SIGINT/SIGTERM are held from the
    journal to the last rename (:func:`wnaudit.common.interrupts.held`): a
    signal there lets the set finish, then ends the run, and the run's message
    names the files fixed (:func:`wnaudit.common.interrupts.note_fixed`).  A
    failure before the journal is in place removes every staged file.  Returns
    the targets replaced (``replaceable`` may leave some alone); ``step`` is
    called with ``"journaled"`` and as :func:`apply_journal` says (a test seam).
    """
    with interrupts.held():
        try:
            journal = write_journal(owner, pairs)
        except BaseException:
            remove_staged(pairs)
            raise
        if step is not None:
            step("journaled")
        left: list[JournalEntry] = []

        def still_replaceable(entry: JournalEntry) -> bool:
            keep = replaceable(entry)  # type: ignore[misc]  # only installed when given
            if not keep:
                left.append(entry)
            return keep

        apply_journal(journal, step, still_replaceable if replaceable is not None else None)
        replaced = [journal.directory / e.target for e in journal.entries if e not in left]
        interrupts.note_fixed([str(path) for path in replaced])
    return replaced


def remove_staged(pairs: Sequence[tuple[Path, Path]]) -> None:
    """Remove the staged files of a fix that never reached its commit point (the originals were never touched)."""
    for staged, _ in pairs:
        with contextlib.suppress(FileNotFoundError):
            staged.unlink()


def remove_dead_staged(directory: Path) -> int:
    """Remove the staged files a dead (or long gone) wnaudit run left in ``directory``; returns how many.

    A staged file is wnaudit's by its name (:func:`staged_owner`) and a leftover
    when its process no longer runs, or when it is older than :data:`STALE_SECONDS`
    (its process id reused).  Call it after honouring the directory's journals:
    while any journal is still there (refused, or another run's), its staged
    files are the journal's, and nothing is removed.
    """
    try:
        with os.scandir(directory) as found:
            entries = list(found)
    except OSError:
        return 0
    if any(entry.name.endswith(JOURNAL_SUFFIX) for entry in entries):
        return 0
    removed = 0
    now = time.time()
    for entry in entries:
        pid = staged_owner(entry.name)
        if pid is None or pid == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if process_alive(pid) and now - entry.stat(follow_symlinks=False).st_mtime < STALE_SECONDS:
                continue
            os.unlink(entry.path)
            removed += 1
            logger.info("removed %s, left by an interrupted wnaudit run", entry.path)
    return removed


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
