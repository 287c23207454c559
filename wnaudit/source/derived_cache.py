"""Cross-file answers kept between runs, reused only while everything they rest on still holds.

Two answers of a lint are costly because they read a whole project: which
linted files can hold a finding at all (the import scan of
``Workspace.may_have_findings``) and where a weight-normed class is served
(WN110's ``ServingIndex``).  Both are functions of the project's code and
layout alone: the bytes of the files read, and what the file system said
(is this a file, a directory, what a directory lists, which files the
project walk finds).  A run keeps those *observations* with its answers.

The next run checks every observation first, re-reading and digesting each
file and re-asking each question of the file system, before it reuses any
answer.  One difference and the whole record is dropped and built again.  A
reused answer is therefore the answer the run would compute from the code it
sees: the record saves work and never changes a result (a test compares
both on every edit).  A file that changes while a run reads it can leave a
record that no longer matches the disk; the next check then fails and the
record is rebuilt.

The record is one JSON document per set of source roots, stored beside the
summaries (same directory, versioned by wnaudit's code and the Python
version), replaced whole, bounded with them; a damaged one is ignored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

from .project import list_kinds
from .serving.walk import project_files
from .summary_cache import SummaryCache
from .syntax_cache import digest_of

logger = logging.getLogger(__name__)

_FORMAT = 1


def read_source_file(path: Path | str) -> bytes | None:
    """A project file's bytes as dependencies are read (None: not a regular file, or unreadable)."""
    try:
        return Path(path).read_bytes() if os.path.isfile(path) else None
    except OSError as error:
        logger.debug("%s: not read as a dependency: %s", path, error)
        return None


def content_digest(data: bytes | None) -> str | None:
    return None if data is None else digest_of(data).hex()


def _read_digest(path: str) -> str | None:
    return content_digest(read_source_file(path))


class Verdict(NamedTuple):
    """WN110's answer for one application: where the model is served unfolded (all a finding needs)."""

    file: str
    line: int
    what: str
    target: str
    kind: str
    uncalled: str
    root: str


@dataclass
class Observations:
    """What the file system answered a run, keyed as the next run asks again."""

    reads: dict[str, str | None] = field(default_factory=dict)  # path -> hex digest of its bytes
    files: dict[str, bool] = field(default_factory=dict)  # os.path.isfile
    dirs: dict[str, bool] = field(default_factory=dict)  # os.path.isdir
    exists: dict[str, bool] = field(default_factory=dict)  # os.path.exists
    listings: dict[str, dict[str, int] | None] = field(default_factory=dict)  # project.list_kinds
    walks: dict[str, list[str]] = field(default_factory=dict)  # "0"/"1" + root -> the project walk's files

    def size(self) -> int:
        return sum(len(part) for part in self._parts())

    def merge(self, other: "Observations") -> None:
        for mine, theirs in zip(self._parts(), other._parts()):
            for key, value in theirs.items():
                mine.setdefault(key, value)  # type: ignore[attr-defined]

    def _parts(self) -> tuple[dict, ...]:
        return (self.reads, self.files, self.dirs, self.exists, self.listings, self.walks)

    def still_hold(self) -> bool:
        """Ask every question again; True when every answer is the one recorded."""
        checks: list[tuple[dict, Callable[[str], object]]] = [
            (self.files, os.path.isfile), (self.dirs, os.path.isdir), (self.exists, os.path.exists),
            (self.listings, list_kinds), (self.reads, _read_digest),
            (self.walks, lambda key: [str(p) for p in project_files(Path(key[1:]), key[0] == "1")]),
        ]
        try:
            for recorded, ask in checks:
                for key, value in recorded.items():
                    if ask(key) != value:
                        logger.debug("derived answers: %s changed; the record is rebuilt", key)
                        return False
        except (OSError, ValueError, TypeError, IndexError) as error:  # a damaged record (a key that is no path)
            logger.debug("derived answers: ignoring a damaged record: %s", error)
            return False
        return True


class DerivedAnswers:
    """The import scan's and WN110's answers of earlier runs, valid for this one (see the module docstring)."""

    def __init__(self, cache: SummaryCache | None, key: str) -> None:
        self._cache = cache
        self._key = key
        #: Observations the reused answers rest on (checked); this run's own are added at ``save``.
        self.observed = Observations()
        #: Linted file -> whether it can hold a finding.
        self.scan: dict[str, bool] = {}
        #: "file\\0unit\\0line" -> WN110's verdict (None: not served unfolded).
        self.served: dict[str, Verdict | None] = {}
        #: "file\0name" -> whether that attribute of the module can carry a weight-norm fact (``may_matter``).
        self.matters: dict[str, bool] = {}
        #: "file\0digest of its content" -> the project names it calls that stand for torch APIs.
        self.aliases: dict[str, dict[str, frozenset[str]]] = {}
        self._loaded = (0, 0)

    @classmethod
    def open(cls, cache: SummaryCache | None, roots: Iterable[Path]) -> "DerivedAnswers":
        """The record for these source roots, checked against the disk (empty when absent, damaged or stale)."""
        parts = ["derived-answers", _FORMAT, [str(r) for r in roots]]
        key = hashlib.sha256(json.dumps(parts).encode("utf-8", "surrogatepass")).hexdigest()
        answers = cls(cache, key)
        if cache is not None:
            answers._load(cache.get_bytes(key))
        return answers

    def _load(self, raw: bytes | None) -> None:
        if raw is None:
            return
        try:
            document = json.loads(raw)
            if document.get("format") != _FORMAT:
                return
            observed = Observations(**{name: dict(document["observed"][name]) for name in (
                "reads", "files", "dirs", "exists", "listings", "walks")})
            scan = {str(k): bool(v) for k, v in document["scan"].items()}
            matters = {str(k): bool(v) for k, v in document["matters"].items()}
            served = {str(k): None if v is None else Verdict(*v) for k, v in document["served"].items()}
            aliases = {
                str(k): {str(name): frozenset(map(str, apis)) for name, apis in v.items()} for k, v in document["aliases"].items()
            }
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            logger.debug("derived answers: ignoring a damaged record: %s", error)
            return
        if not observed.still_hold():
            return
        self.observed, self.scan, self.matters, self.served, self.aliases = observed, scan, matters, served, aliases
        self._loaded = (self._answers(), observed.size())

    def _answers(self) -> int:
        return len(self.scan) + len(self.matters) + len(self.served) + len(self.aliases)

    @staticmethod
    def served_key(file: str, unit: str, line: int) -> str:
        return f"{file}\0{unit}\0{line}"

    def save(self, observed: Observations) -> None:
        """Store the answers with every observation they rest on (only when this run added any)."""
        observed.merge(self.observed)
        if self._cache is None or (self._answers(), observed.size()) == self._loaded:
            return
        document = {
            "format": _FORMAT,
            "observed": {name: getattr(observed, name) for name in ("reads", "files", "dirs", "exists", "listings", "walks")},
            "scan": self.scan,
            "matters": self.matters,
            "served": {k: None if v is None else list(v) for k, v in self.served.items()},
            "aliases": {k: {name: sorted(apis) for name, apis in v.items()} for k, v in self.aliases.items()},
        }
        self._cache.put_bytes(self._key, json.dumps(document, separators=(",", ":")).encode("utf-8", "surrogatepass"))
