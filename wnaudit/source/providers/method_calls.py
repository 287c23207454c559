"""``self.<attr>.remove_...()`` calls in the methods of a file's top-level classes (WN109 reads them).

WN109 follows such a call into the attribute's class, where the ``__init__``
may already have removed the norm under the flag the attribute is built
with.  The walk keeps only what decides a call: the top-level class and
method it is in, the method's ``self`` (a nested function may shadow it),
the ``try`` and ``if`` around it in its own function, and which parts of a
statement the analysis reads (it never reads assignment targets but
subscripts, annotations or ``for`` targets, so neither does this).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...core import catalogue
from ..analysis import SWALLOWS, walk_try
from ..ast_visitor import Visitor
from ..model import Site
from .base import Provider, Sites

_SPELLING_CHECK = catalogue.SPELLING_GUARD_WORDS


@dataclass(frozen=True)
class MethodCall:
    """``self.<attr>.<method>()`` in a method of a top-level class, for a method named like a removal (``remove_weight_norm``)."""

    site: Site
    self_attr: str
    method: str
    #: An enclosing ``try`` swallows ValueError, or an ``if`` looks at the module's norms first.
    guarded: bool


class RemovalMethodCalls(Provider[list[MethodCall]]):
    name = "removal_method_calls"
    fact_type = list[MethodCall]
    data_classes = (MethodCall,)

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.found: list[MethodCall] = []

    def walk(self, tree: ast.Module, sites: Sites) -> None:
        _Walk(self, sites).walk(tree)

    def fact(self) -> list[MethodCall]:
        return self.found


class _Walk(Visitor):
    """One piece's walk: the context of each call, as the analysis keeps it for its own records."""

    def __init__(self, provider: RemovalMethodCalls, sites: Sites) -> None:
        self.provider = provider
        self.sites = sites
        #: The top-level unit (class or function) being walked; the module at module level.
        self.unit = provider.module
        #: Walking the statements of a top-level class body (a ``def`` there is a method).
        self.in_class_body = False
        self.at_module = True
        #: The top-level class whose method is being walked, and that method's ``self`` (None: not in one).
        self.class_qual: str | None = None
        self.self_name: str | None = None
        self.tries: tuple[frozenset[str], ...] = ()
        self.ifs: tuple[ast.expr, ...] = ()

    def walk(self, tree: ast.Module) -> None:
        for statement in tree.body:
            self.visit(statement)

    def _qualname(self, name: str) -> str:
        module = self.provider.module
        return f"{module}.{name}" if module else name

    def _enter(self, name: str, class_body: bool) -> tuple:
        saved = (self.unit, self.in_class_body, self.at_module, self.tries, self.ifs, self.class_qual, self.self_name)
        if self.at_module:
            self.unit = self._qualname(name)
        self.in_class_body, self.at_module = class_body, False
        self.tries, self.ifs = (), ()
        return saved

    def _leave(self, saved: tuple) -> None:
        self.unit, self.in_class_body, self.at_module, self.tries, self.ifs, self.class_qual, self.self_name = saved

    # -- scopes -------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(part)
        top_level = self.at_module
        saved = self._enter(node.name, top_level)
        self.class_qual, self.self_name = None, None
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        method_of = self.unit if self.in_class_body else None
        saved = self._enter(node.name, False)
        arguments = node.args
        positional = (*arguments.posonlyargs, *arguments.args)
        if method_of is not None:
            static = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list)
            self.class_qual = method_of
            self.self_name = positional[0].arg if positional and not static else None
        elif self.self_name is not None and any(
            a.arg == self.self_name for a in (*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg) if a
        ):
            self.self_name = None  # ``self`` shadowed in a nested function
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        saved = self.in_class_body, self.at_module
        self.in_class_body, self.at_module = False, False
        self.visit(node.body)
        self.in_class_body, self.at_module = saved

    # -- what the analysis reads of a statement ------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        for statement in (*node.body, *node.orelse):
            self.visit(statement)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    # -- context ------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        walk_try(self, node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        saved = self.ifs
        self.ifs = (*saved, node.test)
        for statement in (*node.body, *node.orelse):
            self.visit(statement)
        self.ifs = saved

    def visit_Call(self, node: ast.Call) -> None:
        if self.class_qual is not None and self.class_qual == self.unit:
            self._note(node)
        self.generic_visit(node)

    def _note(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or "remove" not in func.attr or node.args or node.keywords:
            return
        owner = func.value
        if not (isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == self.self_name):
            return
        caught = self.tries[-1] if self.tries else None
        guarded = bool(caught and caught & SWALLOWS) or any(_SPELLING_CHECK.search(ast.unparse(t)) for t in self.ifs)
        self.provider.found.append(MethodCall(self.sites.site(node, self.unit), owner.attr, func.attr, guarded))
