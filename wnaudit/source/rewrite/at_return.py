"""Fold a model where a loader function returns it: the edit ``wnaudit probe --fix`` makes.

The probe has seen the model the loader returns compute live weight norms; the
fold goes where that model leaves the loader, before each ``return`` of the
function (after every load in it).  It is WN110's fold: the same statement
(``rules/never_folded.fold_statement``: no dependency added unless the project
already imports wnaudit or ``fix-fold`` asks for it) put by the same inserter
(``insert.py``) through the same file rewrite (``transform.py``), so the local
fold, ``import torch`` and ``import wnaudit`` arrive as they do for WN110.
A ``return`` of an expression (``return Vocoder().eval()``) is first split
into an assignment and a ``return`` of a name, so the fold has a name to fold.
"""

from __future__ import annotations

import ast
from typing import Sequence

import libcst as cst

from ..analysis.pieces import deep_recursion
from ..model import FileSummary, Site
from ..rules.base import Candidate, Insertion
from ..rules.never_folded import fold_statement
from .errors import FixError
from .transform import rewrite

#: The code the edit's candidates carry (the rewrite reads only their insertions).
_CODE = "WN206"
_NAMES = ("model", "served_model", "folded_model")


def fold_before_returns(data: bytes, path: str, function: str, *, fix_fold: str, wnaudit_imported: bool) -> bytes:
    """``data`` with a fold of the returned model before every ``return`` of ``function`` (``load`` or ``Loader.load``).

    :class:`FixError` when the function is not defined at the top of the file
    (or as a method of a top-level class), returns nothing, or the result does not parse.
    """
    try:
        with deep_recursion():
            named = _returns_named(data, function)
            returns = _returns(_parse(named), function)
            candidates = [_candidate(path, function, ret, fix_fold, wnaudit_imported) for ret in returns]
            fixed, done = rewrite(named, FileSummary(path=path, module=""), {}, frozenset(), inserts=candidates)
    except cst.ParserSyntaxError as error:
        raise FixError(f"libcst cannot parse the file: {error.message}") from error
    if len(done) != len(candidates):
        raise FixError(f"cannot place the fold before every return of {function}()")
    return fixed if isinstance(fixed, bytes) else fixed.encode("utf-8")


def _parse(data: bytes) -> ast.Module:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError) as error:
        raise FixError(f"the file does not parse: {error}") from error


def _function(tree: ast.Module, function: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    scope: Sequence[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in function.split("."):
        found = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
        if found is None:
            break
        scope = found.body
    if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise FixError(f"no function {function}() defined at the top of the file (or in a top-level class)")
    return found


def _returns(tree: ast.Module, function: str) -> list[ast.Return]:
    """The function's own ``return`` statements (not those of functions or classes nested in it)."""
    node = _function(tree, function)
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(current, ast.Return):
            found.append(current)
        stack.extend(ast.iter_child_nodes(current))
    if not found or any(ret.value is None for ret in found):
        raise FixError(f"{function}() has a return without a model to fold")
    return sorted(found, key=lambda ret: ret.lineno)


def _candidate(path: str, function: str, ret: ast.Return, fix_fold: str, wnaudit_imported: bool) -> Candidate:
    if not isinstance(ret.value, ast.Name):
        raise FixError(f"line {ret.lineno}: cannot give the returned model a name to fold")
    target = ret.value.id
    statement, module, local, said = fold_statement(target, fix_fold, imported=wnaudit_imported)
    site = Site(ret.lineno, ret.col_offset + 1, ret.end_lineno or ret.lineno, (ret.end_col_offset or 0) + 1, function)
    insert = Insertion(file=path, line=ret.lineno, statement=statement, module=module, placement="after", target=target, local=local)
    return Candidate(_CODE, site, f"fold the served model with {said}", None, insert)


def _returns_named(data: bytes, function: str) -> bytes:
    """Split every ``return <expression>`` of the function into ``name = <expression>`` and ``return name``."""
    tree = _parse(data)
    returns = _returns(tree, function)
    lines = {ret.lineno for ret in returns if not isinstance(ret.value, ast.Name)}
    if not lines:
        return data
    used = {n.id for n in ast.walk(_function(tree, function)) if isinstance(n, ast.Name)}
    name = next((candidate for candidate in _NAMES if candidate not in used), None)
    if name is None:
        raise FixError(f"{function}() returns an expression and uses every name the fold could give it")
    wrapper = cst.MetadataWrapper(cst.parse_module(data), unsafe_skip_copy=True)
    splitter = _ReturnSplitter(wrapper.resolve(cst.metadata.PositionProvider), lines, name)
    return wrapper.module.visit(splitter).bytes


class _ReturnSplitter(cst.CSTTransformer):
    def __init__(self, positions: object, lines: set[int], name: str) -> None:
        super().__init__()
        self.positions = positions
        self.lines = lines
        self.name = name

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        where = self.positions[original_node]  # type: ignore[index]
        body = updated_node.body
        if where.start.line not in self.lines or len(body) != 1 or not isinstance(body[0], cst.Return) or body[0].value is None:
            return updated_node
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(self.name))], value=body[0].value)
        first = updated_node.with_changes(body=[assign])
        second = cst.SimpleStatementLine(body=[cst.Return(value=cst.Name(self.name))])
        return cst.FlattenSentinel([first, second])
