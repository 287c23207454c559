"""The files a run reads, each once: their bytes, their byte facts, and what the run observed of them.

The bytes of a file read from disk are not kept (a tree's worth of source would
stay in memory); its digest and byte facts are (``facts/kinds.CONTENT``, from
the run's fact store).  When the run keeps derived answers
(``derived_cache.py``), every read a kept answer rests on is noted here, and
``observations`` hands them to the record.
"""

from __future__ import annotations

from pathlib import Path

from . import notebook
from .content import ContentFacts
from .derived_cache import (
    DerivedAnswers,
    Observations,
    Stamp,
    content_digest,
    facts_key,
    read_source_file,
    stamp,
)
from .facts.kinds import CONTENT, Blob, digest_of
from .facts.store import FactStore
from .project import Project
from .serving.configs import config_targets, plain_targets
from .serving.config_files import read_config, read_configs
from .serving.walk import project_files


class FileReads:
    """Bytes and byte facts by resolved path, read on first need; the observations kept answers rest on."""

    def __init__(self, project: Project, facts: FactStore, derived: DerivedAnswers | None) -> None:
        self.project = project
        self.facts = facts
        self.derived = derived
        #: What this run used of the files it read from disk, as ``derived_cache.Observations`` holds it.
        self._seen_contents: dict[str, list] = {}
        self.seen_definitions: dict[str, list] = {}
        self.seen_reads: dict[str, str | None] = {}
        self._seen_serving: dict[str, str | None] = {}
        #: Every file read from disk (``data``): what a whole run's kept answer rests on (``run_answers``).
        self._run_reads: dict[str, str | None] = {}
        #: WN110's project walks this run: "1" (whole tree) or "0" (packages only) + root -> the files found.
        self._walks: dict[str, tuple[Path, ...]] = {}
        #: directory -> what its YAML configs build (WN110, shape d), read once per run.
        self._configs: dict[str, dict[str, list[str]]] = {}
        #: project root -> the YAML/JSON configs under it and their bytes, as WN110's flag reader read them.
        self._flag_configs: dict[str, list[tuple[Path, bytes | None]]] = {}
        #: Contents a caller gave for files (not read from disk: no kept answer rests on them).
        self._bytes: dict[Path, bytes | None] = {}
        #: Notebooks read from disk: their views' bytes (the Python the rules read).
        self._views: dict[Path, bytes | None] = {}
        #: Per file read: the digest of its bytes and their facts (None: unreadable).
        self._contents: dict[Path, tuple[bytes, ContentFacts] | None] = {}

    def given(self, path: Path, content: bytes | str) -> bytes:
        """Take the content a caller gave for ``path`` (an editor's buffer): the run reads it instead of the disk's."""
        data = self._bytes[path] = content if isinstance(content, bytes) else content.encode("utf-8")
        return data

    def is_given(self, path: Path) -> bool:
        """Whether the run reads a caller's content for ``path`` (then no kept answer rests on it)."""
        return path in self._bytes

    def kept_serving_read(self, path: str) -> str | None:
        """The digest of the bytes of ``path`` an earlier run's WN110 read, when its kept answers stand (else None)."""
        if self.derived is None or not self.facts.persistent:
            return None
        return self.derived.observed.serving_reads.get(path)

    def read(self, path: Path) -> tuple[bytes, ContentFacts] | None:
        """The digest and facts of the bytes ``content`` read of the file (None: not read, or unreadable)."""
        return self._contents.get(path)

    def replace_facts(self, path: Path, digest: bytes, facts: ContentFacts, same_bytes: bool) -> None:
        """The file's byte facts with more of them computed (its own names), for the run; ``same_bytes``: for its digest too."""
        self._contents[path] = (digest, facts)
        if same_bytes:
            self.facts.put(CONTENT, Blob(digest), facts)

    def data(self, path: Path, seen: dict[str, str | None] | None = None) -> bytes | None:
        """The file's bytes (not kept: a tree's worth of source would stay in memory).

        ``seen``: where to note their digest when answers kept between runs rest on them as they are (``seen_reads``).
        """
        if path in self._bytes:
            return self._bytes[path]
        digest: str | None = None
        if path in self._views:
            data = self._views[path]
        else:
            data, digest = self._read(path)
        if seen is not None and self.derived is not None and str(path) not in seen:
            seen[str(path)] = digest if digest is not None else content_digest(data)
        return data

    def _read(self, path: Path) -> tuple[bytes | None, str | None]:
        """The file's bytes from disk (a notebook's view), the first read of each noted for a whole run's answer.

        With the digest of those bytes when this read noted it (None: not computed here, or unreadable).
        """
        name = str(path)
        noting = self.derived is not None and name not in self._run_reads
        taken = stamp(name) if noting else None  # before the read: a later check trusts an unchanged stat
        data = read_source_file(path)
        if notebook.is_notebook(path):
            self._views[path] = data  # kept: its JSON is parsed once per run
        if not noting:
            return data, None
        digest = None if data is None else digest_of(data)
        self._run_reads[name] = None if digest is None else digest.hex()
        if digest is not None and self.derived is not None:
            self.derived.note(name, taken, digest)
        return data, self._run_reads[name]

    def project_files(self, root: Path, whole: bool) -> tuple[Path, ...]:
        """The project's Python files under ``root`` (``serving.walk.project_files``), walked once per run."""
        key = ("1" if whole else "0") + str(root)
        found = self._walks.get(key)
        if found is None:
            found = self._walks[key] = tuple(project_files(root, whole))
        return found

    def config_targets(self, directory: Path) -> dict[str, set[str]]:
        """What the YAML configs under ``directory`` build, by key path (``serving.configs``), read once per run."""
        key = str(directory)
        found = self._configs.get(key)
        if found is None:
            found = self._configs[key] = plain_targets(config_targets(directory))
        return {path: set(names) for path, names in found.items()}

    def flag_configs(self, root: Path) -> list[bytes]:
        """The contents of the configs shipped under ``root`` (``config_files.read_configs``), read once per run.

        A flag a config turns on or off decides whether a fold counts: which configs there are and their bytes
        are observations WN110's kept verdicts rest on (``config_walks``, ``config_reads``).
        """
        key = str(root)
        found = self._flag_configs.get(key)
        if found is None:
            found = self._flag_configs[key] = read_configs(root, self._config_bytes)
        return [data for _, data in found if data is not None]

    def _config_bytes(self, path: Path) -> bytes | None:
        """``config_files.read_config``, its stat key kept (a later check does not read a config whose stat is the same)."""
        taken = stamp(str(path)) if self.derived is not None else None
        data = read_config(path)
        if data is not None and taken is not None and self.derived is not None:
            self.derived.note(str(path), taken, digest_of(data))
        return data

    def source_bytes(self, path: Path) -> bytes | None:
        """The file's bytes as this run sees them (for WN110's index): the content a caller gave for it, else the disk's."""
        return self.data(path, self._seen_serving)

    def content(self, path: Path, data: bytes | None = None, taken: Stamp | None = None) -> tuple[bytes, ContentFacts] | None:
        """The digest and byte-level facts of a file (``data``: its bytes, already read), once per run.

        The facts come from the cache when it has them for this content.
        ``taken``: the file's stamp from before ``data`` was read (its stat key is kept for later runs).
        """
        if path in self._contents:
            return self._contents[path]
        if data is None:
            if taken is None and self.derived is not None and path not in self._bytes:
                taken = stamp(str(path))  # a file read from disk here: its stat key too
            data = self.data(path)
        found = None if data is None else self.facts_for(data)
        if found is not None and taken is not None and self.derived is not None:
            self.derived.note(str(path), taken, found[0])
        if self.derived is not None and path not in self._bytes:
            self._seen_contents.setdefault(str(path), [None, None] if found is None else [found[0].hex(), facts_key(found[1])])
        self._contents[path] = found
        return found

    def facts_for(self, data: bytes) -> tuple[bytes, ContentFacts]:
        blob = Blob.of(data)
        facts = self.facts.get(CONTENT, blob)
        assert facts is not None  # computed when not known
        return blob.digest, facts

    def vouched(self, path: Path | str) -> tuple[bytes, bool] | None:
        """A linted file's digest and ``may_have_findings``, when the checked record vouches for its bytes.

        The check has just read the file; its bytes are the ones the answer was
        computed from, so neither needs reading or deciding again.  ``path``:
        where it sits as ``locate`` makes it absolute (its ``Location.path``).
        """
        derived = self.derived
        if derived is None or (self._bytes and Path(path) in self._bytes):
            return None
        name = str(path)
        digest, seen, known = derived.digests.get(name), derived.observed.contents.get(name), derived.scan.get(name)
        if digest is None or seen is None or known is None:
            return None
        self._seen_contents.setdefault(name, [digest, seen[1]])  # an edit that kept its imports: the bytes as they are now
        return bytes.fromhex(digest), known

    def observations(self) -> Observations:
        """Everything this run learnt from the file system."""
        files, dirs, exists, listings = self.project.observations()
        return Observations(
            files=dict(files), dirs=dict(dirs), exists=dict(exists), listings=dict(listings),
            contents=dict(self._seen_contents), definitions=dict(self.seen_definitions), reads=dict(self.seen_reads),
            serving_reads=dict(self._seen_serving), walks={key: [str(p) for p in found] for key, found in self._walks.items()},
            configs=dict(self._configs),
            config_walks={root: [str(path) for path, _ in found] for root, found in self._flag_configs.items()},
            config_reads={str(path): content_digest(data) for found in self._flag_configs.values() for path, data in found},
            run_reads=dict(self._run_reads),
        )
