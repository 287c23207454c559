"""A file's source text as the analysis walks it: physical lines, pieces of syntax tree, character positions.

A big file is parsed in pieces of whole top-level statements, each tree
freed once walked, so memory follows the piece, not the file; every reader
of the trees (the analysis, the declared providers, WN110's serving facts)
walks the same pieces, so the file is parsed once.  A file another reader parsed
whole first (``parsed_ahead``) is walked as that one tree: it is in memory already.
"""

from __future__ import annotations

import ast
import contextlib
import re
import sys
from typing import Callable, Iterator

from ..model import Site
from . import parsed_ahead

#: Source is parsed in pieces of about this many characters (whole top-level statements):
#: the syntax tree of a piece is freed once walked, so memory follows the piece, not the file
#: (a 64 K piece's tree and parser state were a fixed ~6 MiB on top of every big file).
CHUNK_CHARS = 1 << 14
#: A line that may start a top-level statement: code at column 0 that does not continue one.
_TOP_STATEMENT = re.compile(r"^(?![ \t\r\f#)\]}]|else\b|elif\b|except\b|finally\b|$)", re.M)
#: Python frames the tree walk may need: about three per level of nesting, and
#: CPython compiles expressions nested a few thousand levels deep.
_WALK_RECURSION_LIMIT = 30_000

#: Another reader of a file's syntax trees: called with each piece (the lines before it, its tree) once the
#: analysis has walked it, so one parse of the file feeds both (WN110's serving facts, ``ServingReader.feed``).
PieceReader = Callable[[int, ast.Module], None]


def split_lines(text: str) -> list[str]:
    """Physical lines as the tokenizer numbers them (\\r\\n, \\r and \\n all end a line)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Let the walk follow any tree CPython itself could parse (pure-Python frames only)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, _WALK_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def parse_pieces(text: str, path: str) -> Iterator[tuple[int, ast.Module]]:
    """The module's syntax trees, piece by piece, each with the number of lines before it.

    A piece ends where a top-level statement may start; a cut that falls
    inside a statement (a string or bracket spanning lines, a decorator, an
    ``else``) does not parse, and the piece grows to the next cut.  A real
    syntax error is reported as a parse of the whole file reports it.  A tree
    another reader parsed of the same text (``parsed_ahead``) is taken whole.
    """
    ahead = parsed_ahead.take(text)
    if ahead is not None:
        yield 0, ahead
        return
    if len(text) <= CHUNK_CHARS:
        yield 0, ast.parse(text, filename=path)
        return
    cuts = [m.start() for m in _TOP_STATEMENT.finditer(text)]
    cuts.append(len(text))
    start, line = 0, 1
    index = 0
    while start < len(text):
        target = start + CHUNK_CHARS
        while index < len(cuts) - 1 and cuts[index] < target:
            index += 1
        while True:
            end = cuts[index]
            piece = text[start:end]
            try:
                tree = ast.parse(piece, filename=path)
                break
            except SyntaxError:
                if end >= len(text):
                    ast.parse(text, filename=path)  # raises the error with the whole file's positions
                    raise
                grown = start + 2 * (end - start)  # doubling keeps a broken file linear
                while index < len(cuts) - 1 and cuts[index] < grown:
                    index += 1
        yield line - 1, tree
        # Line breaks as the tokenizer counts them (\r\n, \r, \n).
        line += piece.count("\n") + piece.count("\r") - piece.count("\r\n")
        start = end


class Positions:
    """Convert ast's UTF-8 byte columns to 1-based character columns."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        #: Lines before the piece being walked (a piece's trees count lines from its own start).
        self.offset = 0

    def column(self, line: int, byte_offset: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_offset + 1
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "replace")) + 1

    def lines_of(self, node: ast.AST) -> list[str]:
        """The physical lines the node spans (a provider's cheap test before it walks the node)."""
        first = node.lineno + self.offset  # type: ignore[attr-defined]
        return self.lines[first - 1:(node.end_lineno or node.lineno) + self.offset]  # type: ignore[attr-defined]

    def site(self, node: ast.AST, unit: str) -> Site:
        line = node.lineno + self.offset  # type: ignore[attr-defined]
        end_line = (node.end_lineno or node.lineno) + self.offset  # type: ignore[attr-defined]
        return Site(
            line=line,
            column=self.column(line, node.col_offset),  # type: ignore[attr-defined]
            end_line=end_line,
            end_column=self.column(end_line, node.end_col_offset or 0),  # type: ignore[attr-defined]
            unit=unit,
        )
