"""Whole-file syntax trees kept from the analysis's parse for WN110's later readers: one parse per file.

WN110's constructor-argument reader (``selection.py``) and its fold placement
(``fold_point.py``) read a whole file's statements, late in the run, for the
files that apply weight norm in a class or function and those that serve a
model.  The analysis parsed those files already, in pieces: their trees, moved
to the file's lines and put back together, are kept here by the digest of the
bytes, so the readers take them instead of parsing the file again.  A ``-j``
worker's analysis sends them pickled (``PickledTree``), unpickled on demand.

Only what the readers may ask for is kept, up to a budget of source
characters (a tree is about 60 bytes per source byte; memory target 50 per
byte of the tree linted): a file past it is parsed again when asked for.  Both
readers use statement line ranges and the expressions as written; the serving
walk's slimmed expressions (no end positions) are the same to them.
"""

from __future__ import annotations

import ast
import logging
import pickle
from collections.abc import Callable

from ...core import catalogue
from ..model import FileSummary
from .facts import ServingFacts
from .reader import ServingReader
from .slim_trees import shift_lines

logger = logging.getLogger(__name__)

#: Source characters whose trees are kept at most, over the run (a few hundred model files).
KEPT_CHARS = 2 << 20
#: A file bigger than this is not kept (its pieces would stay in memory together while it is analysed).
LARGEST_KEPT = 1 << 17


class PickledTree:
    """A file's whole tree as a ``-j`` worker kept it (pickled; unpickled only when a reader asks for it)."""

    def __init__(self, chars: int, data: bytes) -> None:
        self.chars = chars
        self.data = data


class PieceTrees:
    """The trees of one file's pieces, moved to the file's lines (a ``PieceReader`` run before the serving walk)."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.bodies: list[ast.stmt] | None = [] if chars <= LARGEST_KEPT else None

    def feed(self, offset: int, tree: ast.Module) -> None:
        """Move the piece to the file's lines (the serving walk then reads it at offset 0) and keep its statements."""
        if offset:
            shift_lines(tree, offset)
        if self.bodies is not None:
            self.bodies.extend(tree.body)

    def module(self) -> ast.Module | None:
        return ast.Module(body=self.bodies, type_ignores=[]) if self.bodies is not None else None

    def for_main(self, summary: FileSummary, facts: ServingFacts | None) -> PickledTree | None:
        """In a worker: the tree pickled for the main process where WN110's readers may ask for it (``wanted``).

        Unpickling costs about half a parse, and only a tree a reader asks for is unpickled.  The pickler recurses
        about three frames per level of the tree: a tree nested deeper than the recursion limit allows is not sent
        (the reader parses the file, as it would without workers).
        """
        tree = self.module() if facts is not None and wanted(summary, facts) else None
        if tree is None:
            return None
        try:
            return PickledTree(self.chars, pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL))
        except (RecursionError, MemoryError, pickle.PicklingError) as error:  # deep nesting: the readers parse it
            logger.debug("a tree not sent to the main process: %r", error)
            return None


def reading_both(reader: ServingReader, trees: PieceTrees | None) -> Callable[[int, ast.Module], None]:
    """The analysis's other reader of each piece: its statements kept (``trees``), then the serving walk."""
    if trees is None:
        return reader.feed

    def both(offset: int, tree: ast.Module) -> None:
        trees.feed(offset, tree)
        reader.feed(0, tree)  # moved to the file's lines already

    return both


class KeptTrees:
    """Trees by the digest of the file's bytes, within the run's budget of source characters."""

    def __init__(self, budget: int = KEPT_CHARS) -> None:
        self._trees: dict[bytes, ast.Module] = {}
        self._pickled: dict[bytes, bytes] = {}  # a worker's trees, unpickled when first asked for
        self._left = budget

    def keep(self, digest: bytes, pieces: PieceTrees | PickledTree) -> None:
        if pieces.chars > self._left or digest in self._trees or digest in self._pickled:
            return
        if isinstance(pieces, PickledTree):
            self._pickled[digest] = pieces.data
        else:
            tree = pieces.module()
            if tree is None:
                return
            self._trees[digest] = tree
        self._left -= pieces.chars

    def keep_wanted(
        self, digest: bytes, summary: FileSummary, facts: ServingFacts | None, trees: PieceTrees | PickledTree | None,
    ) -> None:
        """Keep the file's tree when WN110's readers may ask for it (``wanted``; a worker's tree was only sent then)."""
        if isinstance(trees, PickledTree) or (trees is not None and facts is not None and wanted(summary, facts)):
            self.keep(digest, trees)

    def tree(self, digest: bytes) -> ast.Module | None:
        """The file's tree when the analysis kept it (a reader must not change it: others may read it after)."""
        found = self._trees.get(digest)
        if found is None and digest in self._pickled:
            found = self._trees[digest] = pickle.loads(self._pickled.pop(digest))  # our own worker's pickle
        return found


_WEIGHT_NORM = catalogue.Kind.WEIGHT_NORM.value


def wanted(summary: FileSummary, facts: ServingFacts) -> bool:
    """Whether WN110's readers may ask for the file's tree: it applies weight norm in a class or function
    (``selection``: is the application guarded?) or serves a model (``fold_point``: where the fold goes)."""
    return bool(facts.inference) or any(a.kind == _WEIGHT_NORM and a.site.unit != summary.module for a in summary.applications)
