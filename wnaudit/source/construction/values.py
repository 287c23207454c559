"""Values construction code passes on: a positionless slim copy while walking, resolved ``model.Value`` after.

The syntax is first cut down to a positionless copy (``slim_value``) while
the tree is walked, since names are resolved only once the whole module is
known (``to_value``).
"""

from __future__ import annotations

import ast
from typing import Callable

from ..model import Value
from ..resolve import Scope
from .conditions import is_literal, tests_of

#: The unknown: an expression construction code does not pass on as a constant, parameter or call.
UNKNOWN_NODE = ast.Constant(value=Ellipsis)
UNKNOWN = Value("unknown")
#: Deeper values are unknown: construction code nests a few calls, not hundreds.
_MAX_DEPTH = 24
#: Elements of a list kept for a container (``nn.ModuleList([a, b, ...])``).
_MAX_ELEMENTS = 64
#: Containers whose elements are the modules put in them (their arguments are kept).
CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})
#: Resolves a callee expression in a scope to the qualified names it may be.
NamesOf = Callable[[ast.expr, Scope], frozenset[str]]


def _callee(node: ast.expr, depth: int) -> ast.expr | None:
    """A callee as a positionless chain of names (``nn.Conv1d``); None for anything else."""
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id)
    if isinstance(node, ast.Attribute) and depth < _MAX_DEPTH:
        value = _callee(node.value, depth + 1)
        return ast.Attribute(value=value, attr=node.attr) if value is not None else None
    return None


def slim_value(node: ast.expr | None, offset: int, depth: int = 0) -> ast.expr:
    """A positionless copy of what a value passes on: constants, names, calls (with their line), lists."""
    if node is None or depth > _MAX_DEPTH:
        return UNKNOWN_NODE
    if is_literal(node):
        return ast.Constant(value=node.value)  # type: ignore[attr-defined]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and is_literal(node.operand):
        value = node.operand.value  # type: ignore[attr-defined]
        return ast.Constant(value=-value) if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN_NODE
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id)
    if isinstance(node, ast.Call):
        return _slim_call(node, offset, depth)
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) <= _MAX_ELEMENTS:
        return ast.List(elts=[slim_value(e, offset, depth + 1) for e in node.elts])
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return ast.List(elts=[slim_value(node.elt, offset, depth + 1)])
    if isinstance(node, ast.IfExp):  # ``weight_norm(conv) if use_weight_norm else conv``: the test is kept to read
        return ast.IfExp(test=node.test, body=slim_value(node.body, offset, depth + 1), orelse=slim_value(node.orelse, offset, depth + 1))
    return UNKNOWN_NODE


def _slim_call(node: ast.Call, offset: int, depth: int) -> ast.expr:
    func = _callee(node.func, depth + 1)
    if func is None:
        return UNKNOWN_NODE
    args = [ast.Starred(value=UNKNOWN_NODE) if isinstance(a, ast.Starred) else slim_value(a, offset, depth + 1) for a in node.args]
    keywords = [ast.keyword(arg=k.arg, value=slim_value(k.value, offset, depth + 1) if k.arg else UNKNOWN_NODE) for k in node.keywords]
    return ast.Call(func=func, args=args, keywords=keywords, lineno=node.lineno + offset)


def to_value(node: ast.expr, scope: Scope, names_of: NamesOf, params: frozenset[str]) -> Value:
    """The ``Value`` of a slim expression: callees resolved in ``scope``, ``params`` named as parameters."""
    if node is UNKNOWN_NODE:
        return UNKNOWN
    if isinstance(node, ast.Constant):
        return Value("const", literal=repr(node.value))
    if isinstance(node, ast.Name):
        return Value("param", names=(node.id,)) if node.id in params else UNKNOWN
    if isinstance(node, ast.List):
        return Value("list", args=tuple(to_value(e, scope, names_of, params) for e in node.elts))
    if isinstance(node, ast.IfExp):
        branches = (to_value(node.body, scope, names_of, params), to_value(node.orelse, scope, names_of, params))
        return Value("if", args=branches, when=tests_of(node.test, params, True))
    if isinstance(node, ast.Call):
        names = names_of(node.func, scope)
        if not names:
            return Value("unknown", line=getattr(node, "lineno", 0))
        star = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if all(name.partition(".")[0] == "torch" for name in names) and not names & CONTAINERS:
            # A torch layer or norm applier: what it is matters, not what it is given (keeps the summaries small).
            return Value("call", names=tuple(sorted(names)), star=star, line=getattr(node, "lineno", 0))
        return Value(
            "call",
            names=tuple(sorted(names)),
            args=tuple(to_value(a, scope, names_of, params) for a in node.args if not isinstance(a, ast.Starred)),
            keywords=tuple((k.arg, to_value(k.value, scope, names_of, params)) for k in node.keywords if k.arg),
            star=star,
            line=getattr(node, "lineno", 0),
        )
    return UNKNOWN
