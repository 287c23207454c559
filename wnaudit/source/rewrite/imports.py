"""Drop the module-level imports that only the rewritten calls used.

The fixed file must stay clean under flake8/ruff F401; but only names the
rewrite itself stopped referencing go (anything unused before the fix is the
author's business).  Which names are referenced is read with ``ast``,
conservatively: a name counts wherever and however it appears.
"""

from __future__ import annotations

import ast
import re
from typing import Sequence, Union

import libcst as cst

_IDENTIFIER = re.compile(r"[^\W\d]\w*")

#: One statement of a module's body, as libcst types it.
Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]


def orphaned_names(before: str | bytes, after: str | bytes, keep: frozenset[str]) -> set[str]:
    """Names ``before`` referenced and ``after`` no longer does, except ``keep`` (``"*"``: keep all)."""
    if "*" in keep:
        return set()
    return referenced_names(ast.parse(before)) - referenced_names(ast.parse(after)) - keep


def _string_words(node: ast.AST) -> set[str]:
    """Identifiers inside the string constants under ``node`` (string annotations, ``__all__`` entries)."""
    return {
        word
        for child in ast.walk(node)
        if isinstance(child, ast.Constant) and isinstance(child.value, str)
        for word in _IDENTIFIER.findall(child.value)
    }


def _is_all_target(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "__all__"


def referenced_names(tree: ast.AST) -> set[str]:
    """Every name the module refers to outside import statements, conservatively.

    Any ``Name`` counts whatever its context (a store or ``del`` keeps an import
    as surely as a load), and so do ``global``/``nonlocal`` names, the words in
    string annotations and the strings of ``__all__`` (re-exports).  Words in
    other strings (docstrings, messages) do not: they mention, not use.
    """
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(_is_all_target(t) for t in targets):
                names |= _string_words(node.value)
            if isinstance(node, ast.AnnAssign):
                names |= _string_words(node.annotation)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_all_target(node.func.value):
            for arg in node.args:  # __all__.append("x") / __all__.extend([...])
                names |= _string_words(arg)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            names |= _string_words(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            names |= _string_words(node.returns)
    return names


def _bound_name(alias: cst.ImportAlias) -> str:
    """The name an import alias binds: ``as`` name, else the first component of the dotted name."""
    if alias.asname is not None:
        bound = alias.asname.name
        return bound.value if isinstance(bound, cst.Name) else cst.Module([]).code_for_node(bound)
    node: cst.BaseExpression = alias.name
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else cst.Module([]).code_for_node(node)


def _prune_import(statement: cst.BaseSmallStatement, orphaned: set[str]) -> cst.BaseSmallStatement | None:
    """The import with the orphaned names dropped, the same node when none is, or None when all are."""
    if isinstance(statement, cst.ImportFrom):
        if isinstance(statement.names, cst.ImportStar):
            return statement
        module = statement.module
        if statement.relative == () and isinstance(module, cst.Name) and module.value == "__future__":
            return statement
        names: Sequence[cst.ImportAlias] = statement.names
    elif isinstance(statement, cst.Import):
        names = statement.names
    else:
        return statement
    kept = [alias for alias in names if _bound_name(alias) not in orphaned]
    if len(kept) == len(names):
        return statement
    if not kept:
        return None
    if kept[-1] is not names[-1]:
        # The new last name takes the old last one's comma (a trailing one, or none).
        kept[-1] = kept[-1].with_changes(comma=names[-1].comma)
    return statement.with_changes(names=kept)


def prune_imports(module: cst.Module, orphaned: set[str]) -> cst.Module:
    """Drop, from the module-level import statements, the names in ``orphaned``.

    Only the module's own top-level statements are touched, so no block is ever
    left empty.  A statement that loses every name goes, and its comment lines
    move to the statement after it.
    """
    if not orphaned:
        return module
    footer = list(module.footer)
    result: list[Statement] = []
    carried: list[cst.EmptyLine] = []
    for statement in module.body:
        if carried:
            mine = list(statement.leading_lines)
            if any(line.comment is not None for line in carried) or not mine:
                statement = statement.with_changes(leading_lines=[*carried, *mine])
            carried = []
        if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
            small = [_prune_import(s, orphaned) for s in statement.body]
            if any(new is not old for new, old in zip(small, statement.body)):
                left = [s for s in small if s is not None]
                if not left:
                    carried = list(statement.leading_lines)
                    continue
                if small[-1] is None:
                    left[-1] = left[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                statement = statement.with_changes(body=left)
        result.append(statement)
    if any(line.comment is not None for line in carried):
        footer = [*carried, *footer]
    return module.with_changes(body=result, footer=footer)
