"""Removal methods called on a carrier by code that runs (``model.remove_weight_norm()``), and which methods run.

A call inside a method runs when that method does: it is called from code
outside methods, Python or torch call it (``__init__``, ``forward``), a call
on an unknown receiver names it, or a counted call names it on an instance
of the calling class.  The answers are fixpoints over the project's calls,
so chains of any length (and cycles) are followed.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Generic, Hashable, TypeVar

from ...core import catalogue
from .facts import Ref
from .file_facts import FileFacts
from .folds import FoldFinder
from .instances import Carried, Instances
from .resolver import Resolver
from .units import Key, named_as, short

_T = TypeVar("_T", bound=Hashable)
#: A method call as ``facts.py`` records it, with its file: (file, receivers, name, function, calling class, calling method).
Call = tuple[Path, tuple[Ref, ...], str, int, str, str]
#: Members of ``self`` that reach every part it holds: a removal method using one folds whatever the model holds.
_SELF_WHOLE = frozenset({"modules()", "children()", "named_modules()", "named_children()", "apply()", "parameters()", "named_parameters()"})


class MethodFolds:
    """Which removal methods run on a carrier, and the evidence where one does not fold it."""

    def __init__(self, facts: FileFacts, resolver: Resolver, instances: Instances, folds: FoldFinder, carried: Carried) -> None:
        self._facts = facts
        self._resolver = resolver
        self._instances = instances
        self._folds = folds
        self._carried = carried

    def find(
        self, start: Key, files: list[Path], carriers: set[Key], family: set[Key], folding: set[str], live: set[str],
        local: "set[tuple[Path, int]] | None" = None, loaders: "set[Key] | None" = None,
    ) -> tuple[bool, str, set[tuple[Key, str]]]:
        """A removal method called on a carrier by code that runs: True where one folds ``start`` everywhere.

        The second value names a removal call on a carrier that does not count
        because the method holding it never runs, or a removal method that runs
        and leaves the part holding ``start`` for a later step nothing calls
        (the CosyVoice3 F0 predictor); "" when there is none.  The
        third: those partial removal methods (class, name), which do run.
        """
        pending: list[Call] = []
        for file in files:
            facts = self._facts.get(file)
            if facts is not None:
                pending.extend((file, *call) for call in facts.method_calls if call[2] not in facts.training_scopes)
        invoked: set[tuple[str, str]] = set()
        #: Methods called on receivers the index cannot resolve (``self.hparams.generator``): any class's.
        anyone: set[str] = set(live)
        #: Only calls of methods that hold calls need their receivers resolved, and only to those classes:
        #: their names join the carrier names ``instances`` resolves, so the answer is the same whatever
        #: else the run has prepared.
        pairs = {(call[4], call[5]) for call in pending if call[5]}
        callers = {method for _, method in pairs}
        self._carried.interesting.update(short(qual) for qual, _ in pairs)
        waiting = _Waiting(pending)
        partial: dict[tuple[Key, str], str] = {}
        changed = True
        while changed:
            changed = False
            for call in waiting.current():
                file, refs, name, _, caller_class, caller = call
                if caller and caller not in catalogue.IMPLICITLY_CALLED_METHODS and caller not in anyone and (
                    (caller_class, caller) not in invoked
                ):
                    continue
                waiting.remove(call)
                changed = True
                if name in folding and self._removal_folds(start, call, carriers, family, (local, loaders), partial):
                    return True, "", set()
                if name in callers:
                    self._note_invoked(file, refs, name, pairs, invoked, anyone)
        why = self._blocked(waiting.current(), carriers, folding) or next(iter(partial.values()), "")
        return False, why, set(partial)

    def _removal_folds(
        self, start: Key, call: Call, carriers: set[Key], family: set[Key],
        kept: "tuple[set[tuple[Path, int]] | None, set[Key] | None]", partial: dict[tuple[Key, str], str],
    ) -> bool:
        """A removal call that runs folds ``start`` everywhere (True), or is recorded as partial, or as local
        (``kept``: the local folds and the folded loaders, where kept)."""
        left = self._leaves_live(start, call, carriers, family)
        partial.update(left)
        return not left and self._folds_every_instance(call, carriers, family, *kept)

    def _leaves_live(self, start: Key, call: Call, carriers: set[Key], family: set[Key]) -> dict[tuple[Key, str], str]:
        """The message's evidence where a removal method called on a carrier never reaches the part that holds
        ``start`` (``HiFT.remove_weight_norm()`` folds ``ups`` and leaves ``f0_predictor``), by (class, method);
        empty where it may reach it.

        Only a carrier that holds ``start`` in attributes the code names: the
        method (with the methods of ``self`` it calls) reads none of them and
        hands ``self`` to nothing, nor walks ``self.modules()``/``apply()``.
        """
        file, refs, name, _, _, _ = call
        receivers = {(file, r[1]) for r in refs if r[0] == "self" and (file, r[1]) in family}
        receivers |= {k for r in refs if r[0] != "self" for k in self._instances.of(file, r) if k in carriers}
        left: dict[tuple[Key, str], str] = {}
        for key in sorted(receivers):
            parts = self._parts_left(start, key, name, carriers)
            if not parts:
                return {}
            left[(key, name)] = f"`{short(key[1])}.{name}()` runs but never reaches {parts}, where `{short(start[1])}` sits"
        return left

    def _parts_left(self, start: Key, key: Key, name: str, carriers: set[Key]) -> str:
        """The attributes of a ``key`` instance holding ``start`` that its method ``name`` leaves ("": none, or not known)."""
        family = [key, *self._resolver.bases(key)]
        if start in family:
            return ""
        view = self._resolver.class_view(key)
        read = view.executed((f"{name}()",), whole=_SELF_WHOLE)
        if read is None:
            return ""
        keys = set(family)
        left: set[str] = set()
        for child in (c for c in carriers if c not in keys and self._carried.parents.get(c, set()) & keys):
            if short(child[1]) in view.loose:
                return ""  # built other than as one attribute's value: where it sits is not known
            holding = {
                attr for attr, refs in view.attrs.items()
                if any(named_as(ref, child) or child in self._instances.of(file, ref) for file, ref in refs)
            }
            if not holding or "*" in holding or holding & read:
                return ""
            left |= holding
        return " and ".join(f"`{attr}`" for attr in sorted(left))

    def _folds_every_instance(
        self, call: Call, carriers: set[Key], family: set[Key], local: "set[tuple[Path, int]] | None",
        loaders: "set[Key] | None" = None,
    ) -> bool:
        """A removal call that runs folds a carrier wherever it is served; one on a model its function builds (outside
        methods), or on a loader's result, folds that model only, and is recorded in ``local`` instead (where kept)."""
        file, refs, _, scope, _, caller = call
        if not self._call_reaches(file, refs, carriers, family):
            return False
        return bool(caller) or not self._folds.folds_here(file, refs, scope, local, loaders)

    def _note_invoked(
        self, file: Path, refs: tuple[Ref, ...], name: str, pairs: set[tuple[str, str]], invoked: set[tuple[str, str]],
        anyone: set[str],
    ) -> None:
        """Record that ``name`` runs on the classes ``refs`` stand for (and their bases), or on any class."""
        receivers = {k for r in refs for k in self._instances.of(file, r)}
        if not receivers and all(self._instances.unresolved(file, r) for r in refs):
            anyone.add(name)  # ``self.hparams.generator.remove_weight_norm()``: whose, the code does not say
        for key in receivers:
            invoked.update((k[1], name) for k in (key, *self._resolver.bases(key)) if (k[1], name) in pairs)

    def _call_reaches(self, file: Path, refs: tuple[Ref, ...], carriers: set[Key], family: set[Key]) -> bool:
        """A call's receiver is a carrier; ``self`` in a method of the carriers' classes or their bases counts too."""
        own = [r for r in refs if r[0] == "self"]
        return any((file, r[1]) in family for r in own) or self._instances.reaches(file, [r for r in refs if r[0] != "self"], carriers)

    def _blocked(self, pending: list[Call], carriers: set[Key], folding: set[str]) -> str:
        """The message's evidence: a removal call on a carrier inside a method that never runs."""
        for file, refs, name, _, caller_class, caller in pending:
            if name in folding and self._instances.reaches(file, [r for r in refs if r[0] != "self"], carriers):
                method = f"{short(caller_class)}.{caller}()"
                return f"`{method}` calls `.{name}()` on it, but nothing calls `{method}`"
        return ""

    def live_methods(self, files: list[Path], skip: "set[tuple[Path, str, int]] | None" = None) -> set[str]:
        """Method names something calls: from code outside methods, or from methods that are themselves live.

        ``skip``: calls (file, name, function) made only on a model that function builds (``fresh_removals``):
        they fold that model, which ``find`` tells apart, not any instance.
        """
        calls: set[tuple[str, str]] = set()
        guarded: set[tuple[str, str, str]] = set()
        flags: set[tuple[str, str]] = set()
        for file in files:
            facts = self._facts.get(file)
            if facts is not None:
                calls |= {
                    (name, caller) for name, caller, scope in facts.attribute_calls
                    if scope not in facts.training_scopes and (file, name, scope) not in (skip or ())
                }
                guarded |= facts.guarded_calls
                flags |= facts.flag_calls
        # A call under ``if flag:`` runs when some call of its method passes ``flag=True``.
        calls |= {(name, caller) for name, caller, flag in guarded if (caller, flag) in flags}
        live: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, caller in calls:
                if name in live:
                    continue
                if caller == "" or caller in catalogue.IMPLICITLY_CALLED_METHODS or (caller in live and caller != name):
                    live.add(name)
                    changed = True
        return live


class _Waiting(Generic[_T]):
    """A list whose ``remove`` drops the first equal item, as ``list.remove`` does, without comparing the items before it.

    ``MethodFolds.find`` removes each call as its method is found to run; its calls start
    with a ``Path``, whose comparison runs in Python, and a big project holds thousands.
    """

    def __init__(self, items: list[_T]) -> None:
        self._items = items
        self._alive = [True] * len(items)
        self._at: dict[_T, collections.deque[int]] = {}
        for position, item in enumerate(items):
            self._at.setdefault(item, collections.deque()).append(position)

    def current(self) -> list[_T]:
        """The items not removed, in their order."""
        return [item for item, alive in zip(self._items, self._alive) if alive]

    def remove(self, item: _T) -> None:
        self._alive[self._at[item].popleft()] = False
