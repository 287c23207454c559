"""Turn one file's source text into a FileSummary: applications, removals, units.

One pass over CPython's ``ast`` records scopes, bindings and every call with
the context the rules need (enclosing function, ``try`` bodies, ``if`` tests);
a second step resolves only the calls' callees.
"""

from __future__ import annotations

import ast
import contextlib
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol

from ..common.gc_pause import cyclic_gc_paused
from ..core import catalogue
from . import construction
from .ast_visitor import Visitor
from .providers import Provider, Running
from .model import (
    Application, Built, FileSummary, Helper, Misplaced, Removal, Return, Signature, Site, Test, Unit, Value,
)
from .resolve import API_ROOTS, Resolver, Scope, bind_import, module_package

_NOQA = re.compile(r"#\s*noqa(?P<sep>:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
#: Exceptions whose handler swallows the ValueError of a legacy remover.
SWALLOWS = frozenset({"ValueError", "Exception", "BaseException"})
#: The same for remove_parametrizations on a module without that parametrization.
_CATCHES_MODERN = SWALLOWS | {"KeyError"}
_SPELLING_CHECK = catalogue.SPELLING_GUARD_WORDS
_WEIGHT_NORM = catalogue.Kind.WEIGHT_NORM.value
_SPECTRAL_NORM = catalogue.Kind.SPECTRAL_NORM.value
_MODERN = catalogue.Style.MODERN.value
_LEGACY = catalogue.Style.LEGACY.value


def parse_noqa(lines: list[str]) -> dict[int, frozenset[str]]:
    """Map line number -> suppressed codes (empty set: every code)."""
    out: dict[int, frozenset[str]] = {}
    for number, line in enumerate(lines, start=1):
        if "noqa" not in line.lower():
            continue
        match = _NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        out[number] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else frozenset()
    return out


class _Collector(Visitor):
    """Build scopes and bindings; remember every call with its context."""

    def __init__(self, module: str, package: list[str], positions: "_Positions") -> None:
        self.positions = positions
        self.module = module
        self.package = package
        self.star_modules: list[str] = []
        self.scope = Scope("module", module, None)
        self.module_scope = self.scope
        self.unit = module
        #: Number of the enclosing function (0: module level); numbers, not nodes, so trees can be freed.
        self.function = 0
        self.functions = 0
        #: Exceptions caught by each enclosing ``try`` (innermost last).
        self.tries: tuple[frozenset[str], ...] = ()
        self.ifs: tuple[ast.expr, ...] = ()
        self.calls: list[_CallRecord] = []
        self.bases: list[tuple[str, ast.expr, Scope]] = []
        self.units: list[str] = []
        self.import_targets: list[str] = []
        #: id of a name inside a bound choice (``a if flag else b``) -> where it is written.
        self.choice_sites: dict[int, Site] = {}
        #: The top-level class whose method is being walked, and that method's ``self`` (None: not in one).
        self.class_qual: str | None = None
        self.self_name: str | None = None
        #: Top-level class -> its bases (None for one the resolver cannot read).
        self.class_bases: dict[str, list[ast.expr | None]] = {}
        #: Top-level class -> attribute -> every assignment to ``self.<attribute>``: (line, callee or None, scope,
        #: the value as ``construction.slim_value`` keeps it, the parameters it may name).
        self.class_builds: dict[str, dict[str, list[_Assigned]]] = {}
        #: (class, attribute) -> what ``self.<attribute>.append(...)`` puts in it (None: something else changes it).
        self.class_elements: dict[tuple[str, str], list[tuple[ast.expr, Scope, frozenset[str]]] | None] = {}
        #: The method being walked and the parameters its values may name (those of ``__init__`` only).
        self.method = ""
        self.method_params: frozenset[str] = frozenset()
        #: The enclosing ``if`` tests with the branch taken (True: the body, False: the ``else``).
        self.branches: tuple[tuple[ast.expr, bool], ...] = ()
        #: Loop variables over ``self.<attribute>`` (``for l in self.ups``) -> that attribute.
        self.loop_attrs: dict[str, str] = {}
        #: ids of the calls a ``return`` gives back; the parameters of the enclosing top-level function.
        self.returned: set[int] = set()
        self.function_params: frozenset[str] = frozenset()
        #: Top-level class -> its ``__init__``'s signature and the defaults as slim values, with its scope.
        self.inits: dict[str, tuple[Signature, list[ast.expr | None], Scope]] = {}
        #: Top-level function -> its returns (``construction.helper_returns``), its signature, its scope.
        self.helpers: dict[str, tuple[list[tuple[tuple[Test, ...], ast.expr]], Signature, list[ast.expr | None], Scope]] = {}
        #: Calls of a capitalised name (a class, perhaps): callee, scope, the call as a slim value, and the parameters
        #: of the ``__init__`` it is in (so ``Generator(flag=False)`` in the file is known).
        self.constructed: list[tuple[ast.expr, Scope, ast.expr, frozenset[str]]] = []
        #: Classes whose ``self`` reaches code that may change its attributes (``self.apply``, ``f(self)``).
        self.opaque_classes: set[str] = set()
        #: (class, attribute) -> (line, call position or None) of each hand-over of ``self.<attribute>``.
        self.handed: dict[tuple[str, str], list[tuple[int, tuple[int, int, int, int] | None]]] = {}
        self.callees: dict[str, ast.Name] = {}

    def walk(self, tree: ast.Module) -> None:
        """Walk one piece's statements (a function of its own, so no loop variable keeps the last one alive)."""
        for statement in tree.body:
            self.visit(statement)

    # -- bindings -----------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        self.import_targets.extend(bind_import(self.scope, node, self.package, self.star_modules))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.import_targets.extend(bind_import(self.scope, node, self.package, self.star_modules))

    def _bind_target(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.loop_attrs.pop(target.id, None)
            kept = _slim(value) if value is not None else None
            if isinstance(value, ast.IfExp) and isinstance(kept, ast.BoolOp):
                written = [part for part in (value.body, value.orelse) if _slim(part) is not None]
                for leaf, part in zip(kept.values, written):
                    if isinstance(part, (ast.Name, ast.Attribute)):
                        self.choice_sites[id(leaf)] = self.positions.site(part, self.unit)
            self.scope.bind(target.id, ("expr", kept, self.scope) if kept is not None else ("opaque",))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(element, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)

    def _self_attr(self, node: ast.expr | None, root: bool = False) -> str | None:
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

    def _element_of(self, node: ast.expr | None) -> str | None:
        """``l`` of ``for l in self.ups`` or ``self.ups[i]``: ``ups``, an element of which ``node`` is."""
        if isinstance(node, ast.Name):
            return self.loop_attrs.get(node.id)
        if isinstance(node, ast.Subscript):
            return self._self_attr(node.value)
        return None

    def _note_self_assignment(self, target: ast.expr, value: ast.expr | None, line: int) -> None:
        if self.class_qual is None:
            return
        attr = self._self_attr(target)
        if attr is None:
            if isinstance(target, ast.Subscript):
                container = self._self_attr(target.value, root=True)
                if container is not None:
                    self.class_elements[(self.class_qual, container)] = None  # ``self.ups[0] = ...``
            for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else ():
                self._note_self_assignment(element, None, line)
            return
        callee = _slim(value.func) if isinstance(value, ast.Call) else None
        kept = construction.slim_value(value, self.positions.offset) if value is not None else construction.UNKNOWN_NODE
        self.class_builds.setdefault(self.class_qual, {}).setdefault(attr, []).append(
            _Assigned(line, callee, self.scope, kept, self.method_params)
        )

    def _note_element(self, node: ast.Call) -> None:
        """``self.ups.append(m)`` puts ``m`` in ``self.ups``; any other change to it leaves its elements unknown."""
        func = node.func
        if self.class_qual is None or not isinstance(func, ast.Attribute):
            return
        attr = self._self_attr(func.value)
        if attr is None or func.attr not in _CHANGES_CONTAINER:
            return
        key = (self.class_qual, attr)
        known = self.class_elements.get(key, [])
        if func.attr != "append" or len(node.args) != 1 or node.keywords or known is None:
            self.class_elements[key] = None
            return
        known.append((construction.slim_value(node.args[0], self.positions.offset), self.scope, self.method_params))
        self.class_elements[key] = known

    def _note_hand_over(self, value: ast.expr, line: int, call: tuple[int, int, int, int] | None) -> None:
        if self.class_qual is None:
            return
        if isinstance(value, ast.Starred):
            value = value.value
        if isinstance(value, ast.Name) and value.id == self.self_name:
            self.opaque_classes.add(self.class_qual)
            return
        attr = self._self_attr(value, root=True)
        if attr is not None:
            self.handed.setdefault((self.class_qual, attr), []).append((line, call))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        if self.class_qual is not None:
            self._note_hand_over(node.value, node.lineno + self.positions.offset, None)
        for target in node.targets:
            self._bind_target(target, node.value)
            self._note_self_assignment(target, node.value, node.lineno + self.positions.offset)
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind_target(node.target, node.value)
            self._note_self_assignment(node.target, node.value, node.lineno + self.positions.offset)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._bind_target(node.target, None)
        self._note_self_assignment(node.target, None, node.lineno + self.positions.offset)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind_target(node.target, node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._bind_target(node.target, None)
        alias = self._loop_alias(node.target, node.iter)
        saved = dict(self.loop_attrs)
        if alias is not None:
            self.loop_attrs[alias[0]] = alias[1]
        for statement in (*node.body, *node.orelse):
            self.visit(statement)
        self.loop_attrs = saved

    def _loop_alias(self, target: ast.expr, iterable: ast.expr) -> tuple[str, str] | None:
        """``for l in self.ups`` / ``for i, l in enumerate(self.ups)``: (``l``, ``ups``)."""
        if self.class_qual is None:
            return None
        if (
            isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate"
            and len(iterable.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2
        ):
            iterable, target = iterable.args[0], target.elts[1]
        attr = self._self_attr(iterable)
        if attr is None or not isinstance(target, ast.Name):
            return None
        return target.id, attr

    def visit_Return(self, node: ast.Return) -> None:
        if isinstance(node.value, ast.Call):
            self.returned.add(id(node.value))
        self.generic_visit(node)
        if node.value is not None:
            self.returned.discard(id(node.value))

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
        self.generic_visit(node)

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.scope.bind(node.name, ("opaque",))
        self.generic_visit(node)

    # -- scopes -------------------------------------------------------------
    def _enter(self, node: ast.AST, kind: str, name: str) -> tuple:
        qualname = f"{self.scope.qualname}.{name}" if self.scope.kind != "module" else f"{self.module}.{name}" if self.module else name
        self.scope.bind(name, ("qual", qualname))
        saved = (self.scope, self.unit, self.function, self.tries, self.ifs, self.branches, self.loop_attrs)
        self.branches, self.loop_attrs = (), {}
        if self.scope.kind == "module":
            self.unit = qualname
            self.units.append(qualname)
        self.scope = Scope(kind, qualname, self.scope)
        self.tries, self.ifs = (), ()
        if kind == "function":
            self.functions += 1
            self.function = self.functions
        return saved

    def _leave(self, saved: tuple) -> None:
        self.scope, self.unit, self.function, self.tries, self.ifs, self.branches, self.loop_attrs = saved

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        saved_self = (self.class_qual, self.self_name, self.method, self.method_params, self.function_params)
        arguments = node.args
        top_level = self.scope is self.module_scope
        self._enter_self(node)
        saved = self._enter(node, "function", node.name)
        self._note_construction_code(node, top_level)
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            self.scope.bind(arg.arg, ("opaque",))
        for star_arg in (arguments.vararg, arguments.kwarg):
            if star_arg is not None:
                self.scope.bind(star_arg.arg, ("opaque",))
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)
        self.class_qual, self.self_name, self.method, self.method_params, self.function_params = saved_self

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _note_construction_code(self, node: ast.FunctionDef | ast.AsyncFunctionDef, top_level: bool) -> None:
        """A method's name and ``__init__``'s parameters; a top-level function's parameters and, for a helper, its returns."""
        offset = self.positions.offset
        if top_level:
            self.function_params = construction.parameter_names(node)
            returns = construction.helper_returns(node, offset)
            if returns is not None:
                signature, defaults = construction.signature_of(node, False, offset)
                self.helpers[self.scope.qualname] = (returns, signature, defaults, self.scope)
            return
        self.function_params = frozenset()
        if self.class_qual is not None and self.scope.parent is not None and self.scope.parent.parent is self.module_scope:
            self.method = node.name
            self.method_params = construction.parameter_names(node) if node.name == "__init__" else frozenset()
            if node.name == "__init__" and self.self_name is not None:
                signature, defaults = construction.signature_of(node, True, offset)
                self.inits[self.class_qual] = (signature, defaults, self.scope)
        elif self.class_qual is not None:
            self.method_params = frozenset()  # a nested function: its names are not ``__init__``'s parameters

    def _enter_self(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A method of a top-level class names its ``self``; a nested function may shadow it."""
        arguments = node.args
        positional = (*arguments.posonlyargs, *arguments.args)
        if self.scope.kind == "class" and self.scope.parent is self.module_scope:
            static = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list)
            self.class_qual = self.scope.qualname
            self.self_name = positional[0].arg if positional and not static else None
        elif self.self_name is not None and any(
            a.arg == self.self_name for a in (*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg) if a
        ):
            self.self_name = None  # ``self`` shadowed in a nested function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        saved_scope = self.scope
        self.scope = Scope("function", f"{saved_scope.qualname}.<lambda>", saved_scope)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            self.scope.bind(arg.arg, ("opaque",))
        self.visit(node.body)
        self.scope = saved_scope

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for base in node.bases:
            self.visit(base)
        for keyword in node.keywords:
            self.visit(keyword)
        top_level = self.scope is self.module_scope
        saved = self._enter(node, "class", node.name)
        saved_self = (self.class_qual, self.self_name, self.method, self.method_params)
        if top_level:
            self.class_bases[self.scope.qualname] = [_slim(base) for base in node.bases] + (
                [None] if node.keywords else []
            )
        elif self.class_qual is not None:
            self.opaque_classes.add(self.class_qual)  # a class defined in a method: too clever to follow
        self.class_qual, self.self_name = None, None
        for base in node.bases:
            kept = _slim(base)
            if kept is not None:
                self.bases.append((self.unit, kept, saved[0]))
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)
        self.class_qual, self.self_name, self.method, self.method_params = saved_self

    # -- context ------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        walk_try(self, node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        saved, saved_branches = self.ifs, self.branches
        self.ifs = (*saved, node.test)
        for taken, block in ((True, node.body), (False, node.orelse)):
            self.branches = (*saved_branches, (node.test, taken))
            for statement in block:
                self.visit(statement)
        self.ifs, self.branches = saved, saved_branches

    def visit_Call(self, node: ast.Call) -> None:
        func = _slim(node.func)
        if isinstance(func, ast.Name):  # one node per callee name: a file of n calls to ``f`` keeps one ``f``
            func = self.callees.setdefault(func.id, func)
        first = _first_argument(node)
        site = self.positions.site(node, self.unit)
        target, element = self._in_class(node, first, site) if self.class_qual is not None else ("", "")
        if func is not None:
            if _capitalised(func):
                self.constructed.append((func, self.scope, construction.slim_value(node, self.positions.offset), self.method_params))
            on_self = bool(target or element)
            self.calls.append(
                _CallRecord(
                    func, self.scope, self.unit, self.function, self.tries[-1] if self.tries else None, self.ifs,
                    site, _has_star(node), _tensor_name_missing(node),
                    _leaves_unparametrized(node), target or element, isinstance(first, ast.Call),
                    bool(element), self.method if on_self else "", self._when() if on_self else (),
                    isinstance(first, ast.Name) and first.id in self.function_params and id(node) in self.returned,
                )
            )
        self.generic_visit(node)

    def _in_class(self, node: ast.Call, first: ast.expr | None, site: Site) -> tuple[str, str]:
        """A call in a method: note what it hands over; the ``self`` attribute its module is, or is an element of."""
        assert self.class_qual is not None
        if isinstance(node.func, ast.Attribute) and node.func.attr in _WALKS_SUBMODULES:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == self.self_name:
                self.opaque_classes.add(self.class_qual)
            else:
                self._note_hand_over(owner, site.line, site.key)
        if not (isinstance(node.func, ast.Name) and node.func.id in _ONLY_READS):
            for value in (*node.args, *(k.value for k in node.keywords)):
                self._note_hand_over(value, site.line, site.key)
        self._note_element(node)
        if self.class_qual != self.unit:
            return "", ""
        target = self._self_attr(first) or ""
        return target, "" if target else self._element_of(first) or ""

    def _when(self) -> tuple[Test, ...]:
        """The tests on ``__init__``'s parameters that hold here (``?`` for one it cannot read, or outside ``__init__``)."""
        return tuple(
            test for node, taken in self.branches for test in construction.tests_of(node, self.method_params, taken)
        )


@dataclass(frozen=True, slots=True)
class _Assigned:
    """One assignment to ``self.<attribute>``: where, the callee (a call's), the value kept, the parameters it may name."""

    line: int
    callee: ast.expr | None
    scope: Scope
    value: ast.expr
    params: frozenset[str]


#: Builtins that only look at what they are given (``hasattr(self, "cond_layer")``): no hand-over.
#: ``getattr``/``vars`` are not among them: what they return may be changed.
_ONLY_READS = frozenset({"hasattr", "isinstance", "issubclass", "len", "id", "type", "print", "repr", "str", "callable"})

#: Container methods that change its elements (``append`` is followed; the others make them unknown).
_CHANGES_CONTAINER = frozenset({"append", "extend", "insert", "__setitem__", "update", "add_module", "pop", "remove"})


def _capitalised(func: ast.expr) -> bool:
    """A callee whose last name is capitalised, as class names are: its calls may build a class of the file."""
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name[:1].isupper()


@dataclass(frozen=True, slots=True)
class _CallRecord:
    """A call, kept without its syntax tree: what the rules need about it."""

    func: ast.expr
    scope: Scope
    unit: str
    function: int
    caught: frozenset[str] | None  # what the innermost enclosing try catches; None: no try
    ifs: tuple[ast.expr, ...]
    site: Site
    star_args: bool
    missing_tensor_name: bool
    leave_parametrized_false: bool
    #: The first argument is ``self.<attr>`` in a method of the top-level class ``unit``: attr ("" otherwise).
    self_attr: str
    #: The first argument is itself a call (``weight_norm(nn.Conv1d(...))``): a module built right there.
    first_is_call: bool
    #: ``self_attr`` names the container the first argument is an element of (``for l in self.ups``).
    element: bool
    #: The method of ``unit`` the call is in, and the tests on ``__init__``'s parameters that hold there
    #: (kept only for calls on ``self.<attr>``).
    method: str
    when: tuple[Test, ...]
    #: ``return applier(module)`` where ``module`` is a parameter of the enclosing top-level function: a helper
    #: that norms what its callers give it (``apply_parametrization_norm``), not a module that already exists.
    returns_parameter: bool


def _slim(node: ast.expr | None, depth: int = 0) -> ast.expr | None:
    """The part of an expression the resolver can read (names, attributes, choices, getattr/partial calls).

    A binding keeps this instead of the whole value, so a module's trees can
    be freed as soon as they are walked; None: nothing the resolver reads.
    """
    if node is None or depth > 64:
        return None
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id)  # no positions: they would keep four attributes (two of them ints) per name
    if isinstance(node, ast.Attribute):
        value = _slim(node.value, depth + 1)
        return ast.Attribute(value=value, attr=node.attr) if value is not None else None
    if isinstance(node, (ast.IfExp, ast.BoolOp)):
        return _slim_choice(node, depth)
    if isinstance(node, ast.NamedExpr):
        return _slim(node.value, depth + 1)
    if isinstance(node, ast.Call):
        return _slim_call(node, depth)
    return None


def _slim_choice(node: ast.IfExp | ast.BoolOp, depth: int) -> ast.expr | None:
    """``a if flag else b`` and ``a or b``: a BoolOp of the alternatives the resolver can read."""
    if isinstance(node, ast.IfExp):
        body, orelse = _slim(node.body, depth + 1), _slim(node.orelse, depth + 1)
        if body is None and orelse is None:
            return None
        return ast.BoolOp(op=ast.Or(), values=[v for v in (body, orelse) if v is not None])
    values = [v for v in (_slim(v, depth + 1) for v in node.values) if v is not None]
    return ast.BoolOp(op=node.op, values=values) if values else None


def _slim_call(node: ast.Call, depth: int) -> ast.expr | None:
    """A call with its callee and first three positional arguments (``getattr(nn.utils, "weight_norm")``, ``partial``)."""
    func = _slim(node.func, depth + 1)
    if func is None:
        return None
    args: list[ast.expr] = []
    for arg in node.args[:3]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            args.append(ast.Constant(value=arg.value))
        else:
            args.append(_slim(arg, depth + 1) or ast.Constant(value=None))
    return ast.Call(func=func, args=args, keywords=[])


class _Positions:
    """Convert ast's UTF-8 byte columns to 1-based character columns."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        #: Lines before the piece being walked (a piece's trees count lines from its own start).
        self.offset = 0

    def column(self, line: int, byte_offset: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_offset + 1
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "replace")) + 1

    def lines_of(self, node: ast.AST) -> list[str]:
        """The physical lines the node spans (a provider's cheap test before it walks the node)."""
        first = node.lineno + self.offset  # type: ignore[attr-defined]
        return self.lines[first - 1:(node.end_lineno or node.lineno) + self.offset]  # type: ignore[attr-defined]

    def site(self, node: ast.AST, unit: str) -> Site:
        line = node.lineno + self.offset  # type: ignore[attr-defined]
        end_line = (node.end_lineno or node.lineno) + self.offset  # type: ignore[attr-defined]
        return Site(
            line=line,
            column=self.column(line, node.col_offset),  # type: ignore[attr-defined]
            end_line=end_line,
            end_column=self.column(end_line, node.end_col_offset or 0),  # type: ignore[attr-defined]
            unit=unit,
        )


def split_lines(text: str) -> list[str]:
    """Physical lines as the tokenizer numbers them (\\r\\n, \\r and \\n all end a line)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class TryWalker(Protocol):
    """A walk that keeps what each enclosing ``try`` catches (innermost last)."""

    tries: tuple[frozenset[str], ...]

    def visit(self, node: ast.AST) -> Any: ...


def walk_try(walker: TryWalker, node: ast.Try) -> None:
    """Walk a ``try``: its body with what its handlers catch on ``walker.tries``, the rest without."""
    saved = walker.tries
    caught: set[str] = set()
    for handler in node.handlers:
        caught |= _caught_names(handler)
    walker.tries = (*saved, frozenset(caught))
    for statement in node.body:
        walker.visit(statement)
    walker.tries = saved
    for part in (*node.handlers, *node.orelse, *node.finalbody):
        walker.visit(part)


def _caught_names(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names: set[str] = set()
    for node in types:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


#: Module methods that reach every submodule, or replace one: a class calling them on ``self`` is not followed.
_WALKS_SUBMODULES = frozenset({
    "apply", "modules", "children", "named_modules", "named_children", "add_module", "register_module",
    "__setattr__",
})


def _first_argument(call: ast.Call) -> ast.expr | None:
    """The module a norm applier or remover is given: the first positional argument or ``module=``."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    for keyword in call.keywords:
        if keyword.arg == "module":
            return keyword.value
    return None


def _has_star(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def _tensor_name_missing(call: ast.Call) -> bool:
    if _has_star(call):
        return False
    return len(call.args) < 2 and not any(k.arg == "tensor_name" for k in call.keywords)


def _leaves_unparametrized(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg == "leave_parametrized":
            return isinstance(keyword.value, ast.Constant) and keyword.value.value is False
    return len(call.args) >= 3 and isinstance(call.args[2], ast.Constant) and call.args[2].value is False


#: Python frames the tree walk may need: about three per level of nesting, and
#: CPython compiles expressions nested a few thousand levels deep.
_WALK_RECURSION_LIMIT = 30_000


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Let the walk follow any tree CPython itself could parse (pure-Python frames only)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, _WALK_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


#: Qualified project name -> the catalogue API names it is bound to (found in other files).
Aliases = dict[str, frozenset[str]]


#: Source is parsed in pieces of about this many characters (whole top-level statements):
#: the syntax tree of a piece is freed once walked, so memory follows the piece, not the file
#: (a 64 K piece's tree and parser state were a fixed ~6 MiB on top of every big file).
CHUNK_CHARS = 1 << 14
#: A line that may start a top-level statement: code at column 0 that does not continue one.
_TOP_STATEMENT = re.compile(r"^(?![ \t\r\f#)\]}]|else\b|elif\b|except\b|finally\b|$)", re.M)


#: Another reader of a file's syntax trees: called with each piece (the lines before it, its tree) once the
#: analysis has walked it, so one parse of the file feeds both (WN110's serving facts, ``ServingReader.feed``).
PieceReader = Callable[[int, ast.Module], None]


def analyze(
    text: str, path: str, module: str, is_package: bool = False, aliases: Aliases | None = None,
    providers: Iterable[type[Provider]] = (), also: PieceReader | None = None,
) -> FileSummary:
    """Facts of one file. Raises SyntaxError (and ValueError for NUL bytes) from ``ast``.

    ``aliases`` maps names this file imports from the project to the torch
    APIs they stand for there (``from .compat import weight_norm`` where
    ``compat`` picks the spelling): calls through them count as API calls.
    ``providers``: the fact providers the rules declare; each walks the same
    trees (one parse) and its fact goes into ``FileSummary.provided``.
    """
    lines = split_lines(text)
    positions = _Positions(lines)
    collector = _Collector(module, module_package(module, is_package), positions)
    running = Running(providers, module)
    with deep_recursion(), cyclic_gc_paused():
        for offset, tree in parse_pieces(text, path):
            positions.offset = offset
            collector.walk(tree)
            running.walk(tree, positions)
            if also is not None:
                also(offset, tree)  # after the analysis: the other reader may change the tree
            del tree
        summary = _summarize(collector, lines, path, module, aliases or {})
        summary.provided = running.facts()
        return summary


def parse_pieces(text: str, path: str) -> Iterator[tuple[int, ast.Module]]:
    """The module's syntax trees, piece by piece, each with the number of lines before it.

    A piece ends where a top-level statement may start; a cut that falls
    inside a statement (a string or bracket spanning lines, a decorator, an
    ``else``) does not parse, and the piece grows to the next cut.  A real
    syntax error is reported as a parse of the whole file reports it.
    """
    if len(text) <= CHUNK_CHARS:
        yield 0, ast.parse(text, filename=path)
        return
    cuts = [m.start() for m in _TOP_STATEMENT.finditer(text)]
    cuts.append(len(text))
    start, line = 0, 1
    index = 0
    while start < len(text):
        target = start + CHUNK_CHARS
        while index < len(cuts) - 1 and cuts[index] < target:
            index += 1
        while True:
            end = cuts[index]
            piece = text[start:end]
            try:
                tree = ast.parse(piece, filename=path)
                break
            except SyntaxError:
                if end >= len(text):
                    ast.parse(text, filename=path)  # raises the error with the whole file's positions
                    raise
                grown = start + 2 * (end - start)  # doubling keeps a broken file linear
                while index < len(cuts) - 1 and cuts[index] < grown:
                    index += 1
        yield line - 1, tree
        # Line breaks as the tokenizer counts them (\r\n, \r, \n).
        line += piece.count("\n") + piece.count("\r") - piece.count("\r\n")
        start = end


def _summarize(collector: "_Collector", lines: list[str], path: str, module: str, aliases: Aliases) -> FileSummary:
    resolver = Resolver(collector.module_scope, collector.star_modules)
    summary = FileSummary(path=path, module=module, noqa=parse_noqa(lines))
    summary.torch_bound = "torch" in collector.module_scope.bindings and resolver.name(
        "torch", collector.module_scope
    ) == frozenset({"torch"})
    reader = _CallReader(collector, resolver, summary, aliases)
    for call in collector.calls:
        reader.read(call)
    reader.finish_removals()
    reader.finish_units()
    summary.imports = tuple(sorted({t for t in collector.import_targets if not _is_api_name(t)}))
    names_of = _names_of(resolver, aliases)
    summary.plain_classes = _plain_classes(collector, resolver, names_of)
    summary.handed = _handed(collector, summary)
    flagged = {r.site.unit for r in summary.removals if r.method == "__init__" and r.when}
    flagged |= _flag_chosen(summary.plain_classes)
    summary.inits = {
        qual: construction.with_defaults(signature, defaults, scope, names_of)
        for qual, (signature, defaults, scope) in collector.inits.items()
        if qual in flagged or _uses_parameters(summary.plain_classes.get(qual, {}))
    }
    summary.helpers = _helpers(collector, names_of)
    summary.constructions = _constructions(collector, resolver, names_of, flagged)
    summary.exports = _exports(collector, resolver)
    summary.choices = _module_choices(collector, resolver)
    summary.star_modules = tuple(collector.star_modules)
    summary.applications.sort(key=lambda a: a.site.key)
    summary.removals.sort(key=lambda r: r.site.key)
    return summary


@dataclass
class _CallRoles:
    """What the catalogue says one call's callee names do."""

    #: Norm kind -> the styles applied (``weight_norm`` -> {``legacy``, ``modern``}).
    applied: dict[str, set[str]] = field(default_factory=dict)
    #: The remover called (the modern one when names of both are possible), with the API name.
    removal: tuple[catalogue.Spelling, str] | None = None
    #: Every name is the legacy weight-norm applier.
    all_legacy_weight_norm: bool = True


class _CallReader:
    """Resolve the recorded calls into applications, removals and the names each unit refers to."""

    def __init__(self, collector: "_Collector", resolver: Resolver, summary: FileSummary, aliases: Aliases) -> None:
        self.collector = collector
        self.resolver = resolver
        self.summary = summary
        self.aliases = aliases
        #: Unit -> norm kind -> styles applied directly in it.
        self.direct: dict[str, dict[str, set[str]]] = {}
        #: Unit -> project names it refers to.
        self.refs: dict[str, set[str]] = {unit: set() for unit in collector.units}
        self.refs.setdefault(summary.module, set())
        #: Functions (by number) that call a modern / a legacy remover: a removal next to the other spelling's.
        self.modern_remover_in: set[int] = set()
        self.legacy_remover_in: set[int] = set()
        #: Removals, kept until every function's removers are known.
        self.pending: list[tuple[_CallRecord, catalogue.Spelling, str]] = []
        #: Units whose norm applications go to their own parameter and are returned (``apply_parametrization_norm``),
        #: and the names called with a module that already exists: such a call norms that module in place.
        self.parameter_appliers: set[str] = set()
        self.called_on_existing: set[str] = set()

    def read(self, call: "_CallRecord") -> None:
        names = self.resolver.expr(call.func, call.scope)
        if not names:
            return
        names, imported = _expand_aliases(names, self.aliases)
        self.refs.setdefault(call.unit, set()).update(n for n in names if not n.startswith("torch."))
        if not call.first_is_call:
            self.called_on_existing.update(names)
        roles = self._roles(call, names)
        if roles.applied:
            self._record_applications(call, names, roles, imported)
        if roles.removal is not None:
            spelling, api = roles.removal
            remover_in = self.modern_remover_in if spelling.style is catalogue.Style.MODERN else self.legacy_remover_in
            remover_in.add(call.function)
            self.pending.append((call, spelling, api))

    def _roles(self, call: "_CallRecord", names: frozenset[str]) -> _CallRoles:
        """What the names apply or remove; a remover imported from the wrong module is noted as misplaced."""
        roles = _CallRoles()
        for name in sorted(names):
            found = catalogue.spelling_for_api(name)
            if found is None:
                roles.all_legacy_weight_norm = False
                real = catalogue.MISPLACED_REMOVERS.get(name)
                if real is not None:
                    self.summary.misplaced.append(Misplaced(call.site, name, real))
                continue
            spelling, role = found
            if not (spelling.kind is catalogue.Kind.WEIGHT_NORM and spelling.style is catalogue.Style.LEGACY and role == "apply"):
                roles.all_legacy_weight_norm = False
            if role == "apply":
                roles.applied.setdefault(spelling.kind.value, set()).add(spelling.style.value)
            elif role == "remove" and (roles.removal is None or spelling.style is catalogue.Style.MODERN):
                roles.removal = (spelling, name)
        return roles

    def _record_applications(self, call: "_CallRecord", names: frozenset[str], roles: _CallRoles, imported: str) -> None:
        """One application per norm kind the call may apply."""
        summary = self.summary
        chosen = (
            _chosen_legacy_weight_norm(call, self.resolver, self.collector.choice_sites)
            if _WEIGHT_NORM in roles.applied else None
        )
        if call.returns_parameter:
            self.parameter_appliers.add(call.unit)
        elif not call.first_is_call:
            summary.applies_in_place = True
        for kind, styles in roles.applied.items():
            self.direct.setdefault(call.unit, {}).setdefault(kind, set()).update(styles)
            picked = chosen if kind == _WEIGHT_NORM else None
            summary.applications.append(
                Application(
                    site=call.site,
                    kind=kind,
                    styles=frozenset(styles),
                    legacy_only=kind == _WEIGHT_NORM and (roles.all_legacy_weight_norm or picked is not None),
                    api=min(n for n in names if _applies_kind(n, kind)),
                    via=picked[0] if picked is not None else "",
                    binding=picked[1] if picked is not None else None,
                    callee=ast.unparse(call.func),
                    imported=imported,
                )
            )

    def finish_removals(self) -> None:
        """The removals, each with its guard (which needs every remover of its function)."""
        for call, spelling, api in self.pending:
            self.summary.removals.append(self._removal(call, spelling, api))
        if self.parameter_appliers & self.called_on_existing:
            self.summary.applies_in_place = True  # a helper of the file norms a module that already exists

    def _removal(self, call: "_CallRecord", spelling: catalogue.Spelling, api: str) -> Removal:
        if spelling.style is catalogue.Style.MODERN:
            return Removal(
                site=call.site,
                kind="",
                style=_MODERN,
                api=api,
                guard=_guard(call.caught, call.ifs, call.function in self.legacy_remover_in, modern=True),
                missing_tensor_name=call.missing_tensor_name,
                leave_parametrized_false=call.leave_parametrized_false,
                star_args=call.star_args,
                self_attr=call.self_attr,
                element=call.element,
                method=call.method,
                when=call.when,
            )
        return Removal(
            site=call.site,
            kind=spelling.kind.value,
            style=_LEGACY,
            api=api,
            guard=_guard(call.caught, call.ifs, call.function in self.modern_remover_in, modern=False),
            star_args=call.star_args,
            self_attr=call.self_attr,
            element=call.element,
            method=call.method,
            when=call.when,
        )

    def finish_units(self) -> None:
        """Each unit's directly applied norms and the project names it refers to (calls and bases)."""
        for unit, base, scope in self.collector.bases:
            self.refs.setdefault(unit, set()).update(n for n in self.resolver.expr(base, scope) if not _is_api_name(n))
        for unit in sorted(self.refs):
            kinds = self.direct.get(unit, {})
            self.summary.units[unit] = Unit(
                direct=tuple(sorted((k, frozenset(v)) for k, v in kinds.items())),
                refs=tuple(sorted(self.refs[unit])),
            )


def _expand_aliases(names: frozenset[str], aliases: Aliases) -> tuple[frozenset[str], str]:
    """A project name bound to a torch API elsewhere is that API here; also the one project name called, if so."""
    if not aliases:
        return names, ""
    expanded = [aliases[n] for n in names if n in aliases]
    if not expanded:
        return names, ""
    imported = next(iter(names)) if len(names) == 1 else ""
    return names.difference(aliases).union(*expanded), imported


def _handed(collector: "_Collector", summary: FileSummary) -> dict[tuple[str, str], tuple[int, ...]]:
    """Lines of the calls other than removals that receive ``self.<attribute>`` of a plain class."""
    removal_calls = {r.site.key for r in summary.removals}
    return {
        key: tuple(line for line, call in uses if call not in removal_calls)
        for key, uses in collector.handed.items()
        if key[0] in summary.plain_classes
    }


_MODULE_BASE = frozenset({"torch.nn.Module"})


def _names_of(resolver: Resolver, aliases: Aliases) -> construction.NamesOf:
    """What a callee may be: the resolver's names, a project alias of a torch API read as that API."""

    def names_of(callee: ast.expr, scope: Scope) -> frozenset[str]:
        names = resolver.expr(callee, scope)
        expanded = [aliases[n] for n in names if n in aliases]
        return names.difference(aliases).union(*expanded) if expanded else names

    return names_of


def _plain_classes(collector: _Collector, resolver: Resolver, names_of: construction.NamesOf) -> dict[str, dict[str, Built]]:
    """Top-level classes whose attributes can be read off their code, with how each attribute is built."""
    subclassed: set[str] = set()
    for _, base, scope in collector.bases:
        subclassed |= resolver.expr(base, scope)
    out: dict[str, dict[str, Built]] = {}
    for qual, bases in collector.class_bases.items():
        if qual in collector.opaque_classes or qual in subclassed or not bases:
            continue
        if any(base is None or resolver.expr(base, collector.module_scope) != _MODULE_BASE for base in bases):
            continue
        out[qual] = _built_attributes(qual, collector, names_of)
    return out


def _built_attributes(qual: str, collector: _Collector, names_of: construction.NamesOf) -> dict[str, Built]:
    """Each attribute's first assignment, with the constructor and value when it is the attribute's only one."""
    built: dict[str, Built] = {}
    for attr, assignments in collector.class_builds.get(qual, {}).items():
        first = assignments[0]
        names: frozenset[str] = frozenset()
        value: Value | None = None
        elements: tuple[Value, ...] | None = None
        if len(assignments) == 1:
            value = construction.to_value(first.value, first.scope, names_of, first.params)
            if first.callee is not None:
                names = names_of(first.callee, first.scope)
            appended = collector.class_elements.get((qual, attr), [])
            if appended is not None:
                elements = _elements(value, appended, names_of)
            if value.kind not in ("call", "if") or (
                value.kind == "call" and not value.args and not value.keywords and value.names == tuple(sorted(names))
            ):
                value = None  # not a module built here, or a call its constructor names say all about
        built[attr] = Built(first.line, tuple(sorted(names)), value, elements)
    return built


def _elements(
    value: Value, appended: list[tuple[ast.expr, Scope, frozenset[str]]], names_of: construction.NamesOf,
) -> tuple[Value, ...] | None:
    """What a container attribute holds: the list it is built from and what is appended (None: not a container)."""
    if value.kind != "call" or not all(name in construction.CONTAINERS for name in value.names) or value.keywords or value.star:
        return None
    if len(value.args) > 1 or (value.args and value.args[0].kind != "list"):
        return None
    given = value.args[0].args if value.args else ()
    return given + tuple(construction.to_value(node, scope, names_of, params) for node, scope, params in appended)


def _helpers(collector: _Collector, names_of: construction.NamesOf) -> dict[str, Helper]:
    out: dict[str, Helper] = {}
    for qual, (returns, signature, defaults, scope) in collector.helpers.items():
        params = frozenset(p.name for p in signature.params)
        out[qual] = Helper(
            construction.with_defaults(signature, defaults, scope.parent or scope, names_of),
            tuple(Return(when, construction.to_value(node, scope, names_of, params)) for when, node in returns),
        )
    return out


def _uses_parameters(attributes: dict[str, Built]) -> bool:
    """Some attribute's construction names a parameter of ``__init__``: the arguments a class is built with matter."""
    pending = [v for built in attributes.values() for v in (built.value, *(built.elements or ())) if v is not None]
    while pending:
        value = pending.pop()
        if value.kind == "param" or (value.kind == "if" and value.when):
            return True
        pending.extend(value.args)
        pending.extend(v for _, v in value.keywords)
    return False


def _flag_chosen(classes: dict[str, dict[str, Built]]) -> set[str]:
    """Classes building an attribute one way or another by a test of ``__init__``'s parameters (``weight_norm(conv)
    if use_weight_norm else conv``): how the file builds them decides whether the norm is applied (WN109)."""
    return {
        qual for qual, attributes in classes.items()
        if any(b.value is not None and b.value.kind == "if" and b.value.when for b in attributes.values())
    }


def _constructions(
    collector: _Collector, resolver: Resolver, names_of: construction.NamesOf, wanted: set[str],
) -> dict[str, tuple[Value, ...]]:
    """The calls in the file that build one of ``wanted`` (its classes whose ``__init__`` removes under a test)."""
    out: dict[str, list[Value]] = {}
    if not wanted:
        return {}
    for func, scope, node, params in collector.constructed:
        names = resolver.expr(func, scope)
        if len(names) == 1 and next(iter(names)) in wanted:
            out.setdefault(next(iter(names)), []).append(construction.to_value(node, scope, names_of, params))
    return {qual: tuple(values) for qual, values in out.items()}


def _applies_kind(name: str, kind: str) -> bool:
    found = catalogue.spelling_for_api(name)
    return found is not None and found[1] == "apply" and found[0].kind.value == kind


def _chosen_legacy_weight_norm(call: _CallRecord, resolver: Resolver, choice_sites: dict[int, Site]) -> tuple[str, Site] | None:
    """``norm_f(conv)`` where ``norm_f = weight_norm if flag else spectral_norm`` (legacy weight norm): the name and where ``weight_norm`` is written."""
    func = call.func
    if not isinstance(func, ast.Name):
        return None
    site = _bound_choice(func.id, call.scope, resolver, choice_sites)
    return (func.id, site) if site is not None else None


def _bound_choice(name: str, scope: Scope, resolver: Resolver, choice_sites: dict[int, Site]) -> Site | None:
    """Where the legacy ``weight_norm`` alternative of ``name``'s binding is written, when that binding is a flag choice.

    The one binding of the name is a conditional choice, exactly one
    alternative the legacy weight norm, none the modern one and none known to
    be anything but a norm applier (a parameter is unknown): whenever the flag
    selects weight norm, a call through the name applies the deprecated hook.
    The fix then rewrites that alternative, never the call (which would drop
    the others).
    """
    bound = Resolver.bindings_of(name, scope)
    if bound is None or len(bound[1]) != 1 or bound[1][0][0] != "expr":
        return None
    _, value, where = bound[1][0]
    if not isinstance(value, ast.BoolOp):
        return None
    legacy: list[Site] = []
    for leaf in value.values:
        spellings = _applier_spellings(leaf, where, resolver)
        if spellings is None:
            return None  # an alternative known to be something other than a norm applier
        if any(spelling.kind is catalogue.Kind.WEIGHT_NORM for spelling in spellings):
            if not _only_legacy_weight_norm(spellings) or id(leaf) not in choice_sites:
                return None
            legacy.append(choice_sites[id(leaf)])
    return legacy[0] if len(legacy) == 1 else None


def _applier_spellings(leaf: ast.expr, scope: Scope, resolver: Resolver) -> list[catalogue.Spelling] | None:
    """The spellings an alternative of a choice may apply (None: it may be something other than a norm applier)."""
    spellings: list[catalogue.Spelling] = []
    for name in resolver.expr(leaf, scope):
        found = catalogue.spelling_for_api(name)
        if found is None or found[1] != "apply":
            return None
        spellings.append(found[0])
    return spellings


def _only_legacy_weight_norm(spellings: list[catalogue.Spelling]) -> bool:
    return {s.kind for s in spellings} == {catalogue.Kind.WEIGHT_NORM} and {s.style for s in spellings} == {catalogue.Style.LEGACY}


def _module_choices(collector: _Collector, resolver: Resolver) -> dict[str, Site]:
    """Module-level names bound to a flag choice of a legacy weight norm (other files may call them)."""
    out: dict[str, Site] = {}
    scope = collector.module_scope
    for name, bindings in scope.bindings.items():
        if len(bindings) != 1 or bindings[0][0] != "expr" or not isinstance(bindings[0][1], ast.BoolOp):
            continue  # the cheap test first: most module-level names are imports, classes and functions
        site = _bound_choice(name, scope, resolver, collector.choice_sites)
        if site is not None:
            out[name] = site
    return out


def _exports(collector: _Collector, resolver: Resolver) -> dict[str, tuple[str, ...]]:
    """Module-level names bound to something other than the file's own classes and functions.

    Other files that import them (re-exports, a spelling chosen here) are
    resolved through this table.
    """
    out: dict[str, tuple[str, ...]] = {}
    own = collector.module_scope.qualname
    for name, bindings in collector.module_scope.bindings.items():
        if all(b[0] == "qual" and b[1] == (f"{own}.{name}" if own else name) for b in bindings):
            continue  # a def or class: a unit of its own
        values = resolver.name(name, collector.module_scope)
        if values:
            out[name] = tuple(sorted(values))
    return out


def _is_api_name(qualified: str) -> bool:
    """A name inside the APIs' own package (``torch...``), not the user's code.

    Compared by top-level package, so a user package named ``torchvoc`` is
    still followed across files.
    """
    return qualified.partition(".")[0] in API_ROOTS


def _guard(caught: frozenset[str] | None, ifs: tuple[ast.expr, ...], other_spelling_nearby: bool, modern: bool) -> str:
    """How a removal is protected against meeting the other spelling.

    ``dual``: the same function also calls the other spelling's remover and
    this call sits in a ``try`` that lets it fall through to it (or the
    function is the both-spellings helper shape); ``checked``: an ``if`` looks
    at the module's parametrizations/hooks first; ``swallowed``: an ``except``
    hides the failure with no fallback.
    """
    for test in ifs:
        if _SPELLING_CHECK.search(ast.unparse(test)):
            return "checked"
    swallowers = _CATCHES_MODERN if modern else SWALLOWS
    if caught is not None:
        if other_spelling_nearby and caught & (swallowers | {"AttributeError", "RuntimeError"}):
            return "dual"
        if caught & swallowers:
            return "swallowed"
    elif other_spelling_nearby and modern:
        # The modern call in the handler of a legacy try: the both-spellings remover.
        return "dual"
    return "none"
