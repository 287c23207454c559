"""A file's serving facts read from its syntax trees: the walk of each piece, then the linking of the whole file.

The one way to compute ``ServingFacts`` (the index, the analyses and the
workers all come here): from bytes (``read_serving_facts``), or from the
trees another reader parsed (``ServingReader``: one parse of a file feeds both).
"""

from __future__ import annotations

import ast
from typing import Iterable

from ...common.gc_pause import cyclic_gc_paused
from ..analysis import deep_recursion, parse_pieces
from ..reading import decode
from .fact_walker import FactWalker
from .flags import Settings
from .facts import READ_ERRORS, ServingFacts
from .linker import Linker
from .slim_trees import shift_lines, slim_nodes


def serving_facts(pieces: Iterable[tuple[int, ast.Module]], module: str, is_package: bool) -> ServingFacts:
    """The serving-path facts of one file, from its syntax trees piece by piece (``analysis.parse_pieces``)."""
    reader = ServingReader(module, is_package)
    for offset, tree in pieces:
        reader.feed(offset, tree)
        del tree
    return reader.finish()


class ServingReader:
    """A file's serving facts, read from syntax trees another reader parsed (one parse of a file feeds both).

    Each piece's tree counts lines from its own start: it is moved to the
    file's lines, walked and its kept nodes slimmed, so memory follows the
    piece, not the file.  ``feed`` changes the tree (lines, end positions):
    it is the last reader of each piece (the analysis walks it first).
    What the walk raises is kept for ``finish``, so a hook never breaks the
    reader that parsed (the analysis of the file stands on its own).
    """

    def __init__(self, module: str, is_package: bool) -> None:
        self._walker = FactWalker(module, is_package)
        self._settings = Settings()
        self._error: BaseException | None = None

    def feed(self, offset: int, tree: ast.Module) -> None:
        """Walk one piece of the file (``offset``: the lines before it)."""
        if self._error is not None:
            return
        walker = self._walker
        try:
            self._settings.visit(tree)
            if offset:
                shift_lines(tree, offset)
            kept = len(walker.pending)
            walker.walk(tree)
            slim_nodes(walker.pending[kept:])
        except (ValueError, RecursionError, MemoryError) as error:
            self._error = error

    def finish(self) -> ServingFacts:
        """The file's facts once every piece is fed; raises what a piece's walk raised."""
        if self._error is not None:
            raise self._error
        self._walker.note_smoke_tests()
        found = Linker(self._walker).run()
        found.settings = self._settings.found
        return found

    def facts(self) -> ServingFacts | None:
        """``finish``, None when the walk failed (whoever reads the facts later reads the file again, and reports why)."""
        try:
            return self.finish()
        except READ_ERRORS:
            return None


def read_serving_facts(data: bytes, path: str, module: str, is_package: bool) -> ServingFacts:
    """A file's serving facts from its bytes, wherever they are computed (the index, the analyses, the workers).

    Any tree CPython can build, as the analysis walks it; no collection rescans the tree meanwhile.
    Raises one of ``READ_ERRORS`` when the file cannot be read as code.
    """
    with deep_recursion(), cyclic_gc_paused():
        return serving_facts(parse_pieces(decode(data).text, path), module, is_package)
