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
from typing import Iterator

from ...core import catalogue
from ..analysis.guards import SWALLOWS, walk_try
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
        """Only the methods of top-level classes that spell ``remove`` are walked: no call elsewhere is kept."""
        for class_qual, method in _methods(tree.body, self.module):
            if any("remove" in line for line in sites.lines_of(method)):  # else no call in it can be one
                _Walk(self, sites, class_qual).method(method)

    def fact(self) -> list[MethodCall]:
        return self.found


#: The statement lists of a compound statement (``if``, ``try``, ``with``, ``for``, ``while``, ``match``).
_BODIES = ("body", "orelse", "finalbody")


def _nested_statements(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists inside a compound statement, in order: they share its scope."""
    for name in _BODIES:
        inner = getattr(statement, name, None)
        if isinstance(inner, list):
            yield inner
        if name == "body":
            for part in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
                yield part.body


def _methods(
    statements: list[ast.stmt], module: str, class_qual: str | None = None,
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(class, method) for each method of a top-level class, in file order; ``class_qual``: in that class's body."""
    for statement in statements:
        if isinstance(statement, ast.ClassDef):
            if class_qual is None:
                yield from _methods(statement.body, module, f"{module}.{statement.name}" if module else statement.name)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if class_qual is not None:
                yield class_qual, statement
        else:
            for inner in _nested_statements(statement):
                yield from _methods(inner, module, class_qual)


class _Walk(Visitor):
    """One method's walk: the context of each call in it, as the analysis keeps it for its own records."""

    def __init__(self, provider: RemovalMethodCalls, sites: Sites, class_qual: str) -> None:
        self.provider = provider
        self.sites = sites
        #: The top-level class (the unit of every call in its methods), and the method's ``self``; None inside
        #: a class nested in the method, or where a nested function shadows ``self``.
        self.unit = class_qual
        self.class_qual: str | None = class_qual
        self.self_name: str | None = None
        self.tries: tuple[frozenset[str], ...] = ()
        self.ifs: tuple[ast.expr, ...] = ()

    def method(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        positional = (*node.args.posonlyargs, *node.args.args)
        static = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list)
        self.self_name = positional[0].arg if positional and not static else None
        for statement in node.body:
            self.visit(statement)

    def _enter(self) -> tuple:
        saved = (self.tries, self.ifs, self.class_qual, self.self_name)
        self.tries, self.ifs = (), ()
        return saved

    def _leave(self, saved: tuple) -> None:
        self.tries, self.ifs, self.class_qual, self.self_name = saved

    # -- scopes inside the method ---------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(part)
        saved = self._enter()
        self.class_qual, self.self_name = None, None
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        saved = self._enter()
        arguments = node.args
        named = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
        if self.self_name is not None and any(a.arg == self.self_name for a in named if a):
            self.self_name = None  # ``self`` shadowed in a nested function
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

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
        if self.class_qual is not None:
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
