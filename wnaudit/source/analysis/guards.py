"""How a removal is protected against meeting the other spelling: the ``try`` and ``if`` around a call.

The walks that keep a call's context (the analysis, the removal method
calls provider) share ``walk_try``, so both read a ``try`` the same way.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from ...core import catalogue

#: Exceptions whose handler swallows the ValueError of a legacy remover.
SWALLOWS = frozenset({"ValueError", "Exception", "BaseException"})
#: The same for remove_parametrizations on a module without that parametrization.
_CATCHES_MODERN = SWALLOWS | {"KeyError"}
_SPELLING_CHECK = catalogue.SPELLING_GUARD_WORDS


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


def guard(caught: frozenset[str] | None, ifs: tuple[ast.expr, ...], other_spelling_nearby: bool, modern: bool) -> str:
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
