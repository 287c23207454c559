"""Which project class or function a name used in a file stands for, and what a class inherits.

WN110 follows names across modules (re-exports, star imports, aliases) to the
units that define them; each (file, dotted name) is resolved once per run,
and each class's project bases are walked once (``names.py`` keeps the
per-module answers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ..project import Project
from ..provisional import provisional
from .effects import ClassView
from .facts import ServingFacts
from .file_facts import FileFacts
from .names import ModuleNames
from .units import MAX_DEPTH, Key


class Resolver:
    """Kept answers to "what does this name stand for in the project?" and "what does this class inherit?"."""

    def __init__(self, project: Project, facts: FileFacts, mentions: Callable[[Path, str], bool]) -> None:
        self._project = project
        self._facts = facts
        self._lookups: dict[tuple[Path, str], tuple[Key, str] | None] = {}
        #: What each name bound in a project module stands for (``_member``), resolved once per run.
        self._names = ModuleNames(project, facts.get, mentions, MAX_DEPTH)
        self._bases: dict[Key, list[Key]] = {}
        self._lineages: dict[Key, frozenset[Key]] = {}

    def lookup(self, file: Path, dotted: str, depth: int = 0) -> tuple[Key, str] | None:
        """The project class or function a qualified name used in ``file`` stands for, and the rest of the name."""
        if depth > MAX_DEPTH or not dotted or dotted.partition(".")[0] in ("torch", "wnaudit"):
            return None
        memo = (file, dotted)
        if memo in self._lookups:
            return self._lookups[memo]
        with provisional(self._lookups, memo, None):  # a cycle of re-exports resolves to nothing
            result = self._lookup(file, dotted, depth)
        self._lookups[memo] = result
        return result

    def _lookup(self, file: Path, dotted: str, depth: int) -> tuple[Key, str] | None:
        facts = self._facts.get(file)
        if facts is None:
            return None
        module = facts.module
        if module and dotted.startswith(module + "."):
            found = self._member(file, facts, dotted[len(module) + 1 :], depth)
            if found is not None:
                return found
        location = self._project.locate(file)
        resolved = self._project.resolve(dotted, location)
        if resolved is None:
            return None
        target, inner = resolved
        target_facts = self._facts.get(target)
        if target_facts is None or not inner:
            return None
        return self._member(target, target_facts, inner, depth)

    def _member(self, file: Path, facts: ServingFacts, inner: str, depth: int) -> tuple[Key, str] | None:
        """``inner`` inside the module ``file`` (whose facts are ``facts``), each of its names resolved once per run (``names.py``)."""
        found = self._names.member(file, inner, depth)
        if found is None or not found[1]:
            return None
        return (found[0], found[1]), found[2]

    def resolved_all(self, file: Path, names: Iterable[str], only: "set[str] | frozenset[str] | None" = None) -> set[Key]:
        """The project units ``names`` stand for; with ``only``, just the names whose last part is in it.

        Resolving a name may walk re-exports and star imports of large
        ``__init__`` files; ``only`` keeps that to the names that can matter.
        """
        out: set[Key] = set()
        for name in names:
            if only is not None and name.rpartition(".")[2] not in only:
                continue
            found = self.lookup(file, name)
            if found is not None and not found[1]:
                out.add(found[0])
        return out

    def resolves_to(self, file: Path, name: str, keys: set[Key]) -> bool:
        found = self.lookup(file, name)
        return found is not None and not found[1] and found[0] in keys

    def is_class(self, file: Path, name: str) -> bool:
        """``name`` in ``file`` stands for a project class itself (not a member of one)."""
        found = self.lookup(file, name)
        return found is not None and not found[1] and self._facts.class_of(found[0]) is not None

    def bases(self, key: Key) -> list[Key]:
        """The project classes a class inherits from, nearest first (its MRO within the project)."""
        cached = self._bases.get(key)
        if cached is not None:
            return cached
        out: list[Key] = []
        queue = [key]
        seen = {key}
        while queue:
            current = queue.pop(0)
            facts = self._facts.class_of(current)
            if facts is None:
                continue
            for base in self.resolved_all(current[0], facts.bases):
                if base not in seen and self._facts.class_of(base) is not None:
                    seen.add(base)
                    out.append(base)
                    queue.append(base)
        self._bases[key] = out
        return out

    def family(self, classes: set[Key]) -> set[Key]:
        """The classes and every project class they inherit from."""
        family = set(classes)
        for key in classes:
            family.update(self.bases(key))
        return family

    def typed(self, file: Path, annotation: list[str], among: Iterable[Key]) -> set[Key]:
        """The classes ``among`` an annotation admits: the named project class and its subclasses."""
        types = {k for k in self.resolved_all(file, annotation) if self._facts.class_of(k) is not None}
        return {c for c in among if not types.isdisjoint(self._lineage(c))} if types else set()

    def _lineage(self, key: Key) -> frozenset[Key]:
        """The class and its project bases as one set (empty: not a class); ``typed`` asks it of every prepared unit."""
        found = self._lineages.get(key)
        if found is None:
            found = self._lineages[key] = frozenset((key, *self.bases(key))) if self._facts.class_of(key) is not None else frozenset()
        return found

    def class_view(self, key: Key) -> ClassView:
        """A class with its project bases, as the question "what does running it execute?" needs it."""
        return ClassView([(k, c) for k in (key, *self.bases(key)) if (c := self._facts.class_of(k)) is not None])

    def table_home(self, file: Path, table: str) -> Key | None:
        """Where a module-level table lives: (its file, its qualified name there), following imports."""
        facts = self._facts.get(file)
        prefix = f"{facts.module}." if facts is not None and facts.module else ""
        if facts is not None and table.startswith(prefix) and "." not in table[len(prefix):]:
            return (file, table)
        resolved = self._project.resolve(table, self._project.locate(file))
        if resolved is None or not resolved[1] or "." in resolved[1]:
            return None
        home = self._facts.get(resolved[0])
        return (resolved[0], f"{home.module}.{resolved[1]}" if home.module else resolved[1]) if home is not None else None

    def registry_of(self, file: Path, decorator: str) -> Key | None:
        """The table a decorator (a registrar) stores the class it decorates into, where the table lives."""
        found = self.lookup(file, decorator)
        if found is None or found[1]:
            return None
        facts = self._facts.get(found[0][0])
        table = facts.registrars.get(found[0][1]) if facts is not None else None
        return self.table_home(found[0][0], table) if table else None
