"""Cross-file answers kept between runs, reused only while everything they rest on still holds.

Some answers of a lint are costly because they read a whole project: which
linted files can hold a finding at all (the import scan of
``Workspace.may_have_findings``, and ``may_matter``), which project names a
file calls stand for torch APIs, and where a weight-normed class is served
(WN110's ``ServingIndex``).  They are functions of the project's code and
layout alone: what was used of the files read (their import statements and
flags, their own names, or their bytes as they are) and what the file system
said (is this a file, a directory, what a directory lists, which files the
project walk finds).  A run keeps those *observations* with its answers.

The next run asks every question again, re-reading each file and re-asking
the file system, before it reuses any answer; one difference and that part
of the record is dropped and built again.  A file whose bytes changed still
holds where only its imports and flags were used and those are the same (an
edit inside a function changes no import-scan answer).  A reused answer is
therefore the one the run would compute from the code it sees: the record
saves work and never changes a result (a hypothesis test compares both
through edits).  "Re-reading" a file is skipped when its ``os.stat`` is
exactly the one taken before its bytes were last read (size, mtime, ctime,
inode, device: git's index rule), unless it was racily clean then (changed
less than ``RACY_NS`` before): the kernel sets the ctime on every change and
no user call sets it back, so the same stat means the same bytes
(``stat_key``; ``tests/source/test_stat_keys.py``).  A file that changes while a run reads it can leave a record
that no longer matches the disk; the next check then fails and the record is
rebuilt.

The record is one JSON entry per set of source roots, the ``derived`` kind of
the fact store (``RECORD``; on disk in ``common/cache.py``: versioned by wnaudit's
code and the Python version, replaced whole, bounded with every other kind), and
WN110's verdicts in it are the store's ``SERVED`` facts (``facts/kinds.py``); a damaged one is
ignored, and a well-formed one is believed only after every observation holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from ..common.config import Config
from ..common.cache import Kind, Stamp, StatKey, digest_of, is_stat_key, key_of, same_stat, stat_key, take_stamp

from . import notebook
from .content import ContentFacts, defined_names, encode, facts_of
from .project import Project, kind_listed, list_kinds_and_links
from .reading import SourceError
from .serving.configs import config_targets, plain_targets
from .serving.config_files import config_files, read_config
from .serving.walk import Listings, project_file_names
from .serving.verdict import Verdict
from .facts.store import FactKind, FactStore

logger = logging.getLogger(__name__)

_FORMAT = 6


def read_source_file(path: Path | str) -> bytes | None:
    """A project file's bytes as dependencies are read (None: not a regular file, or unreadable).

    A notebook's are its view's (its code cells as one module): what the rules read, and what a record keeps.
    """
    try:
        data = Path(path).read_bytes() if os.path.isfile(path) else None
    except OSError as error:
        logger.debug("%s: not read as a dependency: %s", path, error)
        return None
    if data is None or not notebook.is_notebook(path):
        return data
    try:
        return notebook.notebook_view(data).text.encode("utf-8")
    except SourceError as error:
        logger.debug("%s: not read as a dependency: %s", path, error)
        return None


def _read_config_at(path: str) -> bytes | None:
    return read_config(Path(path))


def content_digest(data: bytes | None) -> str | None:
    return None if data is None else digest_of(data).hex()


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def facts_key(facts: ContentFacts | None) -> str | None:
    """What the import scan uses of a file's byte facts: its flags and import statements (hashed)."""
    return None if facts is None else _short_hash(json.dumps(encode(dataclasses.replace(facts, definitions=None))))


def definitions_key(names: frozenset[str]) -> str:
    return _short_hash(",".join(sorted(names)))


def stamp(path: str) -> Stamp | None:
    """The stamp of a regular file (None: anything else, or no stat)."""
    taken = take_stamp(path)
    return taken if taken is not None and stat.S_ISREG(taken.status.st_mode) else None


#: The digest field of a directory's stat key: its listing (``Observations.listings``) is the recorded one.
_LISTED = "listed"
_UNRECORDED: dict[str, int] = {}  # a directory the record did not list (told from an empty listing by identity)


