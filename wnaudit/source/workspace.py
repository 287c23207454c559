"""The files a lint needs, read on demand: the linted ones and what they import.

A linted file's answer depends on the project code it imports: the class it
inherits from, the helper that applies weight norm, the module that picks a
spelling at import time.  Those files are read from disk here when a
question reaches them, whether or not they were named on the command line,
and only when they can matter: a file is parsed only if it, or a project
module it imports (transitively), mentions one of the catalogue's API names.
Everything else stays a byte scan.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..core import catalogue
from .analysis import Aliases, PieceReader
from .content import ContentFacts, defined_names, facts_of
from .derived_cache import DerivedAnswers, Observations, Stamp, content_digest, stamp, definitions_key, facts_key, read_source_file
from . import notebook
from .model import FileSummary, Site
from .project import ImportBinding, Location, Project, RawImport, package_of, relative_base, statement_bindings
from .provisional import provisional
from .reachability import Key, Reachable
from .reading import SourceError
from .resolve import API_ROOTS
from .serving import facts_cache
from .serving.ahead import ServingAhead
from .serving.configs import config_targets, plain_targets
from .serving.facts import ServingFacts
from .serving.kept_trees import KeptTrees, PieceTrees, reading_both
from .serving.reader import ServingReader, read_serving_facts
from .serving.walk import project_files
from .summary_cache import SummaryCache
from .syntax_cache import SyntaxCache, digest_of

logger = logging.getLogger(__name__)

#: Turns a file's bytes into its summary (``engine.summarize``); raises SourceError.
#: (bytes, path, location, aliases, another reader of the same syntax trees) -> the file's analysis.
Summarizer = Callable[[bytes, str, Location, "Aliases | None", "PieceReader | None"], FileSummary]
_MAX_CHAIN = 32



def _called_names(summary: FileSummary) -> list[str]:
    """The names a file's units call, sorted: all ``aliases`` reads of the file besides where it sits."""
    return sorted({ref for unit in summary.units.values() for ref in unit.refs})


