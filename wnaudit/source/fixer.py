"""Rewrite a file's flagged calls through libcst, keeping everything else byte for byte.

libcst is imported only here, and only when a fix or a diff is asked for: the
lint itself runs on ``ast`` (see resolve.py for why).  Calls are found by the
positions the analysis recorded, via libcst's PositionProvider; comments,
formatting, the encoding (PEP 263 cookie, BOM) and line endings survive
because libcst regenerates the untouched tree exactly.  Import names that only
the rewritten calls used are dropped afterwards (``_prune_imports``), so the
fixed file stays clean under flake8/ruff F401.
"""

from __future__ import annotations

import ast
import logging
import re
from typing import Iterable

from ..core import catalogue
from .analysis import deep_recursion
from .model import FileSummary
from .rules import (
    FIX_ADD_TENSOR_NAME,
    FIX_DUAL_FROM_MODERN,
    FIX_DUAL_REMOVE,
    FIX_LEAVE_PARAMETRIZED,
    FIX_MIGRATE_APPLY,
    FIX_MODERN_REMOVE,
    MODERN_REMOVER,
    MODERN_WEIGHT_NORM,
    Candidate,
)

logger = logging.getLogger(__name__)

DEFAULT_TENSOR = "weight"

#: The both-spellings removers the fix adds, by kind: (helper name, legacy remover).
HELPERS = {
    catalogue.Kind.WEIGHT_NORM.value: ("_remove_weight_norm_any_spelling", catalogue.WEIGHT_NORM_LEGACY.remove_apis[0]),
    catalogue.Kind.SPECTRAL_NORM.value: ("_remove_spectral_norm_any_spelling", catalogue.SPECTRAL_NORM_LEGACY.remove_apis[0]),
}


def helper_source(kind: str, newline: str = "\n", indent: str = "    ") -> str:
    name, legacy = HELPERS[kind]
    lines = [
        f'def {name}(module, name="{DEFAULT_TENSOR}"):',
        f'{indent}"""Fold a {kind} applied by either torch spelling (added by wnaudit --fix)."""',
        f"{indent}try:",
        f"{indent * 2}return {legacy}(module, name)",
        f"{indent}except (ValueError, AttributeError):",
        f"{indent * 2}return {MODERN_REMOVER}(module, name)",
    ]
    return newline.join(lines) + newline


class FixError(RuntimeError):
    """A fix could not be applied; the file is left as it was."""


def apply_fixes(
    data: bytes | str, summary: FileSummary, fixes: Iterable[Candidate], keep: frozenset[str] = frozenset(),
) -> tuple[bytes | str, list[Candidate]]:
    """Return the fixed content (same type as ``data``) and the candidates actually fixed.

    ``keep``: names other files import from this one; imports the fix leaves
    unused are dropped, but never these (the other files still need them);
    ``"*"`` in it (another file imports the module itself) keeps them all.
    """
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    wanted = {}
    for candidate in fixes:
        if candidate.fix is not None:
            site = candidate.site
            wanted.setdefault((site.line, site.column - 1, site.end_line, site.end_column - 1), []).append(candidate)
    if not wanted:
        return data, []
    try:
        with deep_recursion():
            return _apply(cst, MetadataWrapper, PositionProvider, data, summary, wanted, keep)
    except cst.ParserSyntaxError as error:
        raise FixError(f"libcst cannot parse the file: {error.message}") from error
    except RecursionError as error:
        raise FixError("the file nests too deeply for libcst") from error
    except (SyntaxError, ValueError) as error:  # ast's view of the result, for the import cleanup
        raise FixError(f"the fixed file does not parse: {error}") from error


