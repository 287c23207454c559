"""What a fixed call may need from its file: ``import torch`` and the both-spellings helpers.

A fix that spells ``torch.nn.utils...`` needs ``torch`` bound; a fix that
calls ``_remove_weight_norm_any_spelling`` needs that helper defined.  Both
go with the file's leading imports, where isort and a reader expect them.
"""

from __future__ import annotations

from typing import Sequence, Union

import libcst as cst

from ...core import catalogue
from .calls import DEFAULT_TENSOR

Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]

_MODERN_REMOVER = catalogue.WEIGHT_NORM_MODERN.remove_apis[0]

#: The both-spellings removers the fixes add, by kind: (helper name, legacy remover).
HELPERS: dict[str, tuple[str, str]] = {
    catalogue.Kind.WEIGHT_NORM.value: ("_remove_weight_norm_any_spelling", catalogue.WEIGHT_NORM_LEGACY.remove_apis[0]),
    catalogue.Kind.SPECTRAL_NORM.value: ("_remove_spectral_norm_any_spelling", catalogue.SPECTRAL_NORM_LEGACY.remove_apis[0]),
}


def helper_name(kind: str) -> str:
    """The name of the helper that removes a ``kind`` applied by either torch spelling."""
    return HELPERS[kind][0]


def helper_source(kind: str, newline: str = "\n", indent: str = "    ") -> str:
    name, legacy = HELPERS[kind]
    lines = [
        f'def {name}(module, name="{DEFAULT_TENSOR}"):',
        f'{indent}"""Fold a {kind} applied by either torch spelling (added by wnaudit --fix)."""',
        f"{indent}try:",
        f"{indent * 2}return {legacy}(module, name)",
        f"{indent}except (ValueError, AttributeError):",
        f"{indent * 2}return {_MODERN_REMOVER}(module, name)",
    ]
    return newline.join(lines) + newline


def _is_torch_import(statement: Statement) -> bool:
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


def _is_import_block(statement: cst.BaseStatement) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)
    if isinstance(statement, (cst.Try, cst.If)):
        block = statement.body
        first = block.body[0] if isinstance(block, cst.IndentedBlock) and block.body else None
        return first is not None and _is_import_block(first)
    return False


def _is_docstring(statement: Statement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def insert_support(module: cst.Module, helper_kinds: Sequence[str], add_torch: bool) -> cst.Module:
    """Add ``import torch`` and the helpers to the file's leading imports.

    ``import torch`` goes before the first torch import of that block, where
    isort would sort it (after it when the block has none); the helpers go
    after the block.
    """
    body: list[Statement] = list(module.body)
    existing = {s.name.value for s in body if isinstance(s, cst.FunctionDef)}
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_import_block(body[index]):
        index += 1
    new: list[Statement] = []
    newline, indent = module.default_newline, module.default_indent
    torch_at = next((i for i in range(index) if _is_torch_import(body[i])), None)
    if add_torch:
        statement = cst.parse_statement("import torch" + newline, config=module.config_for_parsing)
        if torch_at is None:
            new.append(statement)
        else:
            # It takes over the blank/comment lines above the import it now precedes.
            first = body[torch_at]
            body[torch_at:torch_at + 1] = [statement.with_changes(leading_lines=first.leading_lines), first.with_changes(leading_lines=[])]
            index += 1
    blank = cst.EmptyLine(newline=cst.Newline())
    for kind in helper_kinds:
        if helper_name(kind) in existing:
            continue
        helper = cst.parse_statement(helper_source(kind, newline, indent), config=module.config_for_parsing)
        new.append(helper.with_changes(leading_lines=[blank, blank]))
    if not new:
        return module.with_changes(body=body)
    after = body[index:]
    if after and helper_kinds:
        lines = list(after[0].leading_lines)
        if len(lines) < 2:
            after[0] = after[0].with_changes(leading_lines=[blank] * (2 - len(lines)) + lines)
    return module.with_changes(body=[*body[:index], *new, *after])


def _binds_top_level(module: cst.Module, name: str) -> bool:
    """A leading import already binds ``name`` (``import wnaudit``, ``import wnaudit as w`` does not)."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import) and any(
                alias.asname is None and cst.Module([]).code_for_node(alias.name).partition(".")[0] == name
                for alias in small.names
            ):
                return True
    return False


def insert_import(module: cst.Module, name: str) -> cst.Module:
    """Add ``import <name>`` at the end of the file's leading imports, unless it is there."""
    if _binds_top_level(module, name):
        return module
    body: list[Statement] = list(module.body)
    index = 1 if body and _is_docstring(body[0]) else 0
    while index < len(body) and _is_import_block(body[index]):
        index += 1
    statement = cst.parse_statement(f"import {name}" + module.default_newline, config=module.config_for_parsing)
    return module.with_changes(body=[*body[:index], statement, *body[index:]])
