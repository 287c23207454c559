"""Syntax trees made small for the serving-facts walk: line numbers shared, end positions dropped.

The walk keeps the nodes the linking reads (often two in five of a file's);
these passes keep what those nodes hold small, so memory follows the piece
being walked rather than the file.
"""

from __future__ import annotations

import ast
from typing import Iterable

from .walk_frame import Frame


def shift_lines(tree: ast.AST, offset: int) -> None:
    """``ast.increment_lineno``, with the nodes of one line sharing one line number object.

    The walk keeps the nodes the linker reads (about two in five of a file's);
    ``increment_lineno`` gives each node two new numbers of its own (a tenth of
    what a big file's walk holds).
    """
    shifted: dict[int, int] = {}
    stack: list[object] = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, ast.AST) or not (held := node.__dict__):
            continue  # a list's None or name; a context or operator (one object for the whole process)
        line, end = held.get("lineno"), held.get("end_lineno")
        if line is not None:
            setattr(node, "lineno", shifted.get(line) or shifted.setdefault(line, line + offset))
        if end is not None:
            setattr(node, "end_lineno", shifted.get(end) or shifted.setdefault(end, end + offset))
        for name in node._fields:  # the children, inline: this loop runs for every node of the file
            child = held.get(name)
            if type(child) is list:
                stack.extend(child)
            elif isinstance(child, ast.AST):
                stack.append(child)


#: Node attributes the linker never reads (the walk has read them): dropped from the nodes it keeps.
_UNREAD = ("end_lineno", "end_col_offset")


def slim_nodes(records: Iterable[tuple[str, object, Frame, object]]) -> None:
    """Drop the end positions of the nodes the walk's ``records`` keep (their node and extra parts).

    The linker reads the calls, values and annotations the walk kept, often
    two in five of a file's nodes; without the end positions a node's
    attribute dictionary is the small size (a fifth of what a big file's walk
    holds).  A node without them has its subtree
    slimmed already (nested calls are kept once for each call around them).
    """
    stack: list[object] = []
    for record in records:
        for part in (record[1], record[3]):
            if type(part) is list:
                stack.extend(part)
            elif isinstance(part, ast.AST):
                stack.append(part)
    while stack:
        node = stack.pop()
        if not isinstance(node, ast.AST) or not (held := node.__dict__):
            continue
        if "end_lineno" in held:
            node.__dict__ = {name: value for name, value in held.items() if name not in _UNREAD}
        elif node._attributes:
            continue
        for name in node._fields:  # inline, as in ``shift_lines``: this loop runs for every kept node
            child = held.get(name)
            if type(child) is list:
                stack.extend(child)
            elif isinstance(child, ast.AST):
                stack.append(child)
