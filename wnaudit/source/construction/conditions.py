"""Tests on parameters as construction code writes them (``norm == "weight_norm"``, ``not flag``), and their verdicts.

A test the rules cannot read is ``Test("", "?")``; a verdict is None where
a value is unknown, so the rules treat it as "the code does not decide".
"""

from __future__ import annotations

import ast
from typing import Mapping

from ..model import Test

_UNREADABLE = Test("", "?")
_NEGATED = {"==": "!=", "!=": "==", "in": "not in", "not in": "in", "is": "is not", "is not": "is",
            "true": "false", "false": "true"}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


def is_literal(node: ast.expr) -> bool:
    """A constant construction code passes on as written (a string, a bool, a number, None)."""
    return isinstance(node, ast.Constant) and node.value is not Ellipsis and isinstance(
        node.value, (str, bool, int, float, type(None))
    )


def tests_of(node: ast.expr, params: frozenset[str], holds: bool) -> tuple[Test, ...]:
    """What must hold of the parameters for ``node`` to be ``holds`` (true or false); ``?`` where unreadable."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return tests_of(node.operand, params, not holds)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And if holds else ast.Or):
        return tuple(t for value in node.values for t in tests_of(value, params, holds))
    if _read_name(node, params):
        return (Test(_read_name(node, params), "true" if holds else "false"),)
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
        if _read_name(left, params) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            if all(is_literal(e) for e in right.elts):
                return Test(_read_name(left, params), name, tuple(repr(e.value) for e in right.elts))  # type: ignore[attr-defined]
        return None
    if isinstance(right, (ast.Name, ast.Attribute)) and is_literal(left) and name in ("==", "!="):
        left, right = right, left
    if _read_name(left, params) and is_literal(right):
        return Test(_read_name(left, params), name, (repr(right.value),))  # type: ignore[attr-defined]
    return None


def _read_name(node: ast.expr, params: frozenset[str]) -> str:
    """The parameter ``node`` reads, or the dotted constant (``Config.up_type``) a caller put among ``params``."""
    if isinstance(node, ast.Name):
        return node.id if node.id in params else ""
    dotted = dotted_name(node)
    return dotted if dotted is not None and "." in dotted and dotted in params else ""


def dotted_name(node: ast.expr) -> str | None:
    """``Config.up_type`` as written (a chain of attributes on a name), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def passes(tests: tuple[Test, ...], env: Mapping[str, object]) -> bool | None:
    """Whether every test holds for the constants in ``env``: None when one is unknown."""
    result: bool | None = True
    for test in tests:
        verdict = _passes(test, env)
        if verdict is False:
            return False
        if verdict is None:
            result = None
    return result


def _passes(test: Test, env: Mapping[str, object]) -> bool | None:
    arg = env.get(test.param) if test.param else None
    if not isinstance(arg, str):
        return None  # a module, or unknown
    try:
        value = ast.literal_eval(arg)
        literals = [ast.literal_eval(literal) for literal in test.literals]
    except (ValueError, SyntaxError):
        return None
    if test.op in ("true", "false"):
        return bool(value) is (test.op == "true")
    if test.op in ("==", "in"):
        return value in literals
    if test.op in ("!=", "not in"):
        return value not in literals
    if test.op in ("is", "is not") and len(literals) == 1 and literals[0] in (None, True, False):
        return (value is literals[0]) is (test.op == "is")
    return None
