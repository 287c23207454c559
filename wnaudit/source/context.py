"""Which weight-norm spellings may reach a removal: within its class, its file, the code it imports.

A unit (top-level class or function) is known by its file's resolved path
and its qualified name there.  What a unit refers to (bases it inherits,
helpers it calls, re-exported names) is resolved as Python resolves imports
(``project.py``), and the files it reaches are read on demand
(``workspace.py``): the answer for a file depends on that file and the code
it imports, never on which other files are linted.  ``migrated`` lets the
fixer ask the same question about the code as it will be after WN103 fixes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..core import catalogue
from .model import FileSummary, Site
from .providers.base import Fact, Provider
from .provisional import provisional
from .resolve import API_ROOTS
from .facts.kinds import SERVING
from .workspace import Workspace

if TYPE_CHECKING:
    from .project_model import ProjectModel
    from .serving.index import ServingIndex

#: A unit: (resolved file path, qualified name in that file).
Key = tuple[str, str]
_MAX_CHAIN = 32


class Context:
    def __init__(
        self,
        summaries: Iterable[FileSummary],
        migrated: frozenset[tuple[str, tuple]] = frozenset(),
        *,
        workspace: Workspace,
    ) -> None:
        self.summaries = sorted(summaries, key=lambda s: s.path)
        self.workspace = workspace
        self._migrated = migrated
        self._given = {_file(s): s for s in self.summaries}
        self._loaded: dict[str, FileSummary | None] = {}
        self._direct: dict[Key, dict[str, frozenset[str]]] = {}
        self._edges: dict[Key, tuple[Key, ...]] = {}
        self._resolved: dict[tuple[str, str], tuple[Key, ...]] = {}
        self._styles: dict[tuple[Key, str], frozenset[str]] = {}
        self._file_styles: dict[tuple[str, str], frozenset[str]] = {}
        #: (unit, kind, style) -> the first application of that kind and style in the unit itself.
        self._witness: dict[tuple[Key, str, str], Witness] = {}
        #: (unit, or (file, "*") for the file-wide search, kind, style) -> the witness found for it.
        self._witness_found: dict[tuple[Key, str, str], Witness | None] = {}
        self._serving: "ServingIndex | None" = None
        self._model: "ProjectModel | None" = None

    def fact(self, summary: FileSummary, provider: type[Provider[Fact]]) -> Fact:
        """The file's fact of ``provider``, one the rule declares in ``Rule.PROVIDERS`` (computed with its summary).

        A provider no rule declares was never computed: that is a rule that
        forgot to declare it, so it raises instead of answering empty.
        """
        text = summary.provided.get(provider.name)
        if text is None:
            raise LookupError(f"{provider.name}: no rule declares this provider, so {summary.path} was not given it")
        fact: Fact = provider.decode(text)
        return fact

    def model(self) -> "ProjectModel":
        """The project model the cross-file rules ask (WN109, WN110), built on first use and shared by the run's files."""
        if self._model is None:
            from .project_model import ProjectModel

            self._model = ProjectModel(self, self.workspace.reads.source_bytes, self.workspace.facts)
        return self._model

    def serving(self) -> "ServingIndex":
        """The project-wide serving-path index (WN110), built on first use and shared by the run's files."""
        if self._serving is None:
            from .serving.index import ServingIndex
            from .serving.units import IndexHooks

            workspace, facts = self.workspace, self.workspace.facts
            reads, analyses, settings = workspace.reads, workspace.analyses, workspace.settings
            hooks = IndexHooks(
                analyses.read_serving, analyses.adopt_analysis, analyses.kept_trees.tree, settings.excluded, self._modern_only,
                reads.flag_configs,
            )
            self._serving = ServingIndex(
                workspace.project, reads.source_bytes, workspace.scan.import_edges, facts if facts.persistent else None,
                reads.project_files, facts.memory(SERVING), reads.config_targets, workspace.serving_ahead, hooks,
            )
            self._serving.declare(settings.serving_entries, settings.config_root)
        return self._serving

    def _modern_only(self, key: "tuple[Path, str]") -> bool:
        """The unit applies weight norm in the modern spelling alone (WN110: the legacy remover cannot fold it)."""
        # Read from the linted file's own facts only: memoising styles here would change what other rules see.
        summary = self._given.get(str(key[0]))
        styles = [
            a.styles for a in summary.applications if a.site.unit == key[1] and a.kind == catalogue.Kind.WEIGHT_NORM.value
        ] if summary is not None else []
        return bool(styles) and all(style == {catalogue.Style.MODERN.value} for style in styles)

    def serving_failures(self) -> "dict[Path, Exception]":
        """The files WN110's index read as code and could not parse (none when it was not needed)."""
        return dict(self._serving.failures) if self._serving is not None else {}

    # -- files ----------------------------------------------------------------
    def _summary(self, file: str, name: str = "*") -> FileSummary | None:
        """The file's summary, read when its attribute ``name`` may matter (``*``: the whole module)."""
        if file in self._loaded:
            return self._loaded[file]
        summary = self._given.get(file)
        if summary is None:
            summary = self.workspace.analyses.summary(Path(file), name)
            if summary is None:
                return None  # not for this name; another may still need the file
        self._loaded[file] = summary
        if summary is not None:
            self._index(file, summary)
        return summary

    def _index(self, file: str, summary: FileSummary) -> None:
        modern = catalogue.Style.MODERN.value
        direct: dict[str, dict[str, set[str]]] = {}
        for application in summary.applications:
            # WN103 migrates only the weight norm a call applies (a flag-selected spectral norm stays as it is).
            migrated = application.kind == catalogue.Kind.WEIGHT_NORM.value and (summary.path, application.site.key) in self._migrated
            styles = {modern} if migrated else application.styles
            direct.setdefault(application.site.unit, {}).setdefault(application.kind, set()).update(styles)
            for style in styles:
                self._witness.setdefault(
                    ((file, application.site.unit), application.kind, style),
                    Witness(summary.path, application.site.line, application.callee or application.api),
                )
        for unit, kinds in direct.items():
            self._direct[(file, unit)] = {kind: frozenset(styles) for kind, styles in kinds.items()}

    def bound_choice(self, summary: FileSummary, ref: str) -> "tuple[str, Site] | None":
        """The file (resolved path) and site of the legacy ``weight_norm`` in the flag choice ``ref`` is bound to.

        ``ref`` is a project name ``summary``'s file imports (``voc.norms.norm_f``); see ``Workspace.bound_choice``.
        """
        found = self.workspace.names.bound_choice(ref, self.workspace.project.locate(_file(summary)))
        return (str(found[0]), found[1]) if found is not None else None

    def summary_at(self, file: str) -> FileSummary | None:
        """The summary of the file at ``file`` (a unit key's first part), read on demand."""
        return self._summary(file)

    # -- names ------------------------------------------------------------------
    def resolve(self, summary: FileSummary, ref: str, depth: int = 0) -> tuple[Key, ...]:
        """The units a qualified name used in ``summary``'s file stands for (a class, a function, a module)."""
        file = _file(summary)
        memo_key = (file, ref)
        cached = self._resolved.get(memo_key)
        if cached is not None:
            return cached
        with provisional(self._resolved, memo_key, ()):  # cycles of re-exports resolve to nothing
            result = self._resolve(summary, file, ref, depth)
        self._resolved[memo_key] = result
        return result

    def _resolve(self, summary: FileSummary, file: str, ref: str, depth: int) -> tuple[Key, ...]:
        if depth > _MAX_CHAIN or ref.partition(".")[0] in API_ROOTS:
            return ()
        local = self._member_of_self(summary, file, ref)
        if local is not None:
            return local
        location = self.workspace.project.locate(file)
        found = self.workspace.project.resolve(ref, location)
        if found is None:
            return ()
        target_path, inner = found
        target_file = str(target_path)
        target = self._summary(target_file, inner.partition(".")[0] or "*")
        if target is None:
            return ()
        return self._member(target, target_file, inner, depth)

    def _member_of_self(self, summary: FileSummary, file: str, ref: str) -> tuple[Key, ...] | None:
        if ref in summary.units:
            return ((file, ref),)
        module = summary.module
        if module and ref.startswith(module + "."):
            head = ref[len(module) + 1 :].partition(".")[0]
            unit = f"{module}.{head}"
            if unit in summary.units:
                return ((file, unit),)
        return None

    def _member(self, target: FileSummary, file: str, inner: str, depth: int) -> tuple[Key, ...]:
        if not inner:
            return ((file, target.module),)
        head, _, rest = inner.partition(".")
        unit = f"{target.module}.{head}" if target.module else head
        if unit in target.units:
            return ((file, unit),)
        out: list[Key] = []
        values = list(target.exports.get(head, ()))
        values.extend(f"{m}.{head}" for m in target.star_modules)
        for value in values:
            out.extend(self.resolve(target, f"{value}.{rest}" if rest else value, depth + 1))
        return tuple(dict.fromkeys(out))

    def callees(self, key: Key) -> tuple[Key, ...]:
        """The units ``key`` calls or inherits from: where a WN103 migration's module may be removed."""
        return self._edges_of(key)

    def _edges_of(self, key: Key) -> tuple[Key, ...]:
        edges = self._edges.get(key)
        if edges is None:
            summary = self._summary(key[0])
            info = summary.units.get(key[1]) if summary is not None else None
            found: list[Key] = []
            if summary is not None and info is not None:
                for ref in info.refs:
                    found.extend(self.resolve(summary, ref))
            edges = self._edges[key] = tuple(dict.fromkeys(found))
        return edges

    # -- styles -------------------------------------------------------------------
    def unit_key_styles(self, start: Key, kind: str) -> frozenset[str]:
        """Styles a unit applies itself or through what it calls or inherits (linear: one SCC pass)."""
        cached = self._styles.get((start, kind))
        if cached is not None:
            return cached
        # Tarjan's strongly connected components, iteratively; every unit reached is memoised.
        index: dict[Key, int] = {}
        low: dict[Key, int] = {}
        stack: list[Key] = []
        on_stack: set[Key] = set()
        acc: dict[Key, set[str]] = {}
        work: list[tuple[Key, int]] = [(start, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
                acc[node] = set(self._direct.get(node, {}).get(kind, ()))
            edges = self._edges_of(node)
            descended = False
            while position < len(edges):
                child = edges[position]
                position += 1
                done = self._styles.get((child, kind))
                if done is not None:
                    acc[node] |= done
                elif child not in index:
                    work.append((node, position))
                    work.append((child, 0))
                    descended = True
                    break
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                else:
                    acc[node] |= acc[child]
            if descended:
                continue
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                union = set().union(*(acc[m] for m in members))
                result = frozenset(union)
                for member in members:
                    acc[member] = union
                    self._styles[(member, kind)] = result
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
                acc[parent] |= acc[node]
        return self._styles[(start, kind)]

    def unit_styles(self, summary: FileSummary, unit: str, kind: str) -> frozenset[str]:
        self._summary(_file(summary))
        return self.unit_key_styles((_file(summary), unit), kind)

    def styles_for(self, summary: FileSummary, unit: str, kind: str) -> frozenset[str]:
        """Styles that may reach code in ``unit``: the unit's own, else everything its file touches."""
        file = _file(summary)
        self._summary(file)
        if unit != summary.module:
            own = self.unit_key_styles((file, unit), kind)
            if own:
                return own
        cached = self._file_styles.get((file, kind))
        if cached is not None:
            return cached
        out: set[str] = set()
        for other in summary.units:
            out |= self.unit_key_styles((file, other), kind)
        for target in summary.imports:
            for key in self.resolve(summary, target):
                out |= self.unit_key_styles(key, kind)
        result = self._file_styles[(file, kind)] = frozenset(out)
        return result

    def witness(self, summary: FileSummary, unit: str, kind: str, style: str) -> "Witness | None":
        """An application of ``kind`` in ``style`` that reaches code in ``unit``, by the path ``styles_for`` takes.

        Messages cite it, so a finding names the binding that decided it
        (and never one that reaches another unit).
        """
        file = _file(summary)
        self._summary(file)
        own = unit != summary.module and bool(self.unit_key_styles((file, unit), kind))
        memo_key = ((file, unit) if own else (file, "*"), kind, style)
        if memo_key in self._witness_found:
            return self._witness_found[memo_key]  # one search per unit (or file): linear in the findings
        starts: list[Key]
        if own:
            starts = [(file, unit)]
        else:
            starts = [(file, other) for other in summary.units]
            for target in summary.imports:
                starts.extend(self.resolve(summary, target))
        found = self._search_witness(starts, kind, style)
        self._witness_found[memo_key] = found
        return found

    def _search_witness(self, starts: list[Key], kind: str, style: str) -> "Witness | None":
        """Breadth first from ``starts``, through units that carry the style: the nearest application."""
        seen: set[Key] = set()
        queue = list(dict.fromkeys(starts))
        position = 0
        while position < len(queue):
            key = queue[position]
            position += 1
            if key in seen:
                continue
            seen.add(key)
            found = self._witness.get((key, kind, style))
            if found is not None:
                return found
            if style in self.unit_key_styles(key, kind):
                queue.extend(edge for edge in self._edges_of(key) if edge not in seen)
        return None


@dataclass(frozen=True)
class Witness:
    """Where an application that decides a finding is written, and the callee as written there."""

    path: str
    line: int
    callee: str

    def cite(self) -> str:
        return f"applied at {Path(self.path).name}:{self.line} via `{self.callee}`"


def _file(summary: FileSummary) -> str:
    return summary.file or summary.path
