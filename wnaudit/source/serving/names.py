"""What a name bound in a project module stands for, each (module, name) resolved once per run.

WN110 follows a class's name through re-exports and star imports
(``from .elements import *`` in a package ``__init__``).  Following each
*spelling* of a dotted name anew (``pkg.elements.comparison.elements...``)
explores every path through modules that import each other, failures
included: NeMo's ``neural_types`` made that exponential.  Here the unit is
one name in one module: its answer (a class or function, a module, or
nothing) is computed once and kept, success or failure, and a dotted name is
walked one part at a time through those answers.

Names that reach each other through a cycle of re-exports share an answer
(Tarjan's algorithm, as ``reachability.py``): while the cycle is being
explored a name reached again reads "nothing" for now, and when the cycle's
first name is done, the members that found nothing take its answer (they
reach it), so no kept answer depends on which name was asked first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..project import Project
from .facts import ServingFacts

#: (file, qualified name of a class or function there, "" for the module itself; the rest of the dotted name).
Target = tuple[Path, str, str]
_NAME_SUFFIXES = (".py",)


class ModuleNames:
    """Kept answers to "what does ``name`` stand for in the module ``file``?" for one run."""

    def __init__(
        self, project: Project, facts: Callable[[Path], "ServingFacts | None"], mentions: Callable[[Path, str], bool],
        max_depth: int,
    ) -> None:
        self._project = project
        self._facts = facts
        self._mentions = mentions
        #: A chain of re-exports longer than this is not followed (the Python stack grows with it).
        self._max_depth = max_depth
        self._known: dict[tuple[Path, str], Target | None] = {}
        self._open: dict[tuple[Path, str], int] = {}
        self._stack: list[tuple[Path, str]] = []
        #: Members of an open cycle that finished, with what they found themselves (None: they take the cycle's answer).
        self._found: dict[tuple[Path, str], Target | None] = {}
        self._count = 0
        self._low = 1 << 62

    def member(self, file: Path, inner: str, depth: int = 0) -> Target | None:
        """The dotted name ``inner`` inside the module ``file``, one part at a time."""
        parts = inner.split(".")
        current = file
        for position, head in enumerate(parts):
            found = self.name(current, head, depth)
            if found is None:
                return None
            target, qual, _ = found
            if qual:
                return target, qual, ".".join(parts[position + 1 :])
            current = target
        return current, "", ""

    def value(self, file: Path, dotted: str, depth: int) -> Target | None:
        """An absolute dotted name as the module ``file`` sees it (an import's value, ``star.name``)."""
        facts = self._facts(file)
        module = facts.module if facts is not None else ""
        if module and dotted.startswith(module + "."):
            found = self.member(file, dotted[len(module) + 1 :], depth)
            if found is not None:
                return found
        resolved = self._project.resolve(dotted, self._project.locate(file))
        if resolved is None:
            return None
        target, inner = resolved
        if not inner:
            return target, "", ""
        if self._facts(target) is None:
            return None
        return self.member(target, inner, depth)

    def name(self, file: Path, head: str, depth: int) -> Target | None:
        """What ``head`` stands for in ``file``, kept for the run (memoised failures too)."""
        key = (file, head)
        if key in self._known:
            return self._known[key]
        order = self._open.get(key)
        if order is not None:  # a cycle back into the names being explored: nothing for now
            self._low = min(self._low, order)
            return None
        if depth > self._max_depth:
            self._known[key] = None
            return None
        order = self._open[key] = self._count
        self._count += 1
        self._stack.append(key)
        outer, self._low = self._low, order
        try:
            result = self.resolve_name(file, head, depth)
        except BaseException:
            while self._stack:  # abandon this cycle; nothing half-answered is kept
                member = self._stack.pop()
                del self._open[member]
                self._found.pop(member, None)
                if member == key:
                    break
            self._low = outer
            raise
        low = self._low
        if low >= order:  # the cycle's first name: the members that found nothing reach its answer
            while True:
                member = self._stack.pop()
                del self._open[member]
                own = result if member == key else self._found.pop(member, None)
                self._known[member] = own if own is not None else result
                if member == key:
                    break
        else:
            self._found[key] = result
        self._low = min(outer, low)
        return result

    def resolve_name(self, file: Path, head: str, depth: int) -> Target | None:
        """One name's own resolution: defined here, imported (re-exported), brought by a star import, or a submodule."""
        facts = self._facts(file)
        if facts is None:
            return None
        qual = f"{facts.module}.{head}" if facts.module else head
        if qual in facts.classes or qual in facts.functions:
            return file, qual, ""
        values = list(facts.exports.get(head, ()))
        if facts.star_modules:
            location = self._project.locate(file)
            for star in facts.star_modules:
                # A star import can only bring ``head`` from a module whose text names it: a byte search
                # spares walking the hundreds of star imports of a large package ``__init__``.
                module = self._project.module_file(star, location)
                if module is not None and module.suffix in _NAME_SUFFIXES and self._mentions(module, head):
                    values.append(f"{star}.{head}")
        for value in values:
            found = self.value(file, value, depth + 1)
            if found is not None:
                return found
        if facts.module and self._project.locate(file).is_package:
            return self._submodule(file, facts.module, head)
        return None

    def _submodule(self, file: Path, module: str, head: str) -> Target | None:
        """``pkg.head`` where ``pkg`` is the package ``file`` and ``head`` one of its modules (attribute access after import)."""
        resolved = self._project.resolve(f"{module}.{head}", self._project.locate(file))
        if resolved is None or resolved[1]:
            return None
        return resolved[0], "", ""