def _apply(cst, MetadataWrapper, PositionProvider, data, summary, wanted, keep):  # type: ignore[no-untyped-def]
    module = cst.parse_module(data)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)

    done: list[Candidate] = []
    helpers: set[str] = set()
    needs_torch = False

    class Transformer(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            nonlocal needs_torch
            where = positions.get(original)
            if where is None:
                return updated
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            todo = wanted.get(key)
            if not todo:
                return updated
            result: cst.BaseExpression = updated
            for candidate in todo:
                action, kind = candidate.fix  # type: ignore[misc]
                new = _rewrite(cst, result, action, kind)
                if new is None:
                    logger.debug("%s: cannot fix %s at %d:%d", summary.path, candidate.code, candidate.site.line, candidate.site.column)
                    continue
                result = new
                done.append(candidate)
                if action in (FIX_DUAL_REMOVE, FIX_DUAL_FROM_MODERN):
                    helpers.add(kind)
                if action in (FIX_DUAL_REMOVE, FIX_DUAL_FROM_MODERN, FIX_MODERN_REMOVE, FIX_MIGRATE_APPLY):
                    needs_torch = True
            return result

    fixed = wrapper.module.visit(Transformer())
    if not done:
        return data, []
    fixed = _insert_support(cst, fixed, sorted(helpers), needs_torch and not summary.torch_bound)
    # Only names the rewrite itself stopped referencing are dropped from the imports:
    # anything unused before the fix is the author's business, not ours.
    fixed_data = fixed.bytes if isinstance(data, bytes) else fixed.code
    orphaned = set() if "*" in keep else _referenced_names(ast.parse(data)) - _referenced_names(ast.parse(fixed_data)) - keep
    fixed = _prune_imports(cst, fixed, orphaned)
    return (fixed.bytes if isinstance(data, bytes) else fixed.code), done


def _with_tensor_name(cst, call):  # type: ignore[no-untyped-def]
    """Pass the default tensor name to a remover called without one, keeping the rest as written."""
    args = list(call.args)
    if not args:
        return None
    space = cst.SimpleWhitespace(" ")
    last = args[-1]
    trailing: cst.Comma | None = None
    if isinstance(last.comma, cst.Comma):
        after = last.comma.whitespace_after
        separator = args[-2].comma.whitespace_after if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma) else call.whitespace_before_args
        if isinstance(after, cst.ParenthesizedWhitespace) and isinstance(separator, cst.ParenthesizedWhitespace):
            # One argument per line with a trailing comma: the new one gets its own line.
            args[-1] = last.with_changes(comma=last.comma.with_changes(
                whitespace_after=after.with_changes(indent=separator.indent, last_line=separator.last_line)))
            trailing = cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(
                first_line=cst.TrailingWhitespace(), empty_lines=[], indent=after.indent, last_line=after.last_line))
        elif isinstance(after, cst.SimpleWhitespace) and not after.value:
            args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=space))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=space))
    value = cst.SimpleString(f'"{DEFAULT_TENSOR}"')
    if any(arg.keyword is not None for arg in args):
        new_arg = cst.Arg(
            value, keyword=cst.Name("tensor_name"),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
        )
    else:
        new_arg = cst.Arg(value)
    if trailing is not None:
        new_arg = new_arg.with_changes(comma=trailing)
    return call.with_changes(args=[*args, new_arg])


def _multiline(cst, call) -> bool:  # type: ignore[no-untyped-def]
    return isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace)


def _rewrite(cst, call, action: str, kind: str):  # type: ignore[no-untyped-def]
    """One call rewritten, or None when its shape is not one the fix understands."""
    starred = any(arg.star for arg in call.args)
    if action == FIX_DUAL_REMOVE:
        return call.with_changes(func=cst.Name(HELPERS[kind][0]))
    if action == FIX_DUAL_FROM_MODERN:
        args = []
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "leave_parametrized":
                if not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                    return None
                continue
            if arg.keyword is not None and arg.keyword.value == "tensor_name":
                arg = arg.with_changes(keyword=cst.Name("name"))
            args.append(arg)
        positional = [a for a in args if a.keyword is None]
        if len(positional) > 2:
            if not (isinstance(positional[2].value, cst.Name) and positional[2].value.value == "True"):
                return None
            args.remove(positional[2])
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT) if not _multiline(cst, call) else args[-1]
        return call.with_changes(func=cst.Name(HELPERS[kind][0]), args=args)
    if action == FIX_MIGRATE_APPLY:
        return call.with_changes(func=cst.parse_expression(MODERN_WEIGHT_NORM))
    if action == FIX_MODERN_REMOVE:
        if starred:
            return None
        args = []
        named = len([a for a in call.args if a.keyword is None]) >= 2
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "name":
                arg = arg.with_changes(keyword=cst.Name("tensor_name"))
                named = True
            args.append(arg)
        if not any(a.keyword is None or a.keyword.value == "module" for a in args):
            return None
        renamed = call.with_changes(func=cst.parse_expression(MODERN_REMOVER), args=args)
        return renamed if named else _with_tensor_name(cst, renamed)
    if action == FIX_LEAVE_PARAMETRIZED:
        args = list(call.args)
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "leave_parametrized":
                args[index] = arg.with_changes(value=cst.Name("True"))
                return call.with_changes(args=args)
        positional = [i for i, a in enumerate(args) if a.keyword is None]
        if len(positional) >= 3:
            args[positional[2]] = args[positional[2]].with_changes(value=cst.Name("True"))
            return call.with_changes(args=args)
        return None
    if action == FIX_ADD_TENSOR_NAME:
        if starred:
            return None
        return _with_tensor_name(cst, call)
    return None


_IDENTIFIER = re.compile(r"[^\W\d]\w*")


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


def _referenced_names(tree: ast.AST) -> set[str]:
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