class _Disk:
    """The files as a check reads them: each read and digested once, however many observations name it.

    ``known``: stat keys of earlier runs (path -> ``StatKey``).  A file whose
    stat is exactly the recorded one is not read: its digest is the recorded
    one (see ``stat_key``); any other is read, and keyed anew in ``fresh``.
    """

    def __init__(self, known: dict[str, StatKey] | None = None, stamps: dict[str, Stamp] | None = None) -> None:
        self.digests: dict[str, str | None] = {}
        self.known = known or {}
        self.fresh: dict[str, StatKey] = {}
        #: The recorded listings (``Observations.listings``): a held one answers for the entries it names.
        self.listings: dict[str, dict[str, int] | None] = {}
        self._held: dict[str, bool] = {}
        self._kinds: dict[str, str | None] = {}
        #: Directories as this check listed them: WN110's three walks of a project list each once.
        self.listed = Listings()
        #: ``stamps``: taken already, before anything was read (a run's inputs).
        self._stamps: dict[str, Stamp | None] = dict(stamps or {})

    def digest(self, path: str) -> str | None:
        if path not in self.digests:
            self.digests[path] = self._digest(path, read_source_file)
        return self.digests[path]

    def config_digest(self, path: str) -> str | None:
        """``digest`` of a shipped config as the flag reader reads it (``config_files.read_config``: bounded, regular)."""
        if path not in self.digests:
            self.digests[path] = self._digest(path, _read_config_at)
        return self.digests[path]

    def stat_of(self, path: str) -> os.stat_result:
        """``os.stat(path)``, the one this check took for the path if any (a walk's sizes are the digests' stats)."""
        taken = self.stamp(path)
        if taken is None:
            raise FileNotFoundError(path)
        return taken.status

    def stamp(self, path: str) -> Stamp | None:
        """``take_stamp(path)``, taken once per check (a run's later questions get the same one)."""
        if path not in self._stamps:
            self._stamps[path] = take_stamp(path)
        return self._stamps[path]

    def _digest(self, path: str, read: Callable[[str], bytes | None]) -> str | None:
        taken = self.stamp(path)
        if taken is not None and not stat.S_ISREG(taken.status.st_mode):
            taken = None  # not a regular file (``stamp``)
        if taken is None:
            return content_digest(read(path))
        entry = self.known.get(path)
        if entry is not None and same_stat(entry, taken.status):
            self.fresh[path] = entry
            return entry[5]  # type: ignore[no-any-return]
        digest = content_digest(read(path))
        key = stat_key(taken, digest) if digest is not None else None
        if key is not None:
            self.fresh[path] = key
        return digest

    def same_listing(self, path: str, seen: dict[str, int] | None) -> bool:
        """``list_kinds(path) == seen``; not listed again while the directory's stat is the one keyed with that listing.

        Adding, removing or renaming an entry sets a directory's mtime and ctime; a
        listing with a link is never keyed (a link's target changes without it).
        An empty listing (most are of directories an import looked for and did
        not find) is answered by the parent's listing where that one holds.
        """
        recorded = seen is self.listings.get(path)  # the record's own question, asked once whoever asks first
        if recorded and path in self._held:
            return self._held[path]
        if seen == {} and self._kind_in_parent(path) in ("", "file"):
            return True  # neither a directory nor a link to one: scandir fails, ``{}``
        held = self._listed_again(path, seen)
        if recorded:
            self._held[path] = held
        return held

    def is_file(self, path: str) -> bool:
        """``os.path.isfile(path)``, from the parent's listing where the record has one that holds (links followed both ways)."""
        kind = self._kind_in_parent(path)
        return os.path.isfile(path) if kind is None else kind == "file"

    def _kind_in_parent(self, path: str) -> str | None:
        """What ``path`` is by its parent's recorded listing, once that holds (``project.kind_listed``; None: not known so).

        Under a parent that is no directory (by its own parent's listing, and so on up) there is nothing: "".
        """
        if path in self._kinds:
            return self._kinds[path]
        parent, name = os.path.split(path)
        listing = self.listings.get(parent, _UNRECORDED)
        if parent == path or listing is None:
            kind = None
        elif listing is _UNRECORDED:  # known only when the parent is no directory
            kind = "" if self._kind_in_parent(parent) in ("", "file") else None
        else:
            kind = kind_listed(listing, name) if self.same_listing(parent, listing) else None
        self._kinds[path] = kind
        return kind

    def _listed_again(self, path: str, seen: dict[str, int] | None) -> bool:
        taken = take_stamp(path)
        entry = self.known.get(path)
        if taken is not None and entry is not None and entry[5] == _LISTED and same_stat(entry, taken.status):
            self.fresh[path] = entry
            return True
        listing, links = list_kinds_and_links(path)
        if listing != seen:
            return False
        key = stat_key(taken, _LISTED) if taken is not None and listing and not links else None
        if key is not None:
            self.fresh[path] = key
        return True

    def same_facts(self, path: str, seen: list) -> bool:
        """The bytes are the ones seen, or their flags and imports are (an edit inside a function changes nothing here)."""
        if self.digest(path) == seen[0]:
            return True
        data = read_source_file(path)
        return data is not None and facts_key(facts_of(data)) == seen[1]

    def same_definitions(self, path: str, seen: list) -> bool:
        if self.digest(path) == seen[0]:
            return True
        data = read_source_file(path)
        return data is not None and definitions_key(defined_names(data)) == seen[1]