def _refs_key(summary: FileSummary) -> str:
    return hashlib.sha256("\n".join(_called_names(summary)).encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class _Scan:
    binds_api: bool  # an API name may be bound at module level
    holds_facts: bool  # an applier API is named
    bindings: dict[str, list[tuple[ImportBinding, Path]]]


class Workspace:
    """Summaries by resolved path, parsed on first need and kept for the run.

    With ``cache`` a file's byte-level facts come from the per-user cache
    (by content digest); with ``summaries`` so do the summaries of the files
    it analyses; with ``derived`` the import scan's answers come from an
    earlier run whose every observation still holds.  Each only saves work:
    the answers are the same.
    """

    def __init__(
        self, project: Project, summarizer: Summarizer, cache: SyntaxCache | None = None, summaries: SummaryCache | None = None,
        derived: DerivedAnswers | None = None,
    ) -> None:
        self.project = project
        self.derived = derived
        if derived is not None:
            project.listing_stamps = {}  # its listings are observations of the kept answers: keyed like the files read
        #: ``[tool.wnaudit] fix-fold``: what WN110's fix calls (``Config.fix_fold``; set by ``new_workspace``).
        self.fix_fold = "auto"
        #: ``exclude`` / ``extend-exclude``: an excluded file is never WN110's inference site nor its fold's home
        #: (``Config.is_path_excluded``; set by ``new_workspace``).
        self.excluded: Callable[[Path], bool] = _nothing_excluded
        #: ``[tool.wnaudit] serving``: declared serving entry points, and the config root they resolve from.
        self.serving_entries: tuple[str, ...] = ()
        self.config_root = Path.cwd()
        #: What this run used of the files it read from disk, as ``derived_cache.Observations`` holds it.
        self._seen_contents: dict[str, list] = {}
        self._seen_definitions: dict[str, list] = {}
        self._seen_reads: dict[str, str | None] = {}
        self._seen_serving: dict[str, str | None] = {}
        #: WN110's project walks this run: "1" (whole tree) or "0" (packages only) + root -> the files found.
        self._walks: dict[str, tuple[Path, ...]] = {}
        #: directory -> what its YAML configs build (WN110, shape d), read once per run.
        self._configs: dict[str, dict[str, list[str]]] = {}
        self._summarize_uncached = summarizer
        self.cache = cache
        self.summaries = summaries
        self._bytes: dict[Path, bytes | None] = {}
        #: Notebooks read from disk: their views' bytes (the Python the rules read).
        self._views: dict[Path, bytes | None] = {}
        #: Per file read: the digest of its bytes and their facts (None: unreadable).
        self._contents: dict[Path, tuple[bytes, ContentFacts] | None] = {}
        self._first: dict[Path, FileSummary | None] = {}  # without cross-file aliases
        #: Digest of the bytes each ``_first`` analysis read: the scan reuses it for exactly those bytes.
        self._first_digest: dict[Path, bytes] = {}
        self._final: dict[Path, FileSummary | None] = {}
        self._closure = Reachable(*self._derived_matters())
        self._exports_api = Reachable()
        self._api_memo: dict[tuple[Path, str], frozenset[str]] = {}
        self._choice_memo: dict[tuple[Path, str], tuple[Path, Site] | None] = {}
        self._scans: dict[Path, _Scan | None] = {}
        self._definitions: dict[Path, frozenset[str]] = {}
        self._deps: dict[Path, dict[str, list[tuple[ImportBinding, Path]]]] = {}
        self._statements: dict[tuple[int, tuple[str, ...], RawImport], list[tuple[ImportBinding, Path]]] = {}
        #: WN110's serving facts computed beside the analyses (in the workers), by ``facts_cache.facts_key``.
        self.serving_facts: dict[str, ServingFacts] = {}
        #: Byte facts the ``-j`` workers computed ahead of the prefilter (``pipeline/scan.py``), by content digest.
        self.facts_ahead: dict[bytes, ContentFacts] = {}
        #: Workers for WN110's index, set by a scan that computed byte facts ahead (a big run with nothing kept).
        self.serving_ahead: ServingAhead | None = None
        #: Whole-file trees from the analyses here, for WN110's readers of statements (one parse per file).
        self.kept_trees = KeptTrees()
        #: Whether WN110 runs for a file (by its path): then its analysis here also reads its serving facts.
        self.serving_on: Callable[[str], bool] = lambda path: False
        #: Linted files whose analysis raised (path as given -> one line): their findings are left out, the others stand.
        self.analysis_failures: dict[str, str] = {}

    def note_failure(self, path: str, error: Exception) -> None:
        """Record a linted file whose analysis raised (a bug or an input past a bound): one error line, not a crash."""
        logger.debug("%s: cannot be analysed", path, exc_info=error)
        detail = str(error).strip().splitlines()
        reason = f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__
        self.analysis_failures.setdefault(path, f"cannot be analysed ({reason}); its findings are left out")

    def keep_serving(self, digest: bytes, location: Location, found: ServingFacts) -> None:
        """Serving facts of a file's bytes (``digest``) where it sits, for WN110's index (and its cache)."""
        key = facts_cache.facts_key(digest, location.module, location.is_package)
        self.serving_facts[key] = found
        if self.summaries is not None:
            facts_cache.store(self.summaries, key, found)

    # -- reading ------------------------------------------------------------
    def _data(self, path: Path, seen: dict[str, str | None] | None = None) -> bytes | None:
        """The file's bytes (not kept: a tree's worth of source would stay in memory).

        ``seen``: where to note their digest when answers kept between runs rest on them as they are.
        """
        if path in self._bytes:
            return self._bytes[path]
        if path in self._views:
            data = self._views[path]
        else:
            data = read_source_file(path)  # a notebook's view
            if notebook.is_notebook(path):
                self._views[path] = data  # kept: its JSON is parsed once per run
        if seen is not None and self.derived is not None and str(path) not in seen:
            seen[str(path)] = content_digest(data)
        return data

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

    def source_bytes(self, path: Path) -> bytes | None:
        """The file's bytes as this run sees them (for WN110's index): the content a caller gave for it, else the disk's."""
        return self._data(path, self._seen_serving)

    def import_edges(self, path: Path) -> list[tuple[ImportBinding, Path]]:
        """The file's import bindings whose module is a project file (module or package ``__init__``), with that file."""
        content = self.content(path)
        if content is None:
            return []
        location = self.project.locate(path)
        return [(b, found) for items in self._bindings(location.path, content[1]).values() for b, found in items if found.suffix]

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
            data = self._data(path)
        found = None if data is None else self.facts_for(data)
        if found is not None and taken is not None and self.derived is not None:
            self.derived.note(str(path), taken, found[0])
        if self.derived is not None and path not in self._bytes:
            self._seen_contents.setdefault(str(path), [None, None] if found is None else [found[0].hex(), facts_key(found[1])])
        self._contents[path] = found
        return found

    def facts_for(self, data: bytes) -> tuple[bytes, ContentFacts]:
        digest = digest_of(data)
        facts = self.cache.get_facts(digest) if self.cache is not None else None
        if facts is None:
            facts = self.facts_ahead.get(digest) or facts_of(data)  # a pure function of the bytes: either is the answer
            if self.cache is not None:
                self.cache.put_facts(digest, facts)
        return digest, facts

    def _bindings(self, path: Path, facts: ContentFacts) -> dict[str, list[tuple[ImportBinding, Path]]]:
        """The file's import bindings whose module is a project file (or namespace directory), by bound name."""
        cached = self._deps.get(path)
        if cached is None:
            location = self.project.locate(path)
            package = package_of(location)
            found_by: dict[ImportBinding, Path] = {}  # in order, once each (``bindings_of``): a binding names one file
            statements = self._statements
            for statement in facts.imports:
                base = relative_base(statement, package)
                if base is None:
                    continue
                # Files that see modules alike share the resolution of a statement (``from ...utils import x``).
                key = (location.view, base, statement)
                resolved = statements.get(key)
                if resolved is None:
                    resolved = statements[key] = [
                        (binding, found) for binding in statement_bindings(statement, base)
                        if (found := self.project.module_file(binding.module, location)) is not None
                    ]
                for binding, found in resolved:
                    found_by.setdefault(binding, found)
            cached = {}
            for binding, found in found_by.items():
                if found != path:
                    cached.setdefault(binding.bound, []).append((binding, found))
            self._deps[path] = cached
        return cached

    def _scan(self, path: Path) -> _Scan | None:
        """Byte-level facts of a module file, read once (None: not a readable source file)."""
        if path in self._scans:
            return self._scans[path]
        found = self.content(path) if path.suffix in (".py", ".pyi") else None
        result = None
        if found is not None:
            facts = found[1]
            result = _Scan(binds_api=facts.binds_api, holds_facts=facts.holds_facts, bindings=self._bindings(path, facts))
        self._scans[path] = result
        return result

    def may_matter(self, path: Path, name: str = "*") -> bool:
        """Could the module's attribute ``name`` (``*``: the module) carry a weight-norm fact?

        Decided from bytes: the file applies a parametrization API and the name
        occurs in it, or the name is defined here (a class or function whose
        body may use any import) or imported, and what it uses may matter.
        """
        return self._closure.ask((self.project.locate(path).path, name), self._may_matter)

    def _derived_matters(self) -> tuple[Callable[[Key], bool | None] | None, Callable[[Key, bool], None] | None]:
        """Where ``may_matter`` finds an earlier run's answers and keeps this run's (none without a record)."""
        derived = self.derived
        if derived is None:
            return None, None
        matters = derived.matters

        def recall(key: Key) -> bool | None:
            return matters.get(f"{key[0]}\0{key[1]}")

        def record(key: Key, answer: bool) -> None:
            matters[f"{key[0]}\0{key[1]}"] = answer

        return recall, record

    def _may_matter(self, path: Path, name: str) -> bool | list[Key]:
        """The node's own part of ``may_matter``: True, or the imported names whose answers decide it."""
        scan = self._scan(path)
        if scan is None:
            return False
        bindings, locate = scan.bindings, self.project.locate
        if name == "*" or name in self._defined(path):
            return scan.holds_facts or [(locate(dep).path, b.attribute) for found in bindings.values() for b, dep in found]
        if scan.holds_facts and (name in bindings or self._mentions(path, name)):
            return True
        return [(locate(dep).path, b.attribute) for b, dep in (*bindings.get(name, ()), *bindings.get("*", ()))]

    def _all_bindings(self, path: Path, facts: ContentFacts) -> Iterator[tuple[ImportBinding, Path]]:
        for found in self._bindings(path, facts).values():
            yield from found

    def _defined(self, path: Path) -> frozenset[str]:
        """Names the file binds itself (asked only of files a lint resolves a name into; cached with its facts)."""
        found = self._definitions.get(path)
        if found is None:
            content = self.content(path)
            if content is None:
                found = frozenset()
            else:
                digest, facts = content
                found = facts.definitions
                if found is None:
                    data = self._data(path) or b""
                    found = defined_names(data)
                    facts = dataclasses.replace(facts, definitions=found)
                    self._contents[path] = (digest, facts)
                    if self.cache is not None and digest_of(data) == digest:  # not a file that changed since
                        self.cache.put_facts(digest, facts)
                if self.derived is not None and path not in self._bytes:
                    self._seen_definitions.setdefault(str(path), [digest.hex(), definitions_key(found)])
            self._definitions[path] = found
        return found

    def _mentions(self, path: Path, name: str) -> bool:
        data = self._data(path, self._seen_reads)
        return data is not None and re.search(rb"\b" + re.escape(name.encode("ascii", "replace")) + rb"\b", data) is not None

    def may_have_findings(self, path: Path, facts: ContentFacts) -> bool:
        """Can a linted file (with these byte-level facts) hold a finding? It names an API, or imports a project name bound to one.

        ``facts`` must be those of the file's bytes on disk (``content``) for
        an earlier run's answer to be used: a notebook's view is decided anew.
        """
        derived, name = self.derived, str(path)
        if derived is None or name not in self._seen_contents:
            return facts.names_api or self._may_have_findings(path, facts)
        known = derived.scan.get(name)
        if known is None:
            known = derived.scan[name] = facts.names_api or self._may_have_findings(path, facts)
        return known

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

    def _may_have_findings(self, path: Path, facts: ContentFacts) -> bool:
        location = self.project.locate(path)
        exports, may_export_api = self._exports_api.known, self.may_export_api
        for binding, dep in self._all_bindings(location.path, facts):
            known = exports.get((dep, binding.attribute))  # a finished answer never changes: ask only what is open
            if known is None:
                known = may_export_api(dep, binding.attribute)
            if known:
                return True
        return False

    def may_export_api(self, path: Path, name: str) -> bool:
        """Could the module ``path`` hold a torch API under the attribute ``name`` (``*``: any attribute)?

        Decided from bytes while no file on the way binds an API name at
        module level (the common case: nothing to parse); such a file is
        parsed and its bindings answer exactly.
        """
        return self._exports_api.ask((path, name), self._may_export_api)

    def _may_export_api(self, path: Path, name: str) -> bool | list[Key]:
        scanned = self._scan(path)
        if scanned is None:
            return False
        module_level, by_name = scanned.binds_api, scanned.bindings
        if module_level:
            summary = self._first_kept(path)
            if summary is not None:
                names = list(summary.exports) if name == "*" else [name]
                if any(self._names_api(summary, n) for n in names) or any(
                    m.partition(".")[0] in API_ROOTS for m in summary.star_modules
                ):
                    return True
        # It may also re-export what a module it imports binds.
        reached = (
            [item for found in by_name.values() for item in found]
            if name == "*" else [*by_name.get(name, ()), *by_name.get("*", ())]
        )
        return [(dep, binding.attribute) for binding, dep in reached]

    def observations(self) -> Observations:
        """Everything this run learnt from the file system."""
        files, dirs, exists, listings = self.project.observations()
        return Observations(
            files=dict(files), dirs=dict(dirs), exists=dict(exists), listings=dict(listings),
            contents=dict(self._seen_contents), definitions=dict(self._seen_definitions), reads=dict(self._seen_reads),
            serving_reads=dict(self._seen_serving), walks={key: [str(p) for p in found] for key, found in self._walks.items()},
            configs=dict(self._configs),
        )

    def close_workers(self) -> None:
        """Stop the serving-facts workers (a run's last use of them is its rules)."""
        if self.serving_ahead is not None:
            self.serving_ahead.close()
            self.serving_ahead = None

    def save_caches(self) -> None:
        """Write back what this run added to the caches (silent on failure)."""
        if self.derived is not None:
            self.derived.note_listings(self.project.listing_stamps or {})
            self.derived.save(self.observations())
        if self.cache is not None:
            self.cache.save()
            logger.debug("syntax cache: %d verdict hits, %d misses", self.cache.hits, self.cache.misses)
        if self.summaries is not None:
            self.summaries.save()
            logger.debug("summary cache: %d hits, %d misses", self.summaries.hits, self.summaries.misses)

    # -- summaries ------------------------------------------------------------
    def _summarize(
        self, data: bytes, path: str, location: Location, aliases: Aliases | None, serving: bool = False,
    ) -> FileSummary:
        """The summarizer's answer, from the summary cache when it holds one for exactly these inputs."""
        if self.summaries is None:
            return self._analyse(data, path, location, aliases, serving)
        key = self.summaries.key(digest_of(data), path, location, aliases)
        summary = self.summaries.get(key, path, str(location.path))
        if summary is None:
            summary = self._analyse(data, path, location, aliases, serving)
            self.summaries.put(key, summary)
        return summary

    def _analyse(self, data: bytes, path: str, location: Location, aliases: Aliases | None, serving: bool) -> FileSummary:
        """The summarizer's analysis; where WN110 runs (or ``serving``), its serving facts from the same parse, kept."""
        if aliases is not None or not (serving or self.serving_on(path)):
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
        found = self.serving_facts.get(facts_cache.facts_key(digest, location.module, location.is_package))
        return found if found is not None else read_serving_facts(data, str(path), location.module, location.is_package)

    def first(self, path: Path, seen: dict[str, str | None] | None = None) -> FileSummary | None:
        """The file's own facts, before names imported from other files are resolved (callers decide it matters).

        ``seen``: as for ``_data``, where a kept answer notes the bytes it rests on.
        """
        path = self.project.locate(path).path
        if path not in self._first:
            self._first[path] = None
            data = self._data(path, seen)
            if data is not None:
                try:
                    self._first[path] = self._summarize(data, str(path), self.project.locate(path), None)
                    self._first_digest[path] = digest_of(data)
                except SourceError as error:
                    logger.debug("%s: dependency not analysed: %s", path, error)
        return self._first[path]

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
        location = self.project.locate(path)
        if location.path in self._first:
            return
        name = str(location.path)
        self._first[location.path] = adopted = dataclasses.replace(summary, path=name, file=name)
        self._first_digest[location.path] = digest = digest_of(data)
        if self.summaries is not None:
            self.summaries.put(self.summaries.key(digest, name, location, None), adopted)

    def analysed_as_read(self, path: Path, path_text: str) -> tuple[FileSummary, bytes] | None:
        """``analysed`` for the bytes the run read of the file (``content``), with their digest; None: not analysed."""
        read = self._contents.get(path)
        summary = self.analysed(path, read[0], path_text) if read is not None else None
        return (summary, read[0]) if summary is not None and read is not None else None

    def _first_kept(self, path: Path) -> FileSummary | None:
        """``first`` for an answer kept between runs: the file's bytes are noted as one it rests on."""
        if self.derived is None:
            return self.first(path)
        located = self.project.locate(path).path
        if located in self._first and str(located) not in self._seen_reads:
            self._data(located, self._seen_reads)  # analysed earlier for a rule, unnoted: note its bytes now
        return self.first(path, self._seen_reads)

    def summary(self, path: Path, name: str = "*") -> FileSummary | None:
        """The file's facts with cross-file aliases resolved (None: ``name`` there cannot matter, or unreadable)."""
        path = self.project.locate(path).path
        if path not in self._final and not self.may_matter(path, name):
            return None
        if path not in self._final:
            self._final[path] = None
            first = self.first(path)
            if first is not None:
                data = self._data(path)
                self._final[path] = self.complete(first, data) if data is not None else first
        return self._final[path]

    def adopt(self, summaries: Iterable[FileSummary], data: dict[str, bytes | str] | None = None) -> list[FileSummary]:
        """Take the linted files' first-pass summaries; return them completed (aliases resolved)."""
        out = []
        for summary in summaries:
            path = Path(summary.file)
            self._first[path] = summary
            content = (data or {}).get(summary.path)
            if content is None:
                content = self._data(path)
            else:
                self._bytes[path] = content if isinstance(content, bytes) else content.encode("utf-8")
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
            aliases = self.aliases(summary)
        else:  # keyed by what the answer reads of the file: the names it calls (an edit elsewhere keeps it)
            key = f"{summary.file or summary.path}\0{_refs_key(summary)}"
            known = derived.aliases.get(key)
            if known is None:
                known = derived.aliases[key] = self.aliases(summary)
            aliases = known
        if not aliases:
            return summary
        location = self.project.locate(summary.file or summary.path)
        try:
            completed = self._summarize(raw, summary.path, location, aliases)
        except SourceError:
            return summary
        return completed

    # -- names across files ------------------------------------------------------
    def aliases(self, summary: FileSummary) -> Aliases:
        """Names ``summary`` calls that are bound, in the project module defining them, to torch APIs."""
        location = self.project.locate(summary.file or summary.path)
        out: Aliases = {}
        for name in _called_names(summary):
            apis = self.api_names(name, location, 0)
            if apis:
                out[name] = apis
        return out

    def _names_api(self, summary: FileSummary, name: str) -> bool:
        location = self.project.locate(summary.file or summary.path)
        return any(
            catalogue.spelling_for_api(value) is not None or self.api_names(value, location, 1)
            for value in summary.exports.get(name, ())
        )

    def api_names(self, dotted: str, location: Location, depth: int) -> frozenset[str]:
        """The catalogue APIs a project name (``pkg.compat.weight_norm``) is bound to, following re-exports."""
        if depth > _MAX_CHAIN or dotted.partition(".")[0] in API_ROOTS:
            return frozenset()
        key = (location.path, dotted)
        cached = self._api_memo.get(key)
        if cached is not None:
            return cached
        with provisional(self._api_memo, key, frozenset()):  # a cycle of re-exports binds nothing
            frozen = self._api_names(dotted, location, depth)
        self._api_memo[key] = frozen
        return frozen

    def _api_names(self, dotted: str, location: Location, depth: int) -> frozenset[str]:
        result: set[str] = set()
        found = self.project.resolve(dotted, location)
        if found is not None and found[1] and self.may_export_api(found[0], found[1].partition(".")[0]):
            target_path, inner = found
            target = self._first_kept(target_path)
            if target is not None:
                target_location = self.project.locate(target_path)
                head, _, rest = inner.partition(".")
                values = list(target.exports.get(head, ()))
                values.extend(f"{m}.{head}" for m in target.star_modules)
                for value in values:
                    full = f"{value}.{rest}" if rest else value
                    if catalogue.spelling_for_api(full) is not None:
                        result.add(full)
                    else:
                        result |= self.api_names(full, target_location, depth + 1)
        return frozenset(result)

    def bound_choice(self, dotted: str, location: Location, depth: int = 0) -> tuple[Path, Site] | None:
        """The file and site of the legacy ``weight_norm`` in the flag choice a project name is bound to.

        ``voc.norms.norm_f`` where ``voc/norms.py`` writes ``norm_f = weight_norm if flag else spectral_norm``,
        followed through plain re-exports (``from .norms import norm_f`` in a package ``__init__``).  Only the
        file the name resolves to is read, and it is the one ``api_names`` has already read for the same name.
        """
        if depth > _MAX_CHAIN or dotted.partition(".")[0] in API_ROOTS:
            return None
        key = (location.path, dotted)
        if key in self._choice_memo:
            return self._choice_memo[key]
        with provisional(self._choice_memo, key, None):  # a cycle of re-exports binds nothing
            result = self._bound_choice(dotted, location, depth)
        self._choice_memo[key] = result
        return result

    def _bound_choice(self, dotted: str, location: Location, depth: int) -> tuple[Path, Site] | None:
        result: tuple[Path, Site] | None = None
        found = self.project.resolve(dotted, location)
        if found is not None and found[1] and "." not in found[1]:
            target_path, head = found
            target = self.first(target_path)
            if target is not None:
                site = target.choices.get(head)
                if site is not None:
                    result = (self.project.locate(target_path).path, site)
                else:
                    values = list(target.exports.get(head, ())) or [f"{m}.{head}" for m in target.star_modules]
                    if len(values) == 1:  # a re-export; a name with several values is not one binding
                        result = self.bound_choice(values[0], self.project.locate(target_path), depth + 1)
        return result


def _nothing_excluded(path: Path) -> bool:
    """No exclude pattern in force (a workspace built without a config)."""
    return False
