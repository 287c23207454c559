"""Where a carrier is put to inference: its ``eval()`` sites, loaders that evaluate, and what the site runs.

An inference site counts when the model run there executes the weight norm
(a carrier held only in attributes nothing on that path reads is never
executed), and not in training, folding or saving code, nor in a module's own
``__main__`` smoke test of a class it defines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ...core import catalogue
from .facts import ClassFacts, Ref, ServingFacts, Use
from .file_facts import FileFacts
from .folds import FoldFinder
from .instances import Carried, Instances
from .pools import ProjectPools
from .resolver import Resolver
from .units import CONSTRUCTION, Key, Site, is_container, named_as, short


class InferenceSites:
    """The inference sites of a carrier, and whether running the site executes the start's weight norm."""

    def __init__(
        self, pools: ProjectPools, facts: FileFacts, resolver: Resolver, instances: Instances, folds: FoldFinder,
        carried: Carried, excluded: Callable[[Path], bool],
    ) -> None:
        self._pools = pools
        self._facts = facts
        self._resolver = resolver
        self._instances = instances
        self._folds = folds
        self._carried = carried
        #: ``exclude`` patterns in force: an excluded file is never an inference site.
        self._excluded = excluded

    def in_file(self, file: Path, facts: ServingFacts, carriers: set[Key], modern: bool) -> list[Site]:
        """The file's inference sites on a carrier, outside training and folding functions."""
        sites: list[Site] = []
        if self._excluded(file):
            return sites  # the user's excludes: never named as the inference site, never given a fold
        for use in facts.inference:
            if (
                use.scope in facts.training_scopes or use.scope in facts.folding_scopes or use.scope in facts.saving_scopes
                or (use.scope in facts.legacy_folding_scopes and not modern)
                or self._smoke_test(file, facts, use)
            ):
                continue
            reached = frozenset(k for r in use.refs for k in self._instances.of(file, r) if k in carriers)
            if reached:
                sites.append((file, use, reached))
        return sites

    def _smoke_test(self, file: Path, facts: ServingFacts, use: Use) -> bool:
        """The module's own ``__main__`` smoke test of a class it defines: test code, not an inference path.

        The site is in the module's ``if __name__ == "__main__":`` block, or in a
        module-level function only that block names (and no other project file
        that can reach it); every model it is about is built from a class of the
        same module.  A script evaluating a model imported from elsewhere stays
        an inference path.
        """
        if use.scope == 0:
            inside = any(first <= use.line <= last for first, last in facts.main_lines)
        else:
            name = next((n for n, numbers in facts.smoke_scopes.items() if use.scope in numbers), "")
            inside = bool(name) and not self._pools.named_elsewhere(file, name)
        return inside and bool(use.refs) and all(self._own_class(file, ref) for ref in use.refs)

    def _own_class(self, file: Path, ref: Ref) -> bool:
        """``ref`` is an instance of a class ``file`` itself defines (``Model()``, ``Model.from_pretrained(...)``)."""
        if ref[0] != "new":
            return False
        found = self._resolver.lookup(file, ref[1])
        return found is not None and found[0][0] == file and self._facts.class_of(found[0]) is not None

    def runs(
        self, start: Key, use: Use, reached: frozenset[Key], carriers: set[Key], parts: "dict[Key, set[str]] | None" = None,
    ) -> bool:
        """Does the inference entry at ``use`` execute the weight norm applied in ``start``?

        The model runs what the code around the site uses of it; a carrier
        held only in attributes nothing on that path reads (discriminators
        beside the generator in a training module) is never executed.
        Where the code does not show what runs, everything held counts; but a
        mapping of parts put in eval mode whole (``[model[k].eval() for k in
        model]``) runs the parts that the project's inference code reads of it
        elsewhere, where some does (shape d: ``parts``).
        """
        if use.kind == "capture":
            return True
        if use.whole:
            known = parts or {}
            if not reached or not all(key in known for key in reached):
                return True
            return any(self._class_runs(start, key, tuple(sorted(known[key])), carriers) for key in sorted(reached))
        return any(self._class_runs(start, key, use.members, carriers) for key in sorted(reached))

    def _class_runs(self, start: Key, key: Key, members: tuple[str, ...], carriers: set[Key]) -> bool:
        family = [key, *self._resolver.bases(key)]
        if start in family:
            return True
        view = self._resolver.class_view(key)
        read = view.executed(members)
        if read is None:
            return True
        keys = set(family)
        children = [c for c in carriers if c not in keys and self._carried.parents.get(c, set()) & keys]
        for child in children:
            if short(child[1]) in view.loose:
                return True  # built other than as one attribute's value: where it sits is not known
            holding = {
                name for name, refs in view.attrs.items()
                if any(named_as(ref, child) or child in self._instances.of(file, ref) for file, ref in refs)
            }
            if not holding or holding & read or ("*" in holding and read):
                return True  # ``"*"``: a mapping entry under a key not written, any key read may be it
        return not children

    def self_evaluations(self, family: set[Key], classes: set[Key], folding: set[str], carriers: set[Key]) -> list[Site]:
        """A loader classmethod that evaluates what it builds, or a constructor that evaluates ``self``, folding neither.

        A loader folds when it calls a fold API or a project function that folds (WN110's local fold).
        """
        sites: list[Site] = []
        for key in sorted(family):
            cls = self._facts.class_of(key)
            for body in cls.methods.values() if cls is not None else ():
                if body.evaluates and not self._folds.body_folds(body) and not any(
                    self._folds.function_folds(k, folding) for k in self._resolver.resolved_all(key[0], body.callees)
                ):  # a loader that folds what it loads is fine
                    sites.append((key[0], self._loader_site(key[0], body.evaluates, carriers), frozenset(classes)))
                if body.evaluates_self is not None and body.name in CONSTRUCTION and not self._folds.body_folds(body):
                    sites.append((key[0], body.evaluates_self, frozenset(classes)))  # frozen by its own constructor
            inherited = self._inherited_loader(key, cls) if cls is not None else None
            if inherited is not None:
                sites.append((key[0], inherited, frozenset(classes)))
        return sites

    def _inherited_loader(self, key: Key, cls: ClassFacts) -> Use | None:
        """A library base whose inherited ``from_pretrained`` evaluates what it loads (shape d: ``PreTrainedModel``).

        Only a base outside the project: a project's own ``from_pretrained`` is
        read as code, like any loader.  The site is the class itself; the load
        happens in the library, so no statement of the project follows it.
        """
        if catalogue.OWN_LOADING_METHODS & cls.methods.keys():
            return None  # the class loads through its own code, read like any loader
        for base in cls.bases:
            if base in catalogue.EVAL_LOADING_BASES and not self._resolver.resolved_all(key[0], (base,)):
                name = short(key[1])
                what = f"`{name}.from_pretrained(...)`, inherited from `{short(base)}`, which calls `eval()`"
                return Use(cls.line, 1, what, (), 0, "", "inherited")
        return None

    def _loader_site(self, file: Path, evaluations: list[Use], carriers: set[Key]) -> Use:
        """Which of a loader's ``eval()`` calls the finding names, and so the fold after it folds (chatterbox's
        ``from_local`` evaluates ``ve`` first, the carrier later): the one of a carrier; else one of a model
        the index cannot name (``model = cls(...)``: what the loader builds); else the first."""
        for use in evaluations:
            if any(self._instances.of(file, r) & carriers for r in use.refs):
                return use
        for use in evaluations:
            if not use.refs or any(self._instances.unresolved(file, r) for r in use.refs):
                return use
        return evaluations[0]

    def part_target(self, use: Use, reached: frozenset[Key], carriers: set[Key]) -> str:
        """``model["decoder"]`` where the site's model is a mapping of parts: the fold API takes a module, not a dict."""
        if not reached or not all(is_container(key) for key in reached):
            return ""
        root = use.target.rsplit("[", 1)[0] if use.target.endswith("]") else use.target
        for key in sorted(reached):
            cls = self._facts.class_of(key)
            children = [c for c in carriers if key in self._carried.parents.get(c, set())]
            for name, refs in sorted(cls.attrs.items()) if cls is not None else ():
                if name != "*" and any(named_as(r, c) or c in self._instances.of(key[0], r) for r in refs for c in children):
                    return f'{root}["{name}"]'
        return root


def parts_read(found: list[Site]) -> dict[Key, set[str]]:
    """Per mapping of parts: the members inference code reads of it where that code shows them (shape d)."""
    parts: dict[Key, set[str]] = {}
    for _, use, reached in found:
        if use.whole or use.kind == "capture":
            continue
        for key in reached:
            if is_container(key):
                parts.setdefault(key, set()).update(use.members)
    return parts
