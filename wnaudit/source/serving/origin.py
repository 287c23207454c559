"""Where the model at a site or fold comes from: built right there, or a project loader's result.

A fold covers the object it is given.  A model a function builds itself (a
project class called, a config or registry instantiated) is folded only by a
fold in that function; a loader's result is folded by its caller's fold, for
that caller and the loader.  WN110's verdict and its fix placement both ask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from .facts import Ref, Use
from .file_facts import FileFacts
from .resolver import Resolver
from .units import Key


class ModelOrigin:
    """Answers to "is this model built here?" and "which loader returned it?"."""

    def __init__(self, facts: FileFacts, resolver: Resolver) -> None:
        self._facts = facts
        self._resolver = resolver

    def fresh(self, file: Path, ref: Ref) -> bool:
        """``ref`` is a model built where it is used: a project class called, a config or registry instantiated."""
        if ref[0] in ("conf", "registry", "members") or (ref[0] == "sub" and len(ref) > 2 and ref[2] == "conf"):
            return True
        if ref[0] != "new":
            return False
        return self._resolver.is_class(file, ref[1])

    def all_fresh(self, file: Path, refs: Iterable[Ref]) -> bool:
        refs = tuple(refs)
        return bool(refs) and all(self.fresh(file, ref) for ref in refs)

    def loader_result(self, file: Path, refs: Iterable[Ref]) -> set[Key]:
        """The project functions ``refs`` are all results of (``load_model(path)``); empty where one is something else."""
        found: set[Key] = set()
        for ref in refs:
            hit = self._resolver.lookup(file, ref[1]) if ref[0] == "new" else None
            if hit is None or hit[1] or self._facts.function_of(hit[0]) is None:
                return set()
            found.add(hit[0])
        return found

    def loader_spans(self, loaders: set[Key]) -> list[tuple[Path, int, int]]:
        """The lines of the folded loaders and of the project functions they return the result of, transitively."""
        spans: list[tuple[Path, int, int]] = []
        queue, seen = sorted(loaders), set(loaders)
        while queue:
            key = queue.pop()
            body = self._facts.function_of(key)
            if body is None:
                continue
            spans.append((key[0], body.line, body.end_line))
            for inner in self.loader_result(key[0], body.returns) - seen if body.returns else ():
                seen.add(inner)
                queue.append(inner)
        return spans

    def own_model(self, file: Path, use: Use, loaders: set[Key]) -> bool:
        """The site's function builds its model, or takes it from a loader whose result a caller folds: a fold
        elsewhere is of another object, so only one in that function covers it."""
        if use.kind == "inherited" or not use.refs:
            return False
        if all(self.fresh(file, ref) for ref in use.refs):
            return True
        from_loader = self.loader_result(file, use.refs) if loaders else set()
        return bool(from_loader) and from_loader <= loaders
