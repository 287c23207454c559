"""Signatures and helpers: ``__init__``'s parameters with their defaults, functions made only of tests and returns."""

from __future__ import annotations

import ast

from ..model import Param, Signature, Test
from ..resolve import Scope
from .conditions import tests_of
from .values import NamesOf, slim_value, to_value


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