def _bound_name(cst, alias) -> str:  # type: ignore[no-untyped-def]
    """The name an import alias binds: ``as`` name, else the first component of the dotted name."""
    if alias.asname is not None:
        return alias.asname.name.value
    node = alias.name
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value


def _prune_import(cst, statement, orphaned: set[str]):  # type: ignore[no-untyped-def]
    """The import with the orphaned names dropped, the same node when none is, or None when all are."""
    if isinstance(statement, cst.ImportFrom):
        if isinstance(statement.names, cst.ImportStar):
            return statement
        module = statement.module
        if statement.relative == () and isinstance(module, cst.Name) and module.value == "__future__":
            return statement
    elif not isinstance(statement, cst.Import):
        return statement
    names = list(statement.names)
    kept = [alias for alias in names if _bound_name(cst, alias) not in orphaned]
    if len(kept) == len(names):
        return statement
    if not kept:
        return None
    if kept[-1] is not names[-1]:
        # The new last name takes the old last one's comma (a trailing one, or none).
        kept[-1] = kept[-1].with_changes(comma=names[-1].comma)
    return statement.with_changes(names=kept)


def _prune_imports(cst, module, orphaned: set[str]):  # type: ignore[no-untyped-def]
    """Drop, from the module-level import statements, the names in ``orphaned``.

    Only the module's own top-level statements are touched, so no block is ever
    left empty.  A statement that loses every name goes, and its comment lines
    move to the statement after it.
    """
    if not orphaned:
        return module
    body = list(module.body)
    footer = list(module.footer)
    result: list = []
    carried: list = []
    for statement in body:
        if carried:
            mine = list(statement.leading_lines)
            if any(line.comment is not None for line in carried) or not mine:
                statement = statement.with_changes(leading_lines=[*carried, *mine])
            carried = []
        if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
            small = [_prune_import(cst, s, orphaned) for s in statement.body]
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


def _is_torch_import(cst, statement) -> bool:  # type: ignore[no-untyped-def]
    """A top-level ``import torch...`` or ``from torch... import`` line (where isort puts ``import torch``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Import):
            dotted = [cst.Module([]).code_for_node(alias.name) for alias in small.names]
        elif isinstance(small, cst.ImportFrom) and small.relative == () and small.module is not None:
            dotted = [cst.Module([]).code_for_node(small.module)]
        else:
            continue
        if any(name == "torch" or name.startswith("torch.") for name in dotted):
            return True
    return False


def _is_import_block(cst, statement) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)
    if isinstance(statement, (cst.Try, cst.If)):
        first = statement.body.body[0] if statement.body.body else None
        return first is not None and _is_import_block(cst, first)
    return False


def _is_docstring(cst, statement) -> bool:  # type: ignore[no-untyped-def]
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _insert_support(cst, module, helper_kinds: list[str], add_torch: bool):  # type: ignore[no-untyped-def]
    """Add ``import torch`` and the helpers to the file's leading imports.

    ``import torch`` goes before the first torch import of that block, where
    isort would sort it (after it when the block has none); the helpers go
    after the block.
    """
    body = list(module.body)
    existing = {s.name.value for s in body if isinstance(s, cst.FunctionDef)}
    index = 0
    if body and _is_docstring(cst, body[0]):
        index = 1
    while index < len(body) and _is_import_block(cst, body[index]):
        index += 1
    new: list = []
    newline, indent = module.default_newline, module.default_indent
    torch_at = next((i for i in range(index) if _is_torch_import(cst, body[i])), None)
    if add_torch:
        statement = cst.parse_statement("import torch" + newline, config=module.config_for_parsing)
        if torch_at is None:
            new.append(statement)
        else:
            # It takes over the blank/comment lines above the import it now precedes.
            first = body[torch_at]
            body[torch_at:torch_at + 1] = [statement.with_changes(leading_lines=first.leading_lines), first.with_changes(leading_lines=[])]
            index += 1
    for kind in helper_kinds:
        name = HELPERS[kind][0]
        if name in existing:
            continue
        statement = cst.parse_statement(helper_source(kind, newline, indent), config=module.config_for_parsing)
        blank = cst.EmptyLine(newline=cst.Newline())
        statement = statement.with_changes(leading_lines=[blank, blank])
        new.append(statement)
    if not new:
        return module.with_changes(body=body)
    after = body[index:]
    if after and helper_kinds:
        first = after[0]
        lines = list(getattr(first, "leading_lines", ()))
        if len(lines) < 2 and hasattr(first, "leading_lines"):
            after[0] = first.with_changes(leading_lines=[cst.EmptyLine(newline=cst.Newline())] * (2 - len(lines)) + lines)
    return module.with_changes(body=[*body[:index], *new, *after])
