"""Analyse: one file's content -> its facts (``FileSummary``), or one line saying why it is not Python.

The verdict of the parse is the syntax check: a file is parsed only when it
is analysed (its bytes could hold a finding) or when a rule reads it
(WN110's serving files); ``check_syntax`` is the cheaper verdict alone.
"""

from __future__ import annotations

import ast
import sys
import warnings

from ..analysis import Aliases, PieceReader, analyze
from ..model import FileSummary
from ..project import Location
from ..reading import SourceError, decode
from ..rules import declared_providers
from ..serving.facts import ServingFacts
from ..serving.kept_trees import PieceTrees, reading_both
from ..serving.reader import ServingReader


def syntax_message(error: SyntaxError) -> str:
    """The one-line error of a file that is not valid Python (the syntax cache stores it as it is)."""
    where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "") if error.lineno else "unknown position"
    return f"syntax error at {where}: {error.msg}"


def parse_failure(error: BaseException) -> str:
    """The one-line error for any way a parse can fail."""
    if isinstance(error, SyntaxError):
        return syntax_message(error)
    if isinstance(error, SourceError):
        return str(error)
    return f"cannot parse: {type(error).__name__}: {error}"


def check_syntax(text: str, path: str) -> None:
    """SourceError (one line) when ``text`` is not valid Python: the verdict of the parse ``analyze`` does, nothing kept.

    The bytecode compiler runs the same parser without building Python objects
    for the tree (about a third cheaper), so a file it accepts without a word
    is valid; anything else (an error, a warning, deep nesting) gets the
    tree-building parse, whose verdict is the answer.
    """
    if compiles_quietly(text, path):
        return
    try:  # inline, not a call: how deep a tree can be built depends on the stack depth of the parse
        compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise SourceError(parse_failure(error)) from error


def parse_syntax(text: str, path: str) -> None:
    """``check_syntax`` by building the tree, as ``ast.parse`` does: the reference verdict (for tests and benchmarks)."""
    try:
        compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise SourceError(parse_failure(error)) from error


def compiles_quietly(text: str, path: str) -> bool:
    """True when the bytecode compiler accepts ``text`` with no warning and a third of the recursion budget to spare.

    The compiler checks more than the parser (``return`` outside a function, ``nonlocal``,
    ``__future__`` names) and warns where the parser does not: those answers are never used,
    only "accepted quietly".  Building the tree nests a level or so deeper than compiling
    does, so the compiler runs with two thirds of the recursion limit: what it accepts
    nests far below the depth at which building the tree fails.
    """
    limit = sys.getrecursionlimit()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sys.setrecursionlimit(max(limit * 2 // 3, 1))
            try:
                compile(text, path, "exec", dont_inherit=True)
            finally:
                sys.setrecursionlimit(limit)
    except Exception:  # noqa: BLE001 - any failure: the tree-building parse decides
        return False
    return not caught


def summarize(
    data: bytes | str, path: str, module: str, is_package: bool = False, aliases: Aliases | None = None, file: str = "",
    also: PieceReader | None = None,
) -> FileSummary:
    """Analyse one file's content; SourceError (one line) when it is not valid Python.

    ``file`` is the file's identity as a module (its absolute path); ``aliases``
    the project names it imports that stand for torch APIs (``Workspace.aliases``);
    ``also`` reads the same syntax trees after the analysis (one parse for both).
    """
    if isinstance(data, bytes):
        text = decode(data).text
    else:
        text = data[1:] if data.startswith("\ufeff") else data
        if "\x00" in text:
            raise SourceError("binary file, not Python source (contains NUL bytes)")
    try:
        summary = analyze(text, path, module, is_package, aliases, declared_providers(), also)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise SourceError(parse_failure(error)) from error
    summary.file = file
    return summary


def summarize_at(
    data: bytes | str, path: str, location: Location, aliases: Aliases | None = None, also: PieceReader | None = None,
) -> FileSummary:
    """``summarize`` for a located file (its module name and identity come from the import system)."""
    return summarize(data, path, location.module, location.is_package, aliases, str(location.path), also)


def summarize_serving(
    data: bytes, path: str, location: Location, trees: PieceTrees | None = None,
) -> tuple[FileSummary, ServingFacts | None]:
    """The file's analysis and WN110's serving facts, both from one parse (the serving walk reads each piece after).

    ``trees``: also keep the pieces' statements (``kept_trees``: a run in one process hands them to WN110's readers).
    The facts are None when their walk failed (WN110's index then reads the file itself and reports why).
    SourceError (one line) when the file is not valid Python.
    """
    reader = ServingReader(location.module, location.is_package)
    summary = summarize_at(data, path, location, None, reading_both(reader, trees))
    return summary, reader.facts()


def facts_and_analysis(data: bytes, path: str, module: str, is_package: bool) -> tuple[ServingFacts | None, FileSummary | None]:
    """WN110's serving facts of a file its index reads ahead, with the file's analysis, from one parse (in a worker).

    (None, None) when the file does not parse: the index reads it itself and reports why.
    """
    reader = ServingReader(module, is_package)
    try:
        summary = summarize(data, path, module, is_package, None, path, reader.feed)
    except SourceError:
        return None, None
    return reader.facts(), summary
