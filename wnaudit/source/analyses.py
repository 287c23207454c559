"""The analyses a run makes of files (``model.FileSummary``), each from the fact store or one parse, kept for the run.

A file's first analysis (``first``) knows only the file; ``complete`` analyses
it again with the project names it calls that stand for torch APIs
(``api_names.py``).  Where WN110 runs for a file, its analysis also reads its
serving facts from the same parse (``_analyse``), kept in the fact store for
WN110's index.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..common.cache import digest_of
from .analysis import Aliases, PieceReader
from .derived_cache import DerivedAnswers
from .facts.kinds import SERVING, SUMMARY, ServingOf, SummaryOf
from .facts.store import FactStore
from .file_reads import FileReads
from .model import FileSummary
from .project import Location, Project
from .reading import SourceError
from .serving.facts import ServingFacts
from .serving.reader import ServingReader, read_serving_facts
from .serving.kept_trees import KeptTrees, PieceTrees, reading_both
from .workspace_settings import WorkspaceSettings

logger = logging.getLogger(__name__)

#: Turns a file's bytes into its summary (``engine.summarize``); raises SourceError.
#: (bytes, path, location, aliases, another reader of the same syntax trees) -> the file's analysis.
Summarizer = Callable[[bytes, str, Location, "Aliases | None", "PieceReader | None"], FileSummary]
#: The names a file calls that stand for torch APIs (``ApiNames.aliases``).
AliasesOf = Callable[[FileSummary], Aliases]
#: Could the module's attribute carry a weight-norm fact (``ImportScan.may_matter``)?
MayMatter = Callable[[Path, str], bool]
#: The first analysis a scan worker made of a linted file (resolved path), with the digest of the bytes it read;
#: None where no worker has it (``scan.py``'s ``_Analyses.from_worker``).
FromWorker = Callable[[Path], "tuple[FileSummary, bytes] | None"]


def _no_worker(path: Path) -> None:
    return None


def called_names(summary: FileSummary) -> list[str]:
    """The names a file's units call, sorted: all ``aliases`` reads of the file besides where it sits."""
    return sorted({ref for unit in summary.units.values() for ref in unit.refs})


def _refs_key(summary: FileSummary) -> str:
    return hashlib.sha256("\n".join(called_names(summary)).encode("utf-8", "surrogatepass")).hexdigest()[:32]


