"""A bound on what evaluating an archive's expression can cost, decided before anything evaluates it.

Guards (``exec``'d by ``ep.module()``) and symbolic shapes (``sympy.sympify``'d by the loader) that
pass the "plain arithmetic" screens can still hang the process: ``9**9**9**9`` is plain arithmetic
whose value has more digits than there are atoms.  Python and sympy compute integers exactly, so the
cost of an expression is the size of the numbers it builds.  Each node gets an upper bound on the
bits of its value (a literal: its own; a size or symbol: 64; a sum: one more than its larger term; a
product: the sum of its factors; a power: the base's bits times a literal exponent of at most
:data:`MAX_EXPONENT`); an expression whose bound exceeds :data:`MAX_RESULT_BITS`, with a literal
wider than :data:`MAX_NUMBER_BITS`, or with more than :data:`MAX_NODES` nodes, is refused.  The walk
is iterative: a deeply nested expression costs no Python recursion.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence

#: A literal in an expression holds at most this many bits (torch's sizes and bounds fit in 64).
MAX_NUMBER_BITS = 64
#: Any value an expression computes holds at most this many bits (exact arithmetic on it is instant).
MAX_RESULT_BITS = 1 << 14
#: The largest literal exponent (and shift) accepted.
MAX_EXPONENT = 64
#: An expression of more nodes than this is refused before it is walked (real ones have a few dozen).
MAX_NODES = 10_000
#: An input size, stride or a symbol standing for one.
SIZE_BITS = 64
#: Length of a float written as a string (``Float('0.5')``): digits cost too.
_MAX_NUMBER_TEXT = 64

#: Calls whose value is a power of their first argument by their second (sympy and torch's shape functions).
_POWERS = frozenset({"Pow", "PowByNatural", "FloatPow"})
_SHIFTS = frozenset({"LShift"})
_PRODUCTS = frozenset({"Mul"})
_SUMS = frozenset({"Add"})


def affordable(expression: ast.AST) -> bool:
    """Whether evaluating ``expression`` builds only numbers of at most :data:`MAX_RESULT_BITS` bits."""
    for count, _ in enumerate(ast.walk(expression), start=1):
        if count > MAX_NODES:
            return False
    return _bits(expression) is not None


def _bits(root: ast.AST) -> int | None:
    """The bound on ``root``'s value, children first, with an explicit stack."""
    done: dict[int, int | None] = {}
    stack: list[tuple[ast.AST, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        children = list(ast.iter_child_nodes(node))
        if not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        if any(done.get(id(child), 0) is None for child in children):
            return None
        bits = _node_bits(node, lambda child: done.get(id(child)) or 0)
        if bits is None or bits > MAX_RESULT_BITS:
            return None
        done[id(node)] = bits
    return done.get(id(root))


def _node_bits(node: ast.AST, child: Callable[[ast.AST], int]) -> int | None:
    if isinstance(node, ast.Constant):
        return _literal_bits(node.value)
    if isinstance(node, (ast.Name, ast.Subscript, ast.Attribute)):
        return SIZE_BITS
    if isinstance(node, ast.BinOp):
        return _binary_bits(node.op, child(node.left), node.right, child(node.right))
    if isinstance(node, ast.UnaryOp):
        return child(node.operand) + 1
    if isinstance(node, ast.Call):
        return _call_bits(node, child)
    children = list(ast.iter_child_nodes(node))
    return max((child(item) for item in children), default=0) + 1


def _literal_bits(value: object) -> int | None:
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int):
        return value.bit_length() if value.bit_length() <= MAX_NUMBER_BITS else None
    if isinstance(value, float):
        return SIZE_BITS if math.isfinite(value) else None
    if isinstance(value, str):
        return _text_bits(value)
    return None


def _text_bits(text: str) -> int | None:
    """A quoted symbol name costs nothing; a quoted number (``Float('0.5')``, ``Integer('7')``) is bounded like a literal."""
    try:
        number = float(text)
    except ValueError:
        return 0
    if len(text) > _MAX_NUMBER_TEXT or not math.isfinite(number):
        return None
    return SIZE_BITS if abs(number) < 2.0**MAX_NUMBER_BITS else None


def _exponent(node: ast.AST) -> int | None:
    """A literal integer exponent (or shift) within bounds, possibly negated; None otherwise."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Integer" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value <= MAX_EXPONENT:
        return node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, float) and abs(node.value) <= MAX_EXPONENT:
        return math.ceil(abs(node.value))
    return None


def _binary_bits(op: ast.operator, left: int, right_node: ast.AST, right: int) -> int | None:
    if isinstance(op, (ast.Add, ast.Sub, ast.BitOr, ast.BitXor, ast.BitAnd)):
        return max(left, right) + 1
    if isinstance(op, ast.Mult):
        return left + right
    if isinstance(op, (ast.FloorDiv, ast.Mod, ast.Div, ast.RShift)):
        return max(left, right)
    if isinstance(op, (ast.Pow, ast.LShift)):
        return _raised(op, left, right_node)
    return None


def _raised(op: ast.operator | str, left: int, exponent_node: ast.AST) -> int | None:
    exponent = _exponent(exponent_node)
    if exponent is None:
        return None
    if isinstance(op, ast.LShift) or op in _SHIFTS:
        return left + max(exponent, 0)
    return left * max(exponent, 1)


def _call_bits(node: ast.Call, child: Callable[[ast.AST], int]) -> int | None:
    name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""
    arguments: Sequence[ast.AST] = [*node.args, *(keyword.value for keyword in node.keywords)]
    sizes = [child(argument) for argument in node.args]
    if name in _POWERS or name in _SHIFTS:
        return _raised(name, sizes[0], node.args[1]) if len(node.args) == 2 else None
    if name in _PRODUCTS:
        return sum(sizes)
    if name in _SUMS:
        return max(sizes, default=0) + max(len(sizes), 1).bit_length()
    return max([SIZE_BITS, *(child(argument) for argument in arguments)])
