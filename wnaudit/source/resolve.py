"""Resolve names to qualified names, just far enough for the weight-norm rules.

Why not libcst's ScopeProvider/QualifiedNameProvider here: on a 4,000-line
model file they cost seconds, and they stop at an assignment
(``weight_norm = nn.utils.weight_norm`` gives the local name, not the API).
This resolver works on CPython's ``ast`` (parsed in milliseconds), follows
imports of every spelling (aliases, relative imports, star imports),
assignments, conditional expressions, ``getattr(obj, "name", default)`` and
``functools.partial``, and is flow-insensitive on purpose: every binding a
name has anywhere in its scope is a spelling it *may* have at run time, which
is exactly what "chosen at import time" means (try/except ImportError,
``hasattr``, version checks).

Scoping follows Python: a function sees its enclosing functions and the
module, never a class body; a parameter or loop variable shadows outer names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..core import catalogue

EMPTY: frozenset[str] = frozenset()
#: Top-level packages of the catalogue's APIs ("torch"). An unbound use of one
#: is taken to mean the package: the code cannot run otherwise, and a fix that
#: adds ``import torch`` must not change what the next lint sees.
API_ROOTS = frozenset(api.split(".")[0] for s in catalogue.SPELLINGS for api in (*s.apply_apis, *s.remove_apis))
_MAX_DEPTH = 24
_PARTIAL = ("functools.partial",)


@dataclass(eq=False)
class Scope:
    kind: str  # "module" | "class" | "function"
    qualname: str
    parent: "Scope | None"
    bindings: dict[str, list[tuple]] = field(default_factory=dict)

    def bind(self, name: str, binding: tuple) -> None:
        self.bindings.setdefault(name, []).append(binding)


def module_package(module: str, is_package: bool) -> list[str]:
    parts = module.split(".") if module else []
    return parts if is_package else parts[:-1]


class Resolver:
    """Answers "which qualified names may this expression be?"."""

    def __init__(self, module_scope: Scope, star_modules: list[str]) -> None:
        self.module_scope = module_scope
        self.star_modules = star_modules
        self._memo: dict[tuple[int, str], frozenset[str]] = {}
        self._active: set[tuple[int, str]] = set()

    def expr(self, node: ast.AST, scope: Scope, depth: int = 0) -> frozenset[str]:
        if depth > _MAX_DEPTH:
            return EMPTY
        if isinstance(node, ast.Name):
            return self.name(node.id, scope, depth)
        if isinstance(node, ast.Attribute):
            return frozenset(f"{base}.{node.attr}" for base in self.expr(node.value, scope, depth + 1))
        if isinstance(node, ast.IfExp):
            return self.expr(node.body, scope, depth + 1) | self.expr(node.orelse, scope, depth + 1)
        if isinstance(node, ast.BoolOp):
            out: frozenset[str] = EMPTY
            for value in node.values:
                out |= self.expr(value, scope, depth + 1)
            return out
        if isinstance(node, ast.NamedExpr):
            return self.expr(node.value, scope, depth + 1)
        if isinstance(node, ast.Call):
            return self._call_result(node, scope, depth)
        return EMPTY

    def _call_result(self, node: ast.Call, scope: Scope, depth: int) -> frozenset[str]:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "getattr" and not self.name("getattr", scope, depth + 1):
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                attr = node.args[1].value
                out = frozenset(f"{base}.{attr}" for base in self.expr(node.args[0], scope, depth + 1))
                if len(node.args) >= 3:
                    out |= self.expr(node.args[2], scope, depth + 1)
                return out
            return EMPTY
        if node.args and self.expr(func, scope, depth + 1) & frozenset(_PARTIAL):
            return self.expr(node.args[0], scope, depth + 1)
        return EMPTY

    @staticmethod
    def bindings_of(name: str, scope: Scope) -> tuple[Scope, list[tuple]] | None:
        """The scope that binds ``name`` as seen from ``scope``, and its bindings there (None: unbound)."""
        current: Scope | None = scope
        first = True
        while current is not None:
            if current.kind != "class" or first:
                bindings = current.bindings.get(name)
                if bindings is not None:
                    return current, bindings
            first = False
            current = current.parent
        return None

    def name(self, name: str, scope: Scope, depth: int = 0) -> frozenset[str]:
        bound = self.bindings_of(name, scope)
        if bound is not None:
            return self._bindings(name, bound[0], bound[1], depth)
        found = frozenset(f"{module}.{name}" for module in self.star_modules)
        return found | {name} if name in API_ROOTS else found

    def _bindings(self, name: str, scope: Scope, bindings: list[tuple], depth: int) -> frozenset[str]:
        key = (id(scope), name)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        if key in self._active:
            return EMPTY
        self._active.add(key)
        out: set[str] = set()
        try:
            for binding in bindings:
                tag = binding[0]
                if tag == "qual":
                    out.add(binding[1])
                elif tag == "expr":
                    out |= self.expr(binding[1], binding[2], depth + 1)
        finally:
            self._active.discard(key)
        result = frozenset(out)
        self._memo[key] = result
        return result


def bind_import(scope: Scope, node: ast.Import | ast.ImportFrom, package: list[str], star_modules: list[str]) -> list[str]:
    """Record what an import statement binds, in every spelling Python allows; return the targets."""
    targets: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                scope.bind(alias.asname, ("qual", alias.name))
            else:
                top = alias.name.split(".")[0]
                scope.bind(top, ("qual", top))
            targets.append(alias.name)
        return targets
    if node.level:
        base = package[: len(package) - (node.level - 1)] if node.level - 1 <= len(package) else []
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    for alias in node.names:
        if alias.name == "*":
            if scope.kind == "module":
                star_modules.append(module)
            continue
        target = f"{module}.{alias.name}" if module else alias.name
        scope.bind(alias.asname or alias.name, ("qual", target))
        targets.append(target)
    return targets
