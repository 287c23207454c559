"""Where classes are registered: the linking of decorators, table stores and registrations by call.

A registry (``@register("hifigan")``, ``VOCODERS[name] = cls``,
``register("hifigan")(HiFiGAN)``) may hold a class that the code builds only
by a string; the index links these records to say which classes a table holds.
"""

from __future__ import annotations

import ast

from ..resolve import API_ROOTS, Scope
from .facts import ClassFacts
from .link_refs import RefLookup
from .walk_frame import Frame


class RegistryLinker:
    """Links the walk's records of class decorators, stores into tables, and registrations by call."""

    def __init__(self, lookup: RefLookup) -> None:
        self.lookup = lookup
        self.facts = lookup.facts

    def decorators(self, exprs: list[ast.expr], frame: Frame, cls: ClassFacts) -> None:
        """The project names a class's decorators call: ``@register("hifigan")`` and ``@register`` name ``register``."""
        names: set[str] = set()
        for expr in exprs:
            names |= self.lookup.names(expr.func if isinstance(expr, ast.Call) else expr, frame)
        cls.decorators = tuple(sorted(n for n in names if n.partition(".")[0] not in API_ROOTS))

    def store(self, table: ast.Name, frame: Frame, value: ast.expr) -> None:
        """``TABLE[key] = value``: a registrar when a function stores a parameter, an entry at module level."""
        name = self.lookup.table(table, frame)
        if not name:
            return
        if frame.number:
            registrar = self._registrar(frame)
            if registrar and isinstance(value, ast.Name) and self._is_parameter(value.id, frame):
                self.facts.registrars[registrar] = name
            return
        entries = sorted(n for n in self.lookup.names(value, frame) if n.partition(".")[0] not in API_ROOTS)
        if entries:
            self.facts.table_entries.setdefault(name, []).extend(entries)

    def _registrar(self, frame: Frame) -> str:
        """The module-level function the code is in (a decorator factory's closure counts as its factory)."""
        scope: Scope | None = frame.scope
        while scope is not None and scope.parent is not None:
            if scope.kind == "function" and scope.parent is self.lookup.walker.module_scope:
                return scope.qualname
            scope = scope.parent
        return ""

    def _is_parameter(self, name: str, frame: Frame) -> bool:
        """``name`` is a parameter of the function the code is in."""
        bound = self.lookup.resolver.bindings_of(name, frame.scope)
        return bound is not None and bound[0].kind == "function" and ("opaque",) in bound[1]

    def registration(self, node: ast.Call, frame: Frame) -> None:
        """``register("hifigan")(HiFiGAN)`` at module level: the decorator applied by hand (a registry may hold it)."""
        if frame.number or not isinstance(node.func, ast.Call) or len(node.args) != 1:
            return
        called = sorted(n for n in self.lookup.names(node.func.func, frame) if n.partition(".")[0] not in API_ROOTS)
        given = sorted(self.lookup.names(node.args[0], frame))
        if called and given:
            self.facts.registered_calls.append((tuple(called), tuple(given)))
