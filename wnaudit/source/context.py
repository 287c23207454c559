"""Which weight-norm spellings may reach a removal: within its class, its file, its package.

The index is built from every analysed file of the run, so a class weight-normed
in one module and removed in another (a subclass, or a function that imports
it) resolves through the package's imports.  ``migrated`` lets the fixer ask
the same question about the code as it will be after WN103 fixes.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from ..core import catalogue
from .model import FileSummary


class Context:
    def __init__(self, summaries: Iterable[FileSummary], migrated: frozenset[tuple[str, tuple]] = frozenset()) -> None:
        self.summaries = sorted(summaries, key=lambda s: s.path)
        self._direct: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        self._refs: dict[str, tuple[str, ...]] = {}
        modern = catalogue.Style.MODERN.value
        for summary in self.summaries:
            for unit, info in summary.units.items():
                self._refs[unit] = tuple(sorted(set(self._refs.get(unit, ())) | set(info.refs)))
            for application in summary.applications:
                styles = {modern} if (summary.path, application.site.key) in migrated else application.styles
                self._direct[application.site.unit][application.kind].update(styles)
        self._by_leaf: dict[str, list[str]] = defaultdict(list)
        for key in sorted(self._refs):
            self._by_leaf[key.rpartition(".")[2]].append(key)
        self._memo: dict[tuple[str, str], frozenset[str]] = {}

    def _lookup(self, qualname: str) -> list[str]:
        if qualname in self._refs:
            return [qualname]
        leaf = qualname.rpartition(".")[2]
        return [k for k in self._by_leaf.get(leaf, ()) if k.endswith("." + qualname) or qualname.endswith("." + k)]

    def unit_styles(self, unit: str, kind: str) -> frozenset[str]:
        """Styles a top-level class/function applies itself or through what it calls or inherits."""
        out: set[str] = set()
        seen: set[str] = set()
        stack = [unit]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            memo = self._memo.get((current, kind))
            if memo is not None:
                out |= memo
                continue
            out |= self._direct.get(current, {}).get(kind, set())
            for ref in self._refs.get(current, ()):
                stack.extend(self._lookup(ref))
        result = frozenset(out)
        self._memo[(unit, kind)] = result
        return result

    def styles_for(self, summary: FileSummary, unit: str, kind: str) -> frozenset[str]:
        """Styles that may reach code in ``unit``: the unit's own, else everything its file touches."""
        if unit != summary.module:
            own = self.unit_styles(unit, kind)
            if own:
                return own
        out: set[str] = set()
        for other in summary.units:
            out |= self.unit_styles(other, kind)
        for target in summary.imports:
            for key in self._lookup(target):
                out |= self.unit_styles(key, kind)
        return frozenset(out)
