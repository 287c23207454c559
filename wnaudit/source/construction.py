"""How construction code passes constants on: the facts the removal-target rules follow (WN109).

``SConv1d(..., norm="weight_norm")`` builds ``NormConv1d(..., norm=norm)``,
which builds ``apply_parametrization_norm(nn.Conv1d(...), norm)``; whether a
removal on the outer module raises depends on where that string leads.  The
analysis keeps, for the attributes a class builds, the functions made only of
tests and returns, and each ``__init__``'s parameters, a small tree of
``model.Value`` instead of the syntax tree: callees resolved to qualified
names, constants as ``repr`` writes them, parameters by name.  Everything
else is "unknown", which the rules read as "the code does not decide".

The syntax is first cut down to a positionless copy (``slim_value``) while
the tree is walked, since names are resolved only once the whole module is
known (``to_value``).
"""

from __future__ import annotations

import ast
from typing import Callable

from .model import Param, Signature, Test, Value
from .resolve import Scope

#: The unknown: an expression construction code does not pass on as a constant, parameter or call.
UNKNOWN_NODE = ast.Constant(value=Ellipsis)
UNKNOWN = Value("unknown")
#: Deeper values are unknown: construction code nests a few calls, not hundreds.
_MAX_DEPTH = 24
#: Elements of a list kept for a container (``nn.ModuleList([a, b, ...])``).
_MAX_ELEMENTS = 64
_UNREADABLE = Test("", "?")
_NEGATED = {"==": "!=", "!=": "==", "in": "not in", "not in": "in", "is": "is not", "is not": "is",
            "true": "false", "false": "true"}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}

#: Containers whose elements are the modules put in them (their arguments are kept).
CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})
#: Resolves a callee expression in a scope to the qualified names it may be.
NamesOf = Callable[[ast.expr, Scope], frozenset[str]]


def _literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is not Ellipsis and isinstance(
        node.value, (str, bool, int, float, type(None))
    )


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
    if _literal(node):
        return ast.Constant(value=node.value)  # type: ignore[attr-defined]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _literal(node.operand):
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


# -- tests ---------------------------------------------------------------------------
def tests_of(node: ast.expr, params: frozenset[str], holds: bool) -> tuple[Test, ...]:
    """What must hold of the parameters for ``node`` to be ``holds`` (true or false); ``?`` where unreadable."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return tests_of(node.operand, params, not holds)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And if holds else ast.Or):
        return tuple(t for value in node.values for t in tests_of(value, params, holds))
    if isinstance(node, ast.Name) and node.id in params:
        return (Test(node.id, "true" if holds else "false"),)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        found = _comparison(node.left, node.ops[0], node.comparators[0], params)
        if found is not None:
            return (found if holds else Test(found.param, _NEGATED[found.op], found.literals),)
    return (_UNREADABLE,)


def _comparison(left: ast.expr, op: ast.cmpop, right: ast.expr, params: frozenset[str]) -> Test | None:
    name = _COMPARE.get(type(op))
    if name is None:
        return None
    if name in ("in", "not in"):
        if isinstance(left, ast.Name) and left.id in params and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            if all(_literal(e) for e in right.elts):
                return Test(left.id, name, tuple(repr(e.value) for e in right.elts))  # type: ignore[attr-defined]
        return None
    if isinstance(right, ast.Name) and _literal(left) and name in ("==", "!="):
        left, right = right, left
    if isinstance(left, ast.Name) and left.id in params and _literal(right):
        return Test(left.id, name, (repr(right.value),))  # type: ignore[attr-defined]
    return None


# -- signatures and helpers ------------------------------------------------------------
def signature_of(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, offset: int) -> tuple[Signature, list[ast.expr | None]]:
    """The parameters (``self`` dropped for a method) and their defaults as slim values (resolved later)."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    params: list[Param] = []
    raw: list[ast.expr | None] = []
    for index, (arg, default) in enumerate(zip(positional, defaults)):
        if method and index == 0:
            continue
        params.append(Param(arg.arg, None, True, index >= len(arguments.posonlyargs)))
        raw.append(slim_value(default, offset) if default is not None else None)
    for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        params.append(Param(arg.arg, None, False, True))
        raw.append(slim_value(kw_default, offset) if kw_default is not None else None)
    return Signature(tuple(params), arguments.vararg is not None, arguments.kwarg is not None), raw


def with_defaults(signature: Signature, raw: list[ast.expr | None], scope: Scope, names_of: NamesOf) -> Signature:
    """The signature with its defaults resolved (defaults see no parameters)."""
    params = tuple(
        Param(p.name, to_value(d, scope, names_of, frozenset()) if d is not None else None, p.positional, p.keyword)
        for p, d in zip(signature.params, raw)
    )
    return Signature(params, signature.varargs, signature.varkw)


def parameter_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    arguments = node.args
    named = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return frozenset(a.arg for a in named)


#: Statements a helper may hold besides tests and returns: they neither bind nor change anything.
_INERT = (ast.Pass, ast.Assert)


def helper_returns(node: ast.FunctionDef | ast.AsyncFunctionDef, offset: int) -> list[tuple[tuple[Test, ...], ast.expr]] | None:
    """The returns of a function made only of tests and returns, each with the tests that lead to it; else None."""
    params = parameter_names(node)
    out: list[tuple[tuple[Test, ...], ast.expr]] = []
    if _block_returns(node.body, (), params, offset, out) is None or not out:
        return None
    return out


def _block_returns(
    body: list[ast.stmt], when: tuple[Test, ...], params: frozenset[str], offset: int,
    out: list[tuple[tuple[Test, ...], ast.expr]],
) -> bool | None:
    """Collect the block's returns; True when it always ends (return or raise), None when it holds other code."""
    for statement in body:
        if isinstance(statement, _INERT) or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
            continue
        if isinstance(statement, ast.Return):
            out.append((when, slim_value(statement.value, offset) if statement.value is not None else ast.Constant(value=None)))
            return True
        if isinstance(statement, ast.Raise):
            return True
        if not isinstance(statement, ast.If):
            return None
        then = _block_returns(statement.body, when + tests_of(statement.test, params, True), params, offset, out)
        orelse = _block_returns(statement.orelse, when + tests_of(statement.test, params, False), params, offset, out)
        if then is None or orelse is None:
            return None
        if then and orelse:
            return True
        if then:
            when = when + tests_of(statement.test, params, False)
        elif orelse:
            when = when + tests_of(statement.test, params, True)
    return False
