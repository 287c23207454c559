"""Drop the module-level imports that only the rewritten calls used.

The fixed file must stay clean under flake8/ruff F401; but only names the
rewrite itself stopped referencing go (anything unused before the fix is the
author's business).  Which names are referenced is read with ``ast``,
conservatively: a name counts wherever and however it appears.
"""

from __future__ import annotations

import ast
import builtins
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


def _pruned_line(statement: cst.SimpleStatementLine, orphaned: set[str]) -> cst.SimpleStatementLine | None:
    """An import line without the orphaned names; None when nothing is left of it."""
    if not any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
        return statement
    small = [_prune_import(s, orphaned) for s in statement.body]
    if all(new is old for new, old in zip(small, statement.body)):
        return statement
    left = [s for s in small if s is not None]
    if not left:
        return None
    if small[-1] is None:
        left[-1] = left[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=left)


_PASS = cst.SimpleStatementLine(body=[cst.Pass()])


def _is_pass(block: cst.BaseSuite) -> bool:
    body = getattr(block, "body", ())
    return all(isinstance(line, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in line.body) for line in body)


def _pruned_block(block: cst.IndentedBlock, orphaned: set[str]) -> cst.IndentedBlock:
    """A try/if block's statements pruned; a block left empty holds ``pass``."""
    body = [kept for line in block.body if (kept := _pruned_statement(line, orphaned)) is not None]
    if len(body) == len(block.body) and all(a is b for a, b in zip(body, block.body)):
        return block
    return block.with_changes(body=body or [_PASS])


def _pruned_compound(statement: cst.Try | cst.If, orphaned: set[str]) -> cst.Try | cst.If | None:
    """``try``/``if`` around imports (``try: from new import x / except ImportError: from old import x``):
    pruned inside, a block left empty holding ``pass``; a ``try`` left with nothing else goes."""
    pruned: cst.Try | cst.If
    if isinstance(statement, cst.Try):
        if statement.orelse is not None or statement.finalbody is not None or not isinstance(statement.body, cst.IndentedBlock):
            return statement
        handlers = [
            h.with_changes(body=_pruned_block(h.body, orphaned)) if isinstance(h.body, cst.IndentedBlock) else h
            for h in statement.handlers
        ]
        pruned = statement.with_changes(body=_pruned_block(statement.body, orphaned), handlers=handlers)
        blocks = [pruned.body, *(h.body for h in pruned.handlers)]
    else:
        if statement.orelse is not None or not isinstance(statement.body, cst.IndentedBlock):
            return statement
        pruned = statement.with_changes(body=_pruned_block(statement.body, orphaned))
        blocks = [pruned.body]
    if pruned.deep_equals(statement):
        return statement
    # Gone only when it names nothing else: an ``if`` test or an ``except MyError`` would orphan its names.
    droppable = isinstance(pruned, cst.Try) and all(_builtin_type(h.type) for h in pruned.handlers)
    return None if droppable and all(_is_pass(block) for block in blocks) else pruned


def _builtin_type(node: cst.BaseExpression | None) -> bool:
    """``except:``, ``except ImportError:``, ``except (ImportError, AttributeError):``: no project name."""
    if node is None:
        return True
    if isinstance(node, cst.Tuple):
        return all(_builtin_type(element.value) for element in node.elements)
    return isinstance(node, cst.Name) and node.value in vars(builtins)


def _pruned_statement(statement: cst.CSTNode, orphaned: set[str]) -> cst.CSTNode | None:
    if isinstance(statement, cst.SimpleStatementLine):
        return _pruned_line(statement, orphaned)
    if isinstance(statement, (cst.Try, cst.If)):
        return _pruned_compound(statement, orphaned)
    return statement


def prune_imports(module: cst.Module, orphaned: set[str]) -> cst.Module:
    """Drop, from the module-level import statements, the names in ``orphaned``.

    The module's own top-level statements are touched, and the blocks of a
    top-level ``try``/``if`` that choose between spellings of an import
    (pyflakes reports a name left there as unused just the same); a block left
    empty holds ``pass``, and such a statement with nothing else left goes.  A
    statement that goes takes its comment lines to the statement after it.
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
        pruned = _pruned_statement(statement, orphaned)
        if pruned is None:
            carried = list(statement.leading_lines)
            continue
        assert isinstance(pruned, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        result.append(pruned)
    if any(line.comment is not None for line in carried):
        footer = [*carried, *footer]
    return module.with_changes(body=result, footer=footer)
