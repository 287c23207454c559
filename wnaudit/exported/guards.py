"""Whether an archive's input guards are plain arithmetic on input sizes, so running the program runs nothing else.

``ep.module()`` pastes each ``guards_code`` string into ``torch._assert(GUARD, "Guard failed: ...")``
and ``exec``s the function it builds (torch 2.13, ``torch/export/_unlift.py``).  Programs with
derived dynamic dimensions carry such guards (``1 + (L['x'].size()[2] // 2) <= 2*L['x'].size()[2]``).
A guard is accepted only when it is one line of sizes, strides or numbers of the inputs
(``L['x'].size()[2]``), combined by arithmetic, comparisons, boolean operators and a few pure
functions: no other name, attribute, call, string or comment, so nothing but that arithmetic can run
and nothing can escape the text torch pastes it into; and only when the numbers it builds are
bounded (:mod:`.expression_cost`: ``9**9**9**9`` is plain arithmetic that never finishes).
"""

from __future__ import annotations

import ast

from ..core.catalogue import (
    PT2_GUARD_FUNCTIONS,
    PT2_GUARD_KEY,
    PT2_GUARD_MATH_FUNCTIONS,
    PT2_GUARD_ROOT,
    PT2_GUARD_TENSOR_METHODS,
)
from .expression_cost import affordable

#: Characters that could end the expression torch pastes the guard into, or hide text from the parser.
_FORBIDDEN_CHARACTERS = frozenset('#\\\n\r;"')
_STRUCTURE = (
    ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Load, ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)
_MATH_MODULE = "math"
_NUMBER_NAMES = frozenset({"inf"})


def is_plain_guard(code: str) -> bool:
    if not isinstance(code, str) or _FORBIDDEN_CHARACTERS.intersection(code):
        return False
    try:
        tree = ast.parse(code, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    stack: list[ast.AST] = [tree.body]
    while stack:
        node = stack.pop()
        children = _plain_children(node)
        if children is None:
            return False
        stack.extend(children)
    return affordable(tree.body)


def _plain_children(node: ast.AST) -> list[ast.AST] | None:
    """The sub-expressions still to check, or None if ``node`` itself is not plain."""
    if isinstance(node, _STRUCTURE):
        return list(ast.iter_child_nodes(node))
    if isinstance(node, ast.Constant):
        return [] if isinstance(node.value, (int, float)) else None
    if isinstance(node, ast.Name):
        return [] if node.id in _NUMBER_NAMES else None
    if isinstance(node, ast.Subscript):
        return [] if _is_size_item(node) else None
    if isinstance(node, ast.Call):
        return _call_arguments(node)
    return None


def _call_arguments(node: ast.Call) -> list[ast.AST] | None:
    if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
        return None
    function = node.func
    if isinstance(function, ast.Name) and function.id in PT2_GUARD_FUNCTIONS:
        return list(node.args)
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        if function.value.id == _MATH_MODULE and function.attr in PT2_GUARD_MATH_FUNCTIONS:
            return list(node.args)
    if _is_tensor_method_call(node) and not node.args:
        return []
    return None


def _is_size_item(node: ast.Subscript) -> bool:
    """``L['x'].size()[2]``: an item of an input's sizes or strides."""
    return _is_int(node.slice) and isinstance(node.value, ast.Call) and _is_tensor_method_call(node.value) and not node.value.args


def _is_tensor_method_call(node: ast.Call) -> bool:
    function = node.func
    return (
        not node.keywords and isinstance(function, ast.Attribute) and function.attr in PT2_GUARD_TENSOR_METHODS
        and _is_input_path(function.value)
    )


def _is_input_path(node: ast.AST) -> bool:
    """``L['x']``, ``L['z']['k']``, ``L['args'][0]``: an input of the program, reached by keys and indices."""
    while isinstance(node, ast.Subscript):
        key = node.slice
        if not (_is_int(key) or (isinstance(key, ast.Constant) and isinstance(key.value, str) and PT2_GUARD_KEY.fullmatch(key.value))):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id == PT2_GUARD_ROOT


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int