class Analyses:
    """Summaries by resolved path, parsed on first need (or taken from the store) and kept for the run."""

    def __init__(
        self, project: Project, reads: FileReads, summarizer: Summarizer, settings: WorkspaceSettings,
        derived: DerivedAnswers | None, aliases: AliasesOf, may_matter: MayMatter,
    ) -> None:
        self.project = project
        self.reads = reads
        self.facts: FactStore = reads.facts
        self.derived = derived
        self.settings = settings
        self._summarize_uncached = summarizer
        self._aliases = aliases
        self._may_matter = may_matter
        self._first: dict[Path, FileSummary | None] = {}  # without cross-file aliases
        #: Digest of the bytes each ``_first`` analysis read: the scan reuses it for exactly those bytes.
        self._first_digest: dict[Path, bytes] = {}
        self._final: dict[Path, FileSummary | None] = {}
        #: Whole-file trees from the analyses here, for WN110's readers of statements (one parse per file).
        self.kept_trees = KeptTrees()
        #: Linted files whose analysis raised (path as given -> one line): their findings are left out, the others stand.
        self.analysis_failures: dict[str, str] = {}
        #: While the scan's workers analyse the linted files (``from_workers``): where ``first`` finds their analysis.
        self._from_worker: FromWorker = _no_worker

    @contextlib.contextmanager
    def from_workers(self, find: FromWorker) -> Iterator[None]:
        """While the scan's workers analyse linted files, ``first`` takes a worker's analysis instead of parsing.

        The prefilter's import scan, in this process, asks for the analysis of
        files the linted ones import; many are linted files a worker has (or is)
        analysing: taken from it, such a file is parsed once.
        """
        self._from_worker = find
        try:
            yield
        finally:
            self._from_worker = _no_worker

    def note_failure(self, path: str, error: Exception) -> None:
        """Record a linted file whose analysis raised (a bug or an input past a bound): one error line, not a crash."""
        logger.debug("%s: cannot be analysed", path, exc_info=error)
        detail = str(error).strip().splitlines()
        reason = f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__
        self.analysis_failures.setdefault(path, f"cannot be analysed ({reason}); its findings are left out")

    def keep_serving(self, digest: bytes, location: Location, found: ServingFacts) -> None:
        """Serving facts of a file's bytes (``digest``) where it sits, for WN110's index (and its cache)."""
        self.facts.put(SERVING, ServingOf.at(digest, location), found)

    def _summarize(
        self, data: bytes, path: str, location: Location, aliases: Aliases | None, serving: bool = False,
    ) -> FileSummary:
        """The summarizer's answer, from the fact store when it holds one for exactly these inputs."""
        ask = SummaryOf(digest_of(data), path, location, aliases)
        summary = self.facts.get(SUMMARY, ask, lambda ask: self._analyse(data, path, location, aliases, serving))
        assert summary is not None  # computed when not known
        return summary

    def _analyse(self, data: bytes, path: str, location: Location, aliases: Aliases | None, serving: bool) -> FileSummary:
        """The summarizer's analysis; where WN110 runs (or ``serving``), its serving facts from the same parse, kept."""
        if aliases is not None or not (serving or self.settings.serving_on(path)):
            return self._summarize_uncached(data, path, location, aliases, None)
        reader, trees = ServingReader(location.module, location.is_package), PieceTrees(len(data))
        summary = self._summarize_uncached(data, path, location, None, reading_both(reader, trees))
        found, digest = reader.facts(), digest_of(data)
        if found is not None:
            self.keep_serving(digest, location, found)
        self.kept_trees.keep_wanted(digest, summary, found, trees)
        return summary

    def read_serving(self, path: Path, data: bytes) -> ServingFacts:
        """WN110's index reading a file it has no facts for: from the parse that analyses the file too, kept for ``first``.

        The rules ask for the analysis of many of the files the index reads (what a
        name there stands for); the analysis walk costs a tenth of the parse, so one
        parse feeds both.  Raises ``READ_ERRORS`` as ``read_serving_facts`` does.
        """
        location = self.project.locate(path)
        digest = digest_of(data)
        if location.path not in self._first:
            self._first[location.path] = None
            try:
                self._first[location.path] = self._summarize(data, str(location.path), location, None, serving=True)
                self._first_digest[location.path] = digest
            except SourceError as error:
                logger.debug("%s: dependency not analysed: %s", path, error)
        found = self.facts.recall(SERVING, ServingOf.at(digest, location))
        return found if found is not None else read_serving_facts(data, str(path), location.module, location.is_package)

    def first(self, path: Path, seen: dict[str, str | None] | None = None) -> FileSummary | None:
        """The file's own facts, before names imported from other files are resolved (callers decide it matters).

        ``seen``: as for ``_data``, where a kept answer notes the bytes it rests on.
        """
        path = self.project.locate(path).path
        if path not in self._first:
            self._first[path] = None
            data = self.reads.data(path, seen)
            if data is not None and not self._took_from_worker(path, data):
                try:
                    self._first[path] = self._summarize(data, str(path), self.project.locate(path), None)
                    self._first_digest[path] = digest_of(data)
                except SourceError as error:
                    logger.debug("%s: dependency not analysed: %s", path, error)
        return self._first[path]

    def _took_from_worker(self, path: Path, data: bytes) -> bool:
        """Whether a scan worker's analysis of exactly these bytes became the file's first analysis."""
        found = self._from_worker(path)
        if found is None or found[1] != digest_of(data):
            return False
        self._take(path, data, found[0])
        return True

    def analysed(self, path: Path, digest: bytes, path_text: str) -> FileSummary | None:
        """The analysis ``first`` made of these bytes of the file (``path``: its ``Location.path``), or None.

        A linted file another file's imports led to before the prefilter reached it
        was analysed then: the scan takes that analysis (named ``path_text``, as the
        scan names it) instead of parsing the file a second time.
        """
        found = self._first.get(path)
        if found is None or self._first_digest.get(path) != digest:
            return None
        return dataclasses.replace(found, path=path_text, file=str(path))

    def adopt_analysis(self, path: Path, data: bytes, summary: FileSummary) -> None:
        """Take the analysis a worker made of these bytes of the file beside its serving facts (``first`` then has it)."""
        if self.project.locate(path).path not in self._first:
            self._take(path, data, summary)

    def _take(self, path: Path, data: bytes, summary: FileSummary) -> None:
        """Another process's first analysis of these bytes becomes the file's (named as ``first`` names it)."""
        location = self.project.locate(path)
        name = str(location.path)
        self._first[location.path] = adopted = dataclasses.replace(summary, path=name, file=name)
        self._first_digest[location.path] = digest = digest_of(data)
        self.facts.put(SUMMARY, SummaryOf(digest, name, location), adopted)

    def analysed_as_read(self, path: Path, path_text: str) -> tuple[FileSummary, bytes] | None:
        """``analysed`` for the bytes the run read of the file (``content``), with their digest; None: not analysed."""
        read = self.reads.read(path)
        summary = self.analysed(path, read[0], path_text) if read is not None else None
        return (summary, read[0]) if summary is not None and read is not None else None

    def first_kept(self, path: Path) -> FileSummary | None:
        """``first`` for an answer kept between runs: the file's bytes are noted as one it rests on."""
        if self.derived is None:
            return self.first(path)
        located = self.project.locate(path).path
        if located in self._first and str(located) not in self.reads.seen_reads:
            self.reads.data(located, self.reads.seen_reads)  # analysed earlier for a rule, unnoted: note its bytes now
        return self.first(path, self.reads.seen_reads)

    def summary(self, path: Path, name: str = "*") -> FileSummary | None:
        """The file's facts with cross-file aliases resolved (None: ``name`` there cannot matter, or unreadable)."""
        path = self.project.locate(path).path
        if path not in self._final and not self._may_matter(path, name):
            return None
        if path not in self._final:
            self._final[path] = None
            first = self.first(path)
            if first is not None:
                data = self.reads.data(path)
                self._final[path] = self.complete(first, data) if data is not None else first
        return self._final[path]

    def adopt(self, summaries: Iterable[FileSummary], data: dict[str, bytes | str] | None = None) -> list[FileSummary]:
        """Take the linted files' first-pass summaries; return them completed (aliases resolved)."""
        summaries = list(summaries)
        for summary in summaries:  # all first: completing one file reads the others' (not parsed again)
            self._first[Path(summary.file)] = summary
        out = []
        for summary in summaries:
            path = Path(summary.file)
            content = (data or {}).get(summary.path)
            if content is None:
                content = self.reads.data(path)
            else:
                self.reads.given(path, content)
            try:
                completed = self.complete(summary, content) if content is not None else summary
            except Exception as error:  # noqa: BLE001 - one file's failure costs its findings, never the report
                self.note_failure(summary.path, error)
                continue
            self._final[path] = completed
            out.append(completed)
        return out

    def complete(self, summary: FileSummary, content: bytes | str) -> FileSummary:
        """Re-analyse ``summary``'s file when it calls project names that stand for torch APIs."""
        raw = content if isinstance(content, bytes) else content.encode("utf-8")
        derived = self.derived
        if derived is None:
            aliases = self._aliases(summary)
        else:  # keyed by what the answer reads of the file: the names it calls (an edit elsewhere keeps it)
            key = f"{summary.file or summary.path}\0{_refs_key(summary)}"
            known = derived.aliases.get(key)
            if known is None:
                known = derived.aliases[key] = self._aliases(summary)
            aliases = known
        if not aliases:
            return summary
        location = self.project.locate(summary.file or summary.path)
        try:
            completed = self._summarize(raw, summary.path, location, aliases)
        except SourceError:
            return summary
        return completed
