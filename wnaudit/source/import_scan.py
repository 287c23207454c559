"""Which files can matter: import reachability decided from bytes (flags and import statements), rarely a parse.

A linted file can hold a finding when it names a catalogue API, or imports a
project name bound to one (``may_have_findings``); a module's attribute can
carry a weight-norm fact when the file applies an API and names it, or what
it imports can (``may_matter``).  Both follow import edges over the byte facts
of ``file_reads.py``; only a file that may bind an API at module level is
analysed to answer exactly.  With a record of derived answers, earlier runs'
answers are reused while their observations hold.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..common.cache import digest_of
from .content import ContentFacts, defined_names
from .derived_cache import DerivedAnswers, definitions_key
from .file_reads import FileReads
from .model import FileSummary
from .project import (
    ImportBinding,
    Project,
    RawImport,
    package_of,
    relative_base,
    statement_bindings,
)
from .reachability import Key, Reachable
from .resolve import API_ROOTS

#: A file's own facts before cross-file names are resolved, read for an answer kept between runs (``Analyses.first_kept``).
FirstKept = Callable[[Path], "FileSummary | None"]
#: Whether a name a file exports stands for a torch API (``ApiNames.names_api``).
NamesApi = Callable[[FileSummary, str], bool]


@dataclass(frozen=True)
class _Scan:
    binds_api: bool  # an API name may be bound at module level
    holds_facts: bool  # an applier API is named
    bindings: dict[str, list[tuple[ImportBinding, Path]]]


class ImportScan:
    """Import edges between project files and the reachability answers built on them, each decided once per run."""

    def __init__(
        self, project: Project, reads: FileReads, derived: DerivedAnswers | None, first_kept: FirstKept, names_api: NamesApi,
    ) -> None:
        self.project = project
        self.reads = reads
        self.derived = derived
        self._first_kept = first_kept
        self._names_api = names_api
        self._closure = Reachable(*self._derived_matters())
        self._exports_api = Reachable()
        self._scans: dict[Path, _Scan | None] = {}
        self._definitions: dict[Path, frozenset[str]] = {}
        self._deps: dict[Path, dict[str, list[tuple[ImportBinding, Path]]]] = {}
        self._statements: dict[tuple[int, tuple[str, ...], RawImport], list[tuple[ImportBinding, Path]]] = {}

    def import_edges(self, path: Path) -> list[tuple[ImportBinding, Path]]:
        """The file's import bindings whose module is a project file (module or package ``__init__``), with that file."""
        content = self.reads.content(path)
        if content is None:
            return []
        location = self.project.locate(path)
        return [(b, found) for items in self._bindings(location.path, content[1]).values() for b, found in items if found.suffix]

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
        found = self.reads.content(path) if path.suffix in (".py", ".pyi") else None
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
            content = self.reads.content(path)
            if content is None:
                found = frozenset()
            else:
                digest, facts = content
                found = facts.definitions
                if found is None:
                    data = self.reads.data(path) or b""
                    found = defined_names(data)
                    # Kept for these bytes only when they are the ones the facts are of (not a file that changed since).
                    self.reads.replace_facts(path, digest, dataclasses.replace(facts, definitions=found), digest_of(data) == digest)
                if self.derived is not None and not self.reads.is_given(path):
                    self.reads.seen_definitions.setdefault(str(path), [digest.hex(), definitions_key(found)])
            self._definitions[path] = found
        return found

    def _mentions(self, path: Path, name: str) -> bool:
        data = self.reads.data(path, self.reads.seen_reads)
        return data is not None and re.search(rb"\b" + re.escape(name.encode("ascii", "replace")) + rb"\b", data) is not None

    def may_have_findings(self, path: Path, facts: ContentFacts) -> bool:
        """Can a linted file (with these byte-level facts) hold a finding? It names an API, or imports a project name bound to one.

        ``facts`` must be those of the file's bytes on disk (``content``) for
        an earlier run's answer to be used: a notebook's view is decided anew.
        """
        derived, name = self.derived, str(path)
        if derived is None or name not in self.reads._seen_contents:
            return facts.names_api or self._may_have_findings(path, facts)
        known = derived.scan.get(name)
        if known is None:
            known = derived.scan[name] = facts.names_api or self._may_have_findings(path, facts)
        return known

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
