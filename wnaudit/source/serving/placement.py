"""Which inference sites get a fold of their own, and where a fold would clash with a removal already there.

Every site is folded by the fix or reported, not only the first: a site
whose function builds its own model gets its own fold; sites whose model
comes from elsewhere share one; a declared entry takes the fold before the
loader it returns from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .declared import DeclaredEntries
from .facts import Use
from .file_facts import FileFacts
from .folds import FoldFinder
from .instances import Instances
from .origin import ModelOrigin
from .resolver import Resolver
from .units import Key, Site


class FoldPlacement:
    """The sites a verdict names, one per model that needs its own fold, in order."""

    def __init__(
        self, facts: FileFacts, resolver: Resolver, instances: Instances, origin: ModelOrigin, folds: FoldFinder,
        entries: DeclaredEntries, excluded: Callable[[Path], bool],
    ) -> None:
        self._facts = facts
        self._resolver = resolver
        self._instances = instances
        self._origin = origin
        self._folds = folds
        self._entries = entries
        #: ``exclude`` patterns in force: a site in an excluded file is never named nor given a fold.
        self._excluded = excluded

    def uncovered(
        self, sites: list[Site], local: set[tuple[Path, int]], entries: "list[Site] | None" = None,
        loaders: "set[Key] | None" = None,
    ) -> list[Site]:
        """The sites no fold covers, one per function that builds its own model, in order: each gets its own fold.

        A site whose model its function builds (a class called, a config or a
        registry instantiated) is covered only by a fold in that same function:
        two loaders that each build the model are two models.  A site whose
        model comes from elsewhere (a loader's result, an attribute) is covered
        by any fold of the model, as the fold may be where it came from; such
        sites are reported (one) only where no function building its own is.
        A fold of a loader's result in a caller (``loaders``) covers the
        loader's own sites and the caller's, not a site of another caller that
        takes the model from that loader: that one is reported on its own.
        """
        fresh: dict[tuple[Path, int], Site] = {}
        other: list[Site] = []
        spans = self._origin.loader_spans(loaders or set())
        for site in sites:
            file, use, _ = site
            if self._excluded(file) or any(f == file and first <= use.line <= last for f, first, last in spans):
                continue  # a loader class in an excluded file: not named, not fixed; a loader a caller folds
            if self._origin.own_model(file, use, loaders or set()):
                if (file, use.scope) not in local:
                    fresh.setdefault((file, use.scope), site)
            elif not local:
                other.append(site)
        found = list(fresh.values()) or other[:1]
        return self._at_entries(found, [s for s in sites if s in (entries or ()) and s not in found], local) if entries else found

    def _at_entries(self, found: list[Site], entries: list[Site], local: set[tuple[Path, int]]) -> list[Site]:
        """Declared entries take the fold: an entry returning a model no fold covers is reported there, and a site
        in a function the entry calls (the loader it returns from) gives way to it: one fold, at the entry."""
        placed = {(s[0], s[1].scope) for s in found}  # a site of the entry itself already takes the fold
        live = [
            s for s in entries
            if (s[0], s[1].scope) not in local | placed and not (local and not self._origin.all_fresh(s[0], s[1].refs))
        ]
        if not live:
            return found
        called = {key for file, _, body in self._entries.bodies() for key in self._resolver.resolved_all(file, body.callees)}
        spans = [(k[0], b.line, b.end_line) for k in called if (b := self._facts.function_of(k)) is not None]
        kept = [s for s in found if not any(s[0] == f and first <= s[1].line <= last for f, first, last in spans)]
        return [*live, *(s for s in kept if s not in live)]

    def removal_at(self, file: Path, use: Use, carriers: set[Key], family: set[Key], folding: set[str]) -> str:
        """A removal of a carrier, of either spelling, that the site's function already runs, or may run under a
        configuration flag: a fold added beside it would make one of the two raise."""
        facts = self._facts.as_read(file)
        if facts is None:
            return ""
        for fold in facts.folds:
            if fold.scope == use.scope and not (fold.partial or fold.excluded) and self._folds.fold_reaches(file, fold.refs, carriers):
                return fold.what  # a partial one folds what it reaches, once: a full fold beside it is safe
        removers = set(folding) | {
            name for key in family if (cls := self._facts.class_of(key)) is not None
            for name, body in cls.methods.items() if body.folds
        }
        for refs, name, scope, _, caller in facts.method_calls:
            if scope == use.scope and not caller and name in removers and self._instances.reaches(file, refs, carriers):
                return f"{use.target or 'model'}.{name}()"
        return ""
