"""After the walk: the records it kept, linked into one file's ``ServingFacts`` once every name is bound.

Each family of records has a linker of its own (``link_calls.py`` for calls,
which hands on to folds, inference sites, parameters, registrations and type
evidence; ``link_classes.py``; ``link_registry.py``), all resolving
references through one ``RefLookup``.  This module runs them in the walk's
order and releases each record once linked.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

from .fact_walker import FactWalker
from .facts import ServingFacts
from .link_calls import CallLinker
from .link_classes import ClassLinker
from .link_inference import InferenceLinker
from .link_refs import RefLookup
from .link_registry import RegistryLinker
from .walk_frame import Frame


class Linker:
    """Links one walked file's records into its facts."""

    def __init__(self, walker: FactWalker) -> None:
        self.walker = walker
        self.facts = walker.facts
        self.lookup = RefLookup(walker)
        self.classes = ClassLinker(self.lookup)
        self.registry = RegistryLinker(self.lookup)
        self.inference = InferenceLinker(self.lookup)
        self.calls = CallLinker(self.lookup, self.classes, self.registry, self.inference)
        #: Each kind of record the walk keeps -> what links one (bound methods of the families, none of this object).
        self._linkers: dict[str, Callable[[Any, Frame, Any], None]] = {
            "call": self.calls.call,
            "with": self.inference.under,
            "decorators": self.inference.under,
            "attr": self.classes.attribute,
            "attr_type": self.classes.attribute_type,
            "return": self.classes.returned,
            "bases": self.classes.bases,
            "annotations": self.classes.annotations,
            "class_decorators": self.registry.decorators,
            "store": self.registry.store,
        }

    def run(self) -> ServingFacts:
        """Link the walk's records, each released once linked: the nodes only it holds go then.

        A big file's walk so never holds all its records' nodes at once.
        """
        pending, self.walker.pending = self.walker.pending, []
        pending.reverse()
        while pending:
            self._record(*pending.pop())
        for body, names in self.calls.unguarded.values():
            body.guarded -= names  # called both ways: it may run without the flag
        self._exports()
        self.facts.star_modules = tuple(self.walker.star)
        return self.facts

    def _record(self, kind: str, node: "ast.AST | list[ast.expr]", frame: Frame, extra: object) -> None:
        """Link one record of the walk: its node (or nodes), the frame it was met in, and its extra part."""
        self._linkers[kind](node, frame, extra)

    def _exports(self) -> None:
        """Module-level names bound to something else than the file's own definitions (re-exports)."""
        scope = self.walker.module_scope
        own = scope.qualname
        for name, bindings in scope.bindings.items():
            if all(b[0] == "qual" and b[1] == (f"{own}.{name}" if own else name) for b in bindings):
                continue
            values = self.lookup.resolver.name(name, scope)
            if values:
                self.facts.exports[name] = tuple(sorted(values))
