"""What construction code does, gathered during the analysis's walk: the facts WN109 follows.

For each top-level class: its bases, every assignment to ``self.<attr>``
(with the value cut down by ``construction.slim_value``), what is appended
to a container attribute, where ``self`` or an attribute is handed to other
code, and its ``__init__`` signature; for each top-level function made only
of tests and returns, those returns; every call of a capitalised name (a
class of the file being built).  The walk (``collector.Collector``) calls
in here at the statements and calls that matter; the summary turns these
records into ``FileSummary`` fields (``class_summary``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import construction
from ..model import Signature, Site, Test
from ..resolve import Scope
from .pieces import Positions
from .slim import slim

#: Builtins that only look at what they are given (``hasattr(self, "cond_layer")``): no hand-over.
#: ``getattr``/``vars`` are not among them: what they return may be changed.
_ONLY_READS = frozenset({"hasattr", "isinstance", "issubclass", "len", "id", "type", "print", "repr", "str", "callable"})
#: Container methods that change its elements (``append`` is followed; the others make them unknown).
_CHANGES_CONTAINER = frozenset({"append", "extend", "insert", "__setitem__", "update", "add_module", "pop", "remove"})
#: Module methods that reach every submodule, or replace one: a class calling them on ``self`` is not followed.
_WALKS_SUBMODULES = frozenset({
    "apply", "modules", "children", "named_modules", "named_children", "add_module", "register_module",
    "__setattr__",
})

#: What a top-level function made of tests and returns gives back: each return with the tests leading to it.
HelperReturns = list[tuple[tuple[Test, ...], ast.expr]]


@dataclass(frozen=True, slots=True)
class Assigned:
    """One assignment to ``self.<attribute>``: where, the callee (a call's), the value kept, the parameters it may name."""

    line: int
    callee: ast.expr | None
    scope: Scope
    value: ast.expr
    params: frozenset[str]


class ClassFacts:
    """The construction records of one file, and where in a top-level class's method the walk is."""

    def __init__(self, positions: Positions) -> None:
        self.positions = positions
        #: The top-level class whose method is being walked, and that method's ``self`` (None: not in one).
        self.class_qual: str | None = None
        self.self_name: str | None = None
        #: The method being walked and the parameters its values may name (those of ``__init__`` only).
        self.method = ""
        self.method_params: frozenset[str] = frozenset()
        #: The parameters of the enclosing top-level function.
        self.function_params: frozenset[str] = frozenset()
        #: Loop variables over ``self.<attribute>`` (``for l in self.ups``) -> that attribute.
        self.loop_attrs: dict[str, str] = {}
        #: Top-level class -> its bases (None for one the resolver cannot read).
        self.class_bases: dict[str, list[ast.expr | None]] = {}
        #: Top-level class -> attribute -> every assignment to ``self.<attribute>``.
        self.class_builds: dict[str, dict[str, list[Assigned]]] = {}
        #: (class, attribute) -> what ``self.<attribute>.append(...)`` puts in it (None: something else changes it).
        self.class_elements: dict[tuple[str, str], list[tuple[ast.expr, Scope, frozenset[str]]] | None] = {}
        #: Classes whose ``self`` reaches code that may change its attributes (``self.apply``, ``f(self)``).
        self.opaque_classes: set[str] = set()
        #: (class, attribute) -> (line, call position or None) of each hand-over of ``self.<attribute>``.
        self.handed: dict[tuple[str, str], list[tuple[int, tuple[int, int, int, int] | None]]] = {}
        #: Top-level class -> its ``__init__``'s signature and the defaults as slim values, with its scope.
        self.inits: dict[str, tuple[Signature, list[ast.expr | None], Scope]] = {}
        #: Top-level function -> its returns (``construction.helper_returns``), its signature, its scope.
        self.helpers: dict[str, tuple[HelperReturns, Signature, list[ast.expr | None], Scope]] = {}
        #: Calls of a capitalised name (a class, perhaps): callee, scope, the call as a slim value, and the parameters
        #: of the ``__init__`` it is in (so ``Generator(flag=False)`` in the file is known).
        self.constructed: list[tuple[ast.expr, Scope, ast.expr, frozenset[str]]] = []

    # -- where the walk is ----------------------------------------------------
    def save(self) -> tuple:
        return (self.class_qual, self.self_name, self.method, self.method_params, self.function_params)

    def restore(self, saved: tuple) -> None:
        self.class_qual, self.self_name, self.method, self.method_params, self.function_params = saved

    def enter_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, enclosing: Scope, module_scope: Scope) -> None:
        """A method of a top-level class names its ``self``; a nested function may shadow it."""
        arguments = node.args
        positional = (*arguments.posonlyargs, *arguments.args)
        if enclosing.kind == "class" and enclosing.parent is module_scope:
            static = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list)
            self.class_qual = enclosing.qualname
            self.self_name = positional[0].arg if positional and not static else None
        elif self.self_name is not None and any(
            a.arg == self.self_name for a in (*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg) if a
        ):
            self.self_name = None  # ``self`` shadowed in a nested function

    def note_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, top_level: bool, scope: Scope, module_scope: Scope) -> None:
        """A method's name and ``__init__``'s parameters; a top-level function's parameters and, for a helper, its returns."""
        offset = self.positions.offset
        if top_level:
            self.function_params = construction.parameter_names(node)
            returns = construction.helper_returns(node, offset)
            if returns is not None:
                signature, defaults = construction.signature_of(node, False, offset)
                self.helpers[scope.qualname] = (returns, signature, defaults, scope)
            return
        self.function_params = frozenset()
        if self.class_qual is not None and scope.parent is not None and scope.parent.parent is module_scope:
            self.method = node.name
            self.method_params = construction.parameter_names(node) if node.name == "__init__" else frozenset()
            if node.name == "__init__" and self.self_name is not None:
                signature, defaults = construction.signature_of(node, True, offset)
                self.inits[self.class_qual] = (signature, defaults, scope)
        elif self.class_qual is not None:
            self.method_params = frozenset()  # a nested function: its names are not ``__init__``'s parameters

    def enter_class(self, node: ast.ClassDef, qualname: str, top_level: bool) -> None:
        """A top-level class's bases are kept; a class defined in a method makes its class too clever to follow."""
        if top_level:
            self.class_bases[qualname] = [slim(base) for base in node.bases] + ([None] if node.keywords else [])
        elif self.class_qual is not None:
            self.opaque_classes.add(self.class_qual)
        self.class_qual, self.self_name = None, None

    # -- ``self`` and its attributes --------------------------------------------
    def self_attr(self, node: ast.expr | None, root: bool = False) -> str | None:
        """``self.x`` (or, with ``root``, anything under it: ``self.x[0].y``) in a method: ``x``."""
        if self.self_name is None or node is None:
            return None
        while root and isinstance(node, (ast.Attribute, ast.Subscript)) and not (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        ):
            node = node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.self_name:
            return node.attr
        if root and isinstance(node, ast.Name):
            return self.loop_attrs.get(node.id)
        return None

    def element_of(self, node: ast.expr | None) -> str | None:
        """``l`` of ``for l in self.ups`` or ``self.ups[i]``: ``ups``, an element of which ``node`` is."""
        if isinstance(node, ast.Name):
            return self.loop_attrs.get(node.id)
        if isinstance(node, ast.Subscript):
            return self.self_attr(node.value)
        return None

    def loop_alias(self, target: ast.expr, iterable: ast.expr) -> tuple[str, str] | None:
        """``for l in self.ups`` / ``for i, l in enumerate(self.ups)``: (``l``, ``ups``)."""
        if self.class_qual is None:
            return None
        if (
            isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate"
            and len(iterable.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2
        ):
            iterable, target = iterable.args[0], target.elts[1]
        attr = self.self_attr(iterable)
        if attr is None or not isinstance(target, ast.Name):
            return None
        return target.id, attr

    def note_self_assignment(self, target: ast.expr, value: ast.expr | None, line: int, scope: Scope) -> None:
        if self.class_qual is None:
            return
        attr = self.self_attr(target)
        if attr is None:
            if isinstance(target, ast.Subscript):
                container = self.self_attr(target.value, root=True)
                if container is not None:
                    self.class_elements[(self.class_qual, container)] = None  # ``self.ups[0] = ...``
            for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else ():
                self.note_self_assignment(element, None, line, scope)
            return
        callee = slim(value.func) if isinstance(value, ast.Call) else None
        kept = construction.slim_value(value, self.positions.offset) if value is not None else construction.UNKNOWN_NODE
        self.class_builds.setdefault(self.class_qual, {}).setdefault(attr, []).append(
            Assigned(line, callee, scope, kept, self.method_params)
        )

    def _note_element(self, node: ast.Call, scope: Scope) -> None:
        """``self.ups.append(m)`` puts ``m`` in ``self.ups``; any other change to it leaves its elements unknown."""
        func = node.func
        if self.class_qual is None or not isinstance(func, ast.Attribute):
            return
        attr = self.self_attr(func.value)
        if attr is None or func.attr not in _CHANGES_CONTAINER:
            return
        key = (self.class_qual, attr)
        known = self.class_elements.get(key, [])
        if func.attr != "append" or len(node.args) != 1 or node.keywords or known is None:
            self.class_elements[key] = None
            return
        known.append((construction.slim_value(node.args[0], self.positions.offset), scope, self.method_params))
        self.class_elements[key] = known

    def note_hand_over(self, value: ast.expr, line: int, call: tuple[int, int, int, int] | None) -> None:
        if self.class_qual is None:
            return
        if isinstance(value, ast.Starred):
            value = value.value
        if isinstance(value, ast.Name) and value.id == self.self_name:
            self.opaque_classes.add(self.class_qual)
            return
        attr = self.self_attr(value, root=True)
        if attr is not None:
            self.handed.setdefault((self.class_qual, attr), []).append((line, call))

    def in_class(self, node: ast.Call, first: ast.expr | None, site: Site, scope: Scope, unit: str) -> tuple[str, str]:
        """A call in a method: note what it hands over; the ``self`` attribute its module is, or is an element of."""
        assert self.class_qual is not None
        if isinstance(node.func, ast.Attribute) and node.func.attr in _WALKS_SUBMODULES:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == self.self_name:
                self.opaque_classes.add(self.class_qual)
            else:
                self.note_hand_over(owner, site.line, site.key)
        if not (isinstance(node.func, ast.Name) and node.func.id in _ONLY_READS):
            for value in (*node.args, *(k.value for k in node.keywords)):
                self.note_hand_over(value, site.line, site.key)
        self._note_element(node, scope)
        if self.class_qual != unit:
            return "", ""
        target = self.self_attr(first) or ""
        return target, "" if target else self.element_of(first) or ""

    def when(self, branches: tuple[tuple[ast.expr, bool], ...]) -> tuple[Test, ...]:
        """The tests on ``__init__``'s parameters that hold here (``?`` for one it cannot read, or outside ``__init__``)."""
        return tuple(
            test for node, taken in branches for test in construction.tests_of(node, self.method_params, taken)
        )
