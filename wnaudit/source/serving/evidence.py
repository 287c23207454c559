"""The evidence WN110's message quotes where nothing folds a served model: why a candidate fold does not count.

A fold that runs only in training code, one under a flag no call passes, a
loop that skips parts, or, where there is none of those, what was looked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ...core import catalogue
from .facts import ServingFacts
from .file_facts import FileFacts
from .folds import FoldFinder
from .instances import Instances
from .units import Key, short


class Evidence:
    """The first candidate fold that does not count, as the message words it."""

    def __init__(self, facts: FileFacts, instances: Instances, folds: FoldFinder) -> None:
        self._facts = facts
        self._instances = instances
        self._folds = folds

    def why_not_folded(
        self, start: Key, files: list[Path], carriers: set[Key], family: set[Key], folding: set[str], uncalled: bool,
    ) -> str:
        """The message's evidence: a fold that runs only in training, one under a flag nobody passes, or what was sought."""
        why = self._in_training_only(files, carriers, folding) or self._flag_guarded(family, folding) or self._partial(files, carriers)
        if why or uncalled:
            return why
        return (
            f"nothing folds `{short(start[1])}` on the way (looked for: a removal method called on it, a remover or "
            "`wnaudit.fold_weight_norm` on it or on each of its `modules()`, a project function given it that folds it)"
        )

    def _in_training_only(self, files: list[Path], carriers: set[Key], folding: set[str]) -> str:
        """The message's evidence: a fold that runs only in training code, on the training copy of the model.

        A function that trains (an optimizer, ``backward()``, ``train()``) folds
        the model it trained, for export or a last check; the model the
        inference path builds and loads is another object, still unfolded.
        """
        for file in files:
            facts = self._facts.get(file)
            if facts is None or not facts.training_scopes:
                continue
            for what, scope in self._training_folds(file, facts, carriers, folding):
                where = facts.training_names.get(scope, "")
                name = f"`{where.rpartition('.')[2]}()`" if scope and where else "module-level training code"
                return f"{what} runs only in {name}, which trains: it folds the training copy, not the model served"
        return ""

    def _training_folds(self, file: Path, facts: ServingFacts, carriers: set[Key], folding: set[str]) -> Iterable[tuple[str, int]]:
        """Folds of a carrier made in the file's training functions: (the fold as a message quotes it, its function)."""
        for use in facts.folds:
            if use.scope in facts.training_scopes and self._folds.fold_reaches(file, use.refs, carriers):
                yield (use.what if use.what.startswith("`") else f"`{use.what}`"), use.scope
        for call in facts.helper_calls:
            if call.scope in facts.training_scopes and call.callee and self._folds.helper_folds(file, call, carriers, folding):
                yield f"`{call.callee[0].rpartition('.')[2]}(...)` on it", call.scope
        for refs, name, scope, _, _ in facts.method_calls:
            if scope in facts.training_scopes and name in folding and self._instances.reaches(file, [r for r in refs if r[0] != "self"], carriers):
                yield f"`.{name}()` on it", scope
        for name, _, scope in sorted(facts.attribute_calls):
            if scope in facts.training_scopes and name in folding:
                yield f"`.{name}()`", scope

    def _partial(self, files: list[Path], carriers: set[Key]) -> str:
        """The message's evidence: a fold in a loop over the model's parts that skips some of them."""
        for file in files:
            facts = self._facts.get(file)
            for use in facts.folds if facts is not None else ():
                if (use.partial or use.excluded) and self._folds.fold_reaches(file, use.refs, carriers):
                    what = use.what if use.what.startswith("`") else f"`{use.what}`"
                    if use.excluded or use.partial.startswith(f"{catalogue.PARTIAL_FOLD_KEYWORD}="):
                        left = ", ".join(f"`{name}`" for name in use.excluded) or f"`{use.partial}`"
                        return f"{what} leaves {left} live, and nothing folds it later"
                    return f"{what} runs only where `{use.partial}`: the other parts stay live"
        return ""

    def _flag_guarded(self, family: set[Key], folding: set[str]) -> str:
        """The message's evidence: a removal a method of the family makes only under a flag nobody passes."""
        for key in sorted(family):
            facts = self._facts.get(key[0])
            cls = facts.classes.get(key[1]) if facts is not None else None
            if facts is None or cls is None:
                continue
            for name, method, flag in sorted(facts.guarded_calls):
                if name in folding and method in cls.methods:
                    owner = f"{short(key[1])}.{method}()"
                    return f"`{owner}` calls `.{name}()` only under `if {flag}:`, and no call passes `{flag}=True`"
        return ""