#: The kinds of observation, in the order they are checked (cheap ones first); the second group is WN110's alone.
SCAN_KINDS = ("files", "dirs", "exists", "listings", "contents", "definitions", "reads")
SERVING_KINDS = ("serving_reads", "walks", "configs", "config_walks", "config_reads")
#: What whole runs' answers rest on besides (``run_answers``): the files any stage read, by the digest of their bytes.
RUN_KINDS = ("run_reads",)
ALL_KINDS = (*SCAN_KINDS, *SERVING_KINDS, *RUN_KINDS)


@dataclass
class Observations:
    """What the file system answered a run, keyed as the next run asks again."""

    files: dict[str, bool] = field(default_factory=dict)  # os.path.isfile
    dirs: dict[str, bool] = field(default_factory=dict)  # os.path.isdir
    exists: dict[str, bool] = field(default_factory=dict)  # os.path.exists
    listings: dict[str, dict[str, int] | None] = field(default_factory=dict)  # project.list_kinds
    #: path -> [digest, facts_key]: a file whose byte facts (flags, imports) were used.
    contents: dict[str, list] = field(default_factory=dict)
    #: path -> [digest, definitions_key]: a file whose own names were used.
    definitions: dict[str, list] = field(default_factory=dict)
    #: path -> digest: a file whose bytes were used as they are (its analysis, a name search).
    reads: dict[str, str | None] = field(default_factory=dict)
    #: The same, for WN110's index (its searches read every project file).
    serving_reads: dict[str, str | None] = field(default_factory=dict)
    walks: dict[str, list[str]] = field(default_factory=dict)  # "0"/"1" + root -> the project walk's files
    #: directory -> what its YAML configs build, by key path (``serving.configs.config_targets``, as lists).
    configs: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: project root -> the YAML/JSON configs under it that WN110's flag reader read (``config_files.config_files``).
    config_walks: dict[str, list[str]] = field(default_factory=dict)
    #: config -> the digest of its bytes as the flag reader reads them (``config_files.read_config``; None: not read).
    config_reads: dict[str, str | None] = field(default_factory=dict)
    #: path -> digest: every other file the run read (a whole run's answer rests on them as they are).
    run_reads: dict[str, str | None] = field(default_factory=dict)

    def part(self, kinds: tuple[str, ...]) -> dict[str, dict]:
        return {kind: getattr(self, kind) for kind in kinds}

    def size(self, kinds: tuple[str, ...]) -> int:
        return sum(len(getattr(self, kind)) for kind in kinds)

    def merge(self, other: "Observations", kinds: tuple[str, ...]) -> None:
        """Add ``other``'s observations of ``kinds`` that this run did not make itself."""
        for kind in kinds:
            mine = getattr(self, kind)
            for key, value in getattr(other, kind).items():
                mine.setdefault(key, value)

    def differs(self, other: "Observations", kinds: tuple[str, ...]) -> bool:
        """Whether a question both asked got another answer (a file changed while this run read it)."""
        for kind in kinds:
            mine, theirs = getattr(self, kind), getattr(other, kind)
            if any(theirs.get(key, value) != value for key, value in mine.items()):
                return True
        return False

    def drop_implied(self) -> None:
        """Drop the ``isfile`` and empty-listing observations a recorded parent listing answers (``_Disk``).

        The check asks those through the parent's listing anyway (which it checks
        too), so keeping them only makes the record bigger and its check longer.
        """
        listings = self.listings

        def implied(path: str) -> str | None:
            parent, name = os.path.split(path)
            listing = listings.get(parent)
            return kind_listed(listing, name) if listing else None

        def answered(path: str, is_file: bool) -> bool:  # the listing says what was seen (else both are checked)
            kind = implied(path)
            return kind is not None and (kind == "file") == is_file

        self.files = {path: seen for path, seen in self.files.items() if not answered(path, seen)}
        self.listings = {
            path: seen for path, seen in listings.items() if seen != {} or implied(path) not in ("", "file")
        }

    def still_hold(self, kinds: tuple[str, ...], disk: "_Disk | None" = None) -> bool:
        """Ask every question of ``kinds`` again; True when every answer is the one recorded."""
        disk = disk or _Disk()
        disk.listings = self.listings
        asks: dict[str, Callable[[str, object], bool]] = {
            "files": lambda key, seen: disk.is_file(key) == seen,
            "dirs": lambda key, seen: os.path.isdir(key) == seen,
            "exists": lambda key, seen: os.path.exists(key) == seen,
            "listings": disk.same_listing,  # type: ignore[dict-item]
            "contents": disk.same_facts,  # type: ignore[dict-item]
            "definitions": disk.same_definitions,  # type: ignore[dict-item]
            "reads": lambda key, seen: disk.digest(key) == seen,
            "serving_reads": lambda key, seen: disk.digest(key) == seen,
            "walks": lambda key, seen: list(project_file_names(
                str(Path(key[1:])), key[0] == "1", disk.stat_of, quiet=True, listings=disk.listed,
            )) == seen,
            "configs": lambda key, seen: plain_targets(config_targets(Path(key), disk.listed)) == seen,
            "config_walks": lambda key, seen: [str(path) for path in config_files(Path(key), disk.listed)] == seen,
            "config_reads": lambda key, seen: disk.config_digest(key) == seen,
            "run_reads": lambda key, seen: disk.digest(key) == seen,
        }
        try:
            for kind in kinds:
                ask = asks[kind]
                for key, value in getattr(self, kind).items():
                    if not ask(key, value):
                        logger.debug("derived answers: %s changed; the record is rebuilt", key)
                        return False
        except (OSError, ValueError, TypeError, IndexError) as error:  # a damaged record (a key that is no path)
            logger.debug("derived answers: ignoring a damaged record: %s", error)
            return False
        return True


