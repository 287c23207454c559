"""The analysis's one walk over a file's trees: scopes, bindings, and every call with its context.

Names are resolved only once the whole module is known, so the walk keeps
bindings and calls in a positionless form (``slim``, ``CallRecord``) and the
trees can be freed piece by piece.  What construction code does (the facts
WN109 follows) is gathered beside it by ``classes.ClassFacts``.
"""

from __future__ import annotations

import ast

from .. import construction
from ..ast_visitor import Visitor
from ..model import Site
from ..resolve import Scope, bind_import
from .classes import ClassFacts
from .guards import walk_try
from .pieces import Positions
from .records import CallRecord, capitalised, first_argument, has_star, leaves_unparametrized, tensor_name_missing
from .slim import slim


class Collector(Visitor):
    """Build scopes and bindings; remember every call with its context."""

    def __init__(self, module: str, package: list[str], positions: Positions) -> None:
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
        #: The enclosing ``if`` tests with the branch taken (True: the body, False: the ``else``).
        self.branches: tuple[tuple[ast.expr, bool], ...] = ()
        self.calls: list[CallRecord] = []
        self.bases: list[tuple[str, ast.expr, Scope]] = []
        self.units: list[str] = []
        self.import_targets: list[str] = []
        #: id of a name inside a bound choice (``a if flag else b``) -> where it is written.
        self.choice_sites: dict[int, Site] = {}
        #: ids of the calls a ``return`` gives back.
        self.returned: set[int] = set()
        self.callees: dict[str, ast.Name] = {}
        self.classes = ClassFacts(positions)

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
            self.classes.loop_attrs.pop(target.id, None)
            kept = slim(value) if value is not None else None
            if isinstance(value, ast.IfExp) and isinstance(kept, ast.BoolOp):
                written = [part for part in (value.body, value.orelse) if slim(part) is not None]
                for leaf, part in zip(kept.values, written):
                    if isinstance(part, (ast.Name, ast.Attribute)):
                        self.choice_sites[id(leaf)] = self.positions.site(part, self.unit)
            self.scope.bind(target.id, ("expr", kept, self.scope) if kept is not None else ("opaque",))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(element, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        classes = self.classes
        line = node.lineno + self.positions.offset
        if classes.class_qual is not None:
            classes.note_hand_over(node.value, line, None)
        for target in node.targets:
            self._bind_target(target, node.value)
            classes.note_self_assignment(target, node.value, line, self.scope)
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind_target(node.target, node.value)
            self.classes.note_self_assignment(node.target, node.value, node.lineno + self.positions.offset, self.scope)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._bind_target(node.target, None)
        self.classes.note_self_assignment(node.target, None, node.lineno + self.positions.offset, self.scope)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind_target(node.target, node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._bind_target(node.target, None)
        classes = self.classes
        alias = classes.loop_alias(node.target, node.iter)
        saved = dict(classes.loop_attrs)
        if alias is not None:
            classes.loop_attrs[alias[0]] = alias[1]
        for statement in (*node.body, *node.orelse):
            self.visit(statement)
        classes.loop_attrs = saved

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_Return(self, node: ast.Return) -> None:
        if isinstance(node.value, ast.Call):
            self.returned.add(id(node.value))
        self.generic_visit(node)
        if node.value is not None:
            self.returned.discard(id(node.value))

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
        saved = (self.scope, self.unit, self.function, self.tries, self.ifs, self.branches, self.classes.loop_attrs)
        self.branches, self.classes.loop_attrs = (), {}
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
        self.scope, self.unit, self.function, self.tries, self.ifs, self.branches, self.classes.loop_attrs = saved

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        classes = self.classes
        saved_self = classes.save()
        arguments = node.args
        top_level = self.scope is self.module_scope
        classes.enter_function(node, self.scope, self.module_scope)
        saved = self._enter(node, "function", node.name)
        classes.note_function(node, top_level, self.scope, self.module_scope)
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            self.scope.bind(arg.arg, ("opaque",))
        for star_arg in (arguments.vararg, arguments.kwarg):
            if star_arg is not None:
                self.scope.bind(star_arg.arg, ("opaque",))
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)
        classes.restore(saved_self)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

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
        saved_self = self.classes.save()
        self.classes.enter_class(node, self.scope.qualname, top_level)
        for base in node.bases:
            kept = slim(base)
            if kept is not None:
                self.bases.append((self.unit, kept, saved[0]))
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)
        self.classes.restore(saved_self)

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
        func = slim(node.func)
        if isinstance(func, ast.Name):  # one node per callee name: a file of n calls to ``f`` keeps one ``f``
            func = self.callees.setdefault(func.id, func)
        first = first_argument(node)
        site = self.positions.site(node, self.unit)
        classes = self.classes
        target, element = classes.in_class(node, first, site, self.scope, self.unit) if classes.class_qual is not None else ("", "")
        if func is not None:
            if capitalised(func):
                classes.constructed.append((func, self.scope, construction.slim_value(node, self.positions.offset), classes.method_params))
            on_self = bool(target or element)
            self.calls.append(
                CallRecord(
                    func, self.scope, self.unit, self.function, self.tries[-1] if self.tries else None, self.ifs,
                    site, has_star(node), tensor_name_missing(node),
                    leaves_unparametrized(node), target or element, isinstance(first, ast.Call),
                    bool(element), classes.method if on_self else "", classes.when(self.branches) if on_self else (),
                    isinstance(first, ast.Name) and first.id in classes.function_params and id(node) in self.returned,
                )
            )
        self.generic_visit(node)
