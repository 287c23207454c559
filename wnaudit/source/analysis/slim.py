"""The part of an expression the resolver reads, kept without positions so a piece's tree can be freed."""

from __future__ import annotations

import ast


def slim(node: ast.expr | None, depth: int = 0) -> ast.expr | None:
    """The part of an expression the resolver can read (names, attributes, choices, getattr/partial calls).

    A binding keeps this instead of the whole value, so a module's trees can
    be freed as soon as they are walked; None: nothing the resolver reads.
    """
    if node is None or depth > 64:
        return None
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id)  # no positions: they would keep four attributes (two of them ints) per name
    if isinstance(node, ast.Attribute):
        value = slim(node.value, depth + 1)
        return ast.Attribute(value=value, attr=node.attr) if value is not None else None
    if isinstance(node, (ast.IfExp, ast.BoolOp)):
        return _slim_choice(node, depth)
    if isinstance(node, ast.NamedExpr):
        return slim(node.value, depth + 1)
    if isinstance(node, ast.Call):
        return _slim_call(node, depth)
    return None


def _slim_choice(node: ast.IfExp | ast.BoolOp, depth: int) -> ast.expr | None:
    """``a if flag else b`` and ``a or b``: a BoolOp of the alternatives the resolver can read."""
    if isinstance(node, ast.IfExp):
        body, orelse = slim(node.body, depth + 1), slim(node.orelse, depth + 1)
        if body is None and orelse is None:
            return None
        return ast.BoolOp(op=ast.Or(), values=[v for v in (body, orelse) if v is not None])
    values = [v for v in (slim(v, depth + 1) for v in node.values) if v is not None]
    return ast.BoolOp(op=node.op, values=values) if values else None


def _slim_call(node: ast.Call, depth: int) -> ast.expr | None:
    """A call with its callee and first three positional arguments (``getattr(nn.utils, "weight_norm")``, ``partial``)."""
    func = slim(node.func, depth + 1)
    if func is None:
        return None
    args: list[ast.expr] = []
    for arg in node.args[:3]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            args.append(ast.Constant(value=arg.value))
        else:
            args.append(slim(arg, depth + 1) or ast.Constant(value=None))
    return ast.Call(func=func, args=args, keywords=[])