class _Record(NamedTuple):
    observed: Observations
    scan: dict[str, bool]
    matters: dict[str, bool]
    aliases: dict[str, dict[str, frozenset[str]]]
    served: dict[str, Verdict | None]
    stats: dict[str, StatKey]
    runs: dict[str, dict]


def _parse_record(document: Any) -> _Record | None:
    """A stored record in the shape ``DerivedAnswers.save`` writes (its observations are checked on use)."""
    try:
        if document.get("format") != _FORMAT:
            return None
        stored = document["observed"]
        observed = Observations(**{kind: dict(stored[kind]) for kind in ALL_KINDS})
        scan = {str(k): bool(v) for k, v in document["scan"].items()}
        matters = {str(k): bool(v) for k, v in document["matters"].items()}
        aliases = {
            str(k): {str(name): frozenset(map(str, apis)) for name, apis in v.items()} for k, v in document["aliases"].items()
        }
        served = {str(k): None if v is None else Verdict(*v) for k, v in document["served"].items()}
        stats = {str(k): _stat_entry(v) for k, v in document["stats"].items()}
        runs = {str(k): v for k, v in document["runs"].items() if isinstance(v, dict)}  # each checked when asked
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        logger.debug("derived answers: ignoring a damaged record: %s", error)
        return None
    return _Record(observed, scan, matters, aliases, served, stats, runs)


def _stat_entry(value: Any) -> StatKey:
    """A stored ``StatKey``, checked for its shape (``ValueError`` otherwise: the record is not believed)."""
    if not is_stat_key(value):
        raise ValueError("not a stat key")
    return value


def _keys_worth_writing(stats: dict[str, StatKey], known: dict[str, StatKey]) -> bool:
    """Whether new stat keys alone are worth writing the record again: at least a sixteenth of them are new.

    A missing key costs a later check one read of that file (or listing of that
    directory); writing a tree's record again costs what hundreds of those do.
    A key is only ever a hint (``same_stat``), so one left unwritten never
    changes an answer.
    """
    news = sum(1 for path, key in stats.items() if known.get(path) != key)
    return news > 0 and news * 16 >= len(stats)


#: The whole runs' answers a record keeps (``run_answers``), the latest ones: a tree's, its packages', a hook's.
MAX_RUNS = 8

#: A run of at most this many files keeps a record of its own (``DerivedAnswers.open``'s ``scope``).
SMALL_RUN = 32

