"""Does the project's code fold a carrier: a fold API on it, a fold helper given it, a removal method it calls?

The spelling matters: the legacy remover cannot fold the modern weight norm
(it raises, however a ``try`` hides it), so where a start applies only the
modern spelling (``modern``) a fold by the legacy remover alone folds nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ...core import catalogue
from .effects import FoldSummaries
from .facts import Body, HelperCall, Ref, ServingFacts, Use
from .file_facts import FileFacts
from .instances import Instances
from .origin import ModelOrigin
from .pools import ProjectPools
from .resolver import Resolver
from .units import Key, short

#: Words a fold helper's file must contain: the removers' names, ``wnaudit`` (its folds) and ``onnx.export``.
_FOLD_WORDS = tuple(sorted({
    api.rpartition(".")[2] for s in catalogue.SPELLINGS if s.kind is not catalogue.Kind.SPECTRAL_NORM
    for api in s.remove_apis
} | {"fold_weight_norm", "wnaudit", "onnx.export"}))


class FoldFinder:
    """The folds of a carrier the project's code makes, for the start whose spelling ``modern`` says."""

    def __init__(
        self, pools: ProjectPools, facts: FileFacts, resolver: Resolver, instances: Instances, origin: ModelOrigin,
    ) -> None:
        self._pools = pools
        self._facts = facts
        self._resolver = resolver
        self._instances = instances
        self._origin = origin
        #: The start asked about applies only the modern spelling (set per verdict by the index).
        self.modern = False
        #: Per project root and spelling: last parts of the names of the functions that fold (a remover, ``wnaudit.fold*``).
        self._fold_helpers: dict[tuple[Path, bool], frozenset[str]] = {}
        #: What each project function does to the models it is given (``effects.py``).
        self.summaries = FoldSummaries(facts.function_of, resolver.resolved_all)

    def body_folds(self, body: Body) -> bool:
        """The body calls a remover or fold API that can fold this start's spelling (the legacy one cannot fold
        the modern: it raises, however a ``try`` hides it)."""
        return body.folds_modern if self.modern else body.folds

    def function_folds(self, key: Key, folding: set[str], depth: int = 0) -> bool:
        body = self._facts.function_of(key)
        if body is None or depth > 8:
            return False
        if self.body_folds(body) or (body.calls - body.guarded) & folding:
            return True
        helpers = self.helpers_of(key[0])
        return any(
            self.function_folds(k, folding, depth + 1) for k in self._resolver.resolved_all(key[0], body.callees, helpers) if k != key
        )

    def helpers_of(self, file: Path) -> frozenset[str]:
        """Names of the project's fold helpers: functions that call a remover or a fold API (found by a byte search)."""
        pool = self._pools.pool(file)
        found = self._fold_helpers.get((pool.root, self.modern))
        if found is None:
            self._pools.search(pool, _FOLD_WORDS)
            names: set[str] = set()
            paths = self._pools.mentioning(pool, set(_FOLD_WORDS))
            self._facts.read_ahead(paths)
            for path in paths:
                facts = self._facts.get(path)
                for qual, body in facts.functions.items() if facts is not None else ():
                    if self.body_folds(body):
                        names.add(short(qual))
            found = self._fold_helpers[(pool.root, self.modern)] = frozenset(names)
        return found

    def folding_methods(self, family: set[Key]) -> set[str]:
        """Names of the methods in ``family`` that fold: they call a remover, or a method of that name that does."""
        names: set[str] = set()
        helpers = self.helpers_of(next(iter(family))[0]) if family else frozenset()
        changed = True
        while changed:
            changed = False
            for key in family:
                cls = self._facts.class_of(key)
                for name, body in cls.methods.items() if cls is not None else ():
                    if name in names:
                        continue
                    if self.body_folds(body) or (body.calls - body.guarded) & names or any(
                        self.function_folds(k, names) for k in self._resolver.resolved_all(key[0], body.callees, helpers)
                    ):
                        names.add(name)
                        changed = True
        return names

    def defines_fold(self, key: Key, name: str, folding: set[str]) -> bool:
        cls = self._facts.class_of(key)
        body = cls.methods.get(name) if cls is not None else None
        return body is not None and (self.body_folds(body) or bool((body.calls - body.guarded) & folding) or any(
            self.function_folds(k, folding) for k in self._resolver.resolved_all(key[0], body.callees, self.helpers_of(key[0]))
        ))

    def fold_reaches(self, file: Path, refs: Iterable[Ref], carriers: set[Key]) -> bool:
        """A fold API given a carrier: ``fold(model.dec)`` reaches what ``dec`` holds, not the siblings the served
        forward also runs; a member that resolves to nothing stands for its owner, as before."""
        for ref in refs:
            found = self._instances.of(file, ref)
            while not found and ref[0] == "sub" and len(ref) > 2:
                ref = tuple(ref[2:])
                found = self._instances.of(file, ref)
            if found & carriers:
                return True
        return False

    def folded_in(
        self, file: Path, facts: ServingFacts, carriers: set[Key], folding: set[str],
        local: "set[tuple[Path, int]] | None" = None, loaders: "set[Key] | None" = None,
    ) -> bool:
        """Does the file fold a carrier: a fold API on it, a fold helper given it, or its removal method called?

        ``local``: where given, a fold of a model built in the same function is recorded there (it covers
        that function's sites only) instead of counting as a fold of every instance.
        """
        for use in facts.folds:
            if (use.legacy and self.modern) or use.partial:
                continue  # the legacy remover on the modern spelling raises (WN101); a loop skipping parts leaves them
            if use.scope not in facts.training_scopes and self.fold_reaches(file, use.refs, carriers):
                if use.excluded and not self._excluded_elsewhere(file, use, carriers):
                    continue  # ``exclude=`` leaves the part that holds the site (or one the index cannot place)
                if not self.folds_here(file, [_owner_ref(r) for r in use.refs], use.scope, local, loaders):
                    return True
        for call in facts.helper_calls:
            if call.scope not in facts.training_scopes and self.helper_folds(file, call, carriers, folding):
                if not self.folds_here(file, call.refs, call.scope, local, loaders):
                    return True
        return False

    def folds_here(
        self, file: Path, refs: Iterable[Ref], scope: int, local: "set[tuple[Path, int]] | None", loaders: "set[Key] | None",
    ) -> bool:
        """A fold of a model its function builds, or of a loader's result: recorded as covering that function's sites
        (and the loader's, in ``loaders``), True; False where it covers every site (or no record is kept)."""
        refs = tuple(refs)
        if local is None:
            return False
        if self._origin.all_fresh(file, refs):
            local.add((file, scope))
            return True
        from_loader = self._origin.loader_result(file, refs) if loaders is not None and refs else set()
        if from_loader and loaders is not None:
            local.add((file, scope))
            loaders |= from_loader
            return True
        return False

    def helper_folds(self, file: Path, call: HelperCall, carriers: set[Key], folding: set[str]) -> bool:
        """A project function given a carrier folds it (``remove_weight_norm_recursively(model)``)."""
        if not self._instances.reaches(file, call.refs, carriers):
            return False
        if any(self.function_folds(k, folding) for k in self._resolver.resolved_all(file, call.callee, self.helpers_of(file))):
            return True
        callees = self._resolver.resolved_all(file, call.callee) if call.position >= 0 or call.keyword else set()
        return any(
            self.summaries.folds(k, call.position, folding) if call.position >= 0
            else self.summaries.folds_keyword(k, call.keyword, folding) for k in callees
        )

    def _excluded_elsewhere(self, file: Path, use: Use, carriers: set[Key]) -> bool:
        """Is every member a partial fold's ``exclude=`` names known, and none of them holds a carrier?

        A member the index cannot resolve may hold the site: the fold is then not taken for one.
        """
        for ref in use.refs:
            for name in use.excluded:
                held = self._instances.of(file, ("sub", name, *ref))
                if not held or held & carriers:
                    return False
        return True

    def removal_method_called(self, family: set[Key], folding: set[str], live: set[str]) -> bool:
        """A removal method of the family that something calls folds the model."""
        for key in sorted(family):
            cls = self._facts.class_of(key)
            for name in sorted(cls.methods) if cls is not None else ():
                if name in folding and name in live and self.defines_fold(key, name, folding):
                    return True
        return False

    def fresh_removals(self, files: list[Path], carriers: set[Key], folding: set[str]) -> set[tuple[Path, str, int]]:
        """Removal methods called, outside methods, only on models built in the calling function: (file, name, scope)."""
        out: set[tuple[Path, str, int]] = set()
        for file in files:
            facts = self._facts.get(file)
            calls = facts.method_calls if facts is not None else []
            mixed = {(name, scope) for refs, name, scope, _, caller in calls if not caller and not self._origin.all_fresh(file, refs)}
            out |= {
                (file, name, scope) for refs, name, scope, _, caller in calls
                if not caller and name in folding and (name, scope) not in mixed and self._instances.reaches(file, refs, carriers)
            }
        return out

    def uncalled(
        self, reached: frozenset[Key], family: set[Key], folding: set[str], live: set[str], ran: "set[tuple[Key, str]]",
    ) -> str:
        """A removal method of the model nothing calls (``ran``: partial ones that do run, not named)."""
        for group in (sorted(reached), sorted(family - reached)):
            for key in group:
                cls = self._facts.class_of(key)
                for name in sorted(cls.methods) if cls is not None else ():
                    if name in folding and name not in live and (key, name) not in ran and self.defines_fold(key, name, folding):
                        return f"{short(key[1])}.{name}()"
        return ""


def _owner_ref(ref: Ref) -> Ref:
    """The model a member reference belongs to (``model`` of ``model.dec``)."""
    while ref[0] == "sub" and len(ref) > 2:
        ref = tuple(ref[2:])
    return ref
