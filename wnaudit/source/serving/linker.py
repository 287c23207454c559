"""After the walk: the records it kept, linked into one file's ``ServingFacts`` once every name is bound.

Each family of records has a linker of its own (``link_calls.py`` for calls,
which hands on to folds, inference sites, parameters, registrations and type
evidence; ``link_classes.py``; ``link_registry.py``), all resolving
references through one ``RefLookup``.  This module runs them in the walk's
order and releases each record once linked.
"""

from __future__ import annotations

import ast

from .fact_walker import FactWalker
from .facts import Body, ClassFacts, ServingFacts
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
        """Link one record of the walk."""
        if kind == "call":
            self.calls.call(node, frame, str(extra or ""))  # type: ignore[arg-type]
        elif kind in ("with", "decorators"):
            self.inference.under(node, frame)  # type: ignore[arg-type]
        elif kind == "attr":
            self.classes.attribute(node, frame, str(extra))  # type: ignore[arg-type]
        elif kind == "return":
            assert isinstance(extra, Body)
            self.classes.returned(node, frame, extra)  # type: ignore[arg-type]
        elif kind == "bases":
            assert isinstance(extra, ClassFacts)
            extra.bases = self.classes.bases(node, frame)  # type: ignore[arg-type]
        elif kind == "annotations":
            assert isinstance(extra, Body)
            self.classes.annotations(node, frame, extra)  # type: ignore[arg-type]
        elif kind == "class_decorators":
            assert isinstance(extra, ClassFacts)
            extra.decorators = self.registry.decorators(node, frame)  # type: ignore[arg-type]
        elif kind == "store":
            assert isinstance(extra, ast.expr)
            self.registry.store(node, extra, frame)  # type: ignore[arg-type]
        elif kind == "attr_type":
            self.classes.attribute_type(node, frame, str(extra))  # type: ignore[arg-type]

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