#: The record of one set of source roots (bounded with every other entry by the store).
RECORDS = Kind("derived", sharded=False, check=_parse_record)


def _record_key(key: str) -> str:
    return key


#: The record as a kind of the fact store: asked by its key (``DerivedAnswers.open``), never remembered apart from it.
RECORD: FactKind[str, Any] = FactKind("derived", _record_key, RECORDS, remember=False)


class DerivedAnswers:
    """The import scan's and WN110's answers of earlier runs, valid for this one (see the module docstring).

    Two parts, checked in turn: the scan's (its answers rest on the scan's
    observations) and WN110's (they rest on those and on its own: every project
    file's bytes and the project walks).  An edit of any file drops WN110's
    part; the scan's survives every edit that leaves the flags, imports and
    names of the files it read as they were.
    """

    def __init__(self, store: FactStore | None, key: str) -> None:
        self._store = store
        self._key = key
        #: Observations the reused answers rest on (checked); this run's own are added at ``save``.
        self.observed = Observations()
        #: Linted file -> whether it can hold a finding.
        self.scan: dict[str, bool] = {}
        #: "file\0name" -> whether that attribute of the module can carry a weight-norm fact (``may_matter``).
        self.matters: dict[str, bool] = {}
        #: "file\0digest of the names it calls" -> those that stand for torch APIs (``Workspace.aliases``).
        self.aliases: dict[str, dict[str, frozenset[str]]] = {}
        #: "file\0unit\0line" -> WN110's verdict (None: not served unfolded).
        self.served: dict[str, Verdict | None] = {}
        #: path -> the digest of its bytes as the check read them (for files it read).
        self.digests: dict[str, str | None] = {}
        #: Run key -> a whole run's answer (``run_answers``): loaded only when every observation holds.
        self.runs: dict[str, dict] = {}
        self._runs_changed = False
        self._kept_now: str | None = None
        self._disk = _Disk()
        #: path -> the stat key of its bytes: recorded by earlier runs, and this run's (``_Disk``, ``note``).
        self._stats_known: dict[str, StatKey] = {}
        self._stats: dict[str, StatKey] = {}
        self._loaded = self._sizes()

    @classmethod
    def open(
        cls, store: FactStore | None, roots: Iterable[Path], scope: Iterable[str] = (), settings: Iterable[str] = (),
        stamps: dict[str, Stamp] | None = None,
    ) -> "DerivedAnswers":
        """The record for these source roots (and ``scope``), checked against the disk (empty when absent, damaged or stale).

        ``scope``: where a small run's files live (``SMALL_RUN``); such a run keeps a record of its own
        (checking a whole tree's record cost a one-file run more than the answers it keeps save).
        ``settings``: the configuration the answers depend on (excludes, declared serving entries).
        ``stamps``: files' stamps taken before the run read anything (its inputs'), by absolute path: not taken again.
        """
        key = key_of("derived-answers", _FORMAT, [str(r) for r in roots], sorted(scope), list(settings))
        answers = cls(store, key)
        if store is not None:
            answers._load(store.known(RECORD, key), stamps)
        return answers

    def _load(self, record: "_Record | None", stamps: dict[str, Stamp] | None = None) -> None:
        if record is None:
            return
        observed, scan, matters, aliases, served, stats, runs = record
        disk = self._disk = _Disk(stats, stamps)
        self._stats_known, self._stats = stats, disk.fresh  # a digest memo: sound whether or not the answers hold
        if not observed.still_hold(SCAN_KINDS, disk):
            return
        self.observed, self.scan, self.matters, self.aliases = observed, scan, matters, aliases
        self.digests = disk.digests
        if observed.still_hold(SERVING_KINDS, disk):
            self.served = served
            if observed.still_hold(RUN_KINDS, disk):
                self.runs = runs
            else:
                observed.run_reads.clear()
        else:
            for kind in (*SERVING_KINDS, *RUN_KINDS):
                getattr(observed, kind).clear()
        self._loaded = self._sizes()

    def _sizes(self) -> tuple[int, ...]:
        return (
            len(self.scan), len(self.matters), len(self.aliases), len(self.served),
            self.observed.size(SCAN_KINDS), self.observed.size(SERVING_KINDS),
        )

    def rekeyed(self) -> bool:
        """Whether the check keyed anew enough files (touched, same bytes) that writing the record pays."""
        return _keys_worth_writing(self._stats, self._stats_known)

    def stamp(self, path: str) -> Stamp | None:
        """The stamp of ``path`` (absolute, normalised): the record's check took most a run asks for."""
        return self._disk.stamp(path)

    def kept_run(self, key: str) -> dict | None:
        """The answer a whole run with this key kept (``run_answers``; checked there against its inputs)."""
        return self.runs.get(key)

    def keep_run(self, key: str, answer: dict) -> None:
        """Keep a whole run's answer with the record (written by ``save``); the oldest beyond ``MAX_RUNS`` go."""
        self.runs.pop(key, None)
        self.runs[key] = answer
        self._kept_now = key
        while len(self.runs) > MAX_RUNS:
            del self.runs[next(iter(self.runs))]
        self._runs_changed = True

    def note(self, path: str, taken: Stamp | None, digest: bytes) -> None:
        """This run read ``path`` (stamped before the read) and its bytes had ``digest``: keep its stat key."""
        key = stat_key(taken, digest.hex()) if taken is not None else None
        if key is not None:
            self._stats[path] = key

    def note_listings(self, stamps: dict[str, Stamp]) -> None:
        """This run listed these directories (each stamped before, none holding a link): keep their stat keys."""
        for path, taken in stamps.items():
            key = stat_key(taken, _LISTED)
            if key is not None:
                self._stats[path] = key

    def _stat_keys(self, observed: Observations) -> dict[str, StatKey]:
        """The stat keys worth keeping: of the files the observations name (this run's first)."""
        named = set().union(
            *(getattr(observed, kind) for kind in (
                "listings", "contents", "definitions", "reads", "serving_reads", "config_reads", "run_reads",
            ))
        )
        merged = {**self._stats_known, **self._stats}
        return {path: merged[path] for path in sorted(named & merged.keys())}

    def save_rekeyed(self) -> None:
        """After a kept answer: write the stat keys the check took anew (``rekeyed``); the run observed nothing else."""
        self.save(Observations())

    def save(self, observed: Observations) -> None:
        """Store the answers with every observation they rest on (only when this run added any).

        Where this run's observations contradict the loaded ones (a file changed after the check), the record
        keeps this run's, and the earlier runs' whole answers, which rested on the others, are dropped.
        """
        if self.runs.keys() - {self._kept_now} and observed.differs(self.observed, ALL_KINDS):
            self.runs = {key: answer for key, answer in self.runs.items() if key == self._kept_now}
            self._runs_changed = True
        observed.merge(self.observed, ALL_KINDS)
        observed.drop_implied()
        self.observed = observed
        stats = self._stat_keys(observed)
        unchanged = self._sizes() == self._loaded and not self._runs_changed
        if self._store is None or not self._store.persistent or (unchanged and not _keys_worth_writing(stats, self._stats_known)):
            return
        document = {
            "stats": stats,
            "format": _FORMAT,
            "observed": observed.part(ALL_KINDS),
            "scan": self.scan,
            "matters": self.matters,
            "aliases": {k: {name: sorted(apis) for name, apis in v.items()} for k, v in self.aliases.items()},
            "served": {k: None if v is None else list(v) for k, v in self.served.items()},
            "runs": self.runs,
        }
        self._store.put(RECORD, self._key, document)


def open_for_run(
    config: Config, store: FactStore, files: Sequence[Path], stamps: dict[str, Stamp] | None = None,
) -> DerivedAnswers | None:
    """The record a lint run of ``files`` with ``config`` reads and keeps (None: the store keeps nothing between runs).

    Opened before the run's workspace: a warm run that gives a kept answer (``run_answers``) builds none.
    ``stamps``: the inputs' stamps, by resolved path (its check does not take them again).
    """
    if not store.persistent:
        return None
    # WN110's kept verdicts rest on them too (an exclude is also matched from the working directory).
    kept_on = [*config.exclusions, *config.serving, os.getcwd()]
    roots = Project(config.source_roots).roots
    return DerivedAnswers.open(store, roots, _scope(files) if len(files) <= SMALL_RUN else [], kept_on, stamps)


def _scope(files: Sequence[Path]) -> list[str]:
    """Where a small run's files live: the directories above their top-level packages (its record's key).

    Runs on files of the same packages share a record that grows to what they
    read, never a whole tree's; any key is sound (a record is checked before use).
    """
    tops = set()
    for file in files:
        directory = os.path.dirname(os.path.abspath(file))
        while os.path.isfile(os.path.join(directory, "__init__.py")):
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        tops.add(directory)
    return sorted(tops)
