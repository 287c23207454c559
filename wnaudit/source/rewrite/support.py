"""What a fixed call may need from its file: ``import torch`` and the both-spellings helpers.

A fix that spells ``torch.nn.utils...`` needs ``torch`` bound; a fix that
calls ``_remove_weight_norm_any_spelling`` needs that helper defined, and
WN110's local fold needs :data:`FOLD_HELPER` (torch only, so the fixed project
does not depend on wnaudit).  They go with the file's leading imports, where
isort and a reader expect them.
"""

from __future__ import annotations

from typing import Sequence, Union

import libcst as cst

from ...core import catalogue
from ..rules.base import LOCAL_FOLD
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


#: The local fold WN110's fix defines when the project does not use wnaudit (``fold_source``).
FOLD_HELPER = LOCAL_FOLD
_WEIGHT_NORM_CLASS = catalogue.WEIGHT_NORM_MODERN.implementation.rpartition(".")[2]
_WEIGHT_NORM_HOOK = catalogue.WEIGHT_NORM_LEGACY.implementation.rpartition(".")[2]
_G, _V = catalogue.LEGACY_WEIGHT_NORM_SUFFIXES


def fold_source(newline: str = "\n", indent: str = "    ") -> str:
    """The local fold: torch's own removers, then a ``Parameter`` keeping ``requires_grad``, in any grad mode.

    torch's removers alone leave a buffer (modern, under ``no_grad`` or for a
    frozen model), an inference tensor (under ``inference_mode``) or an
    unfrozen weight (legacy); this gives what ``wnaudit.fold_weight_norm``
    gives, bit for bit.  Classes are matched by name: ``_WeightNorm`` is private.
    """
    i1, i2, i3, i4, i5 = (indent * n for n in range(1, 6))
    parametrize = _MODERN_REMOVER.rpartition(".")[0]
    exact = "with torch.inference_mode(False), torch.no_grad():"  # a plain tensor, whatever mode the caller is in
    lines = [
        f"def {FOLD_HELPER}(model):",
        f'{i1}"""Fold every weight norm in ``model`` (either torch spelling) into a plain weight (added by wnaudit --fix)."""',
        f"{i1}for module in list(model.modules()):",
        f"{i2}folded = {{}}",
        f"{i2}if {parametrize}.is_parametrized(module):",
        f"{i3}for name, chain in list(module.{catalogue.PARAMETRIZATIONS_ATTR}.items()):",
        f'{i4}if all(type(p).__name__ == "{_WEIGHT_NORM_CLASS}" for p in chain):',
        f"{i5}folded[name] = any(p.requires_grad for p in chain.parameters())",
        f"{i5}{exact}",
        f"{i5}{indent}{_MODERN_REMOVER}(module, name, leave_parametrized=True)",
        f"{i2}for hook in list(module._forward_pre_hooks.values()):",
        f'{i3}if type(hook).__name__ == "{_WEIGHT_NORM_HOOK}":',
        f'{i4}parts = [getattr(module, hook.name + suffix) for suffix in ("{_G}", "{_V}")]',
        f"{i4}folded[hook.name] = any(p.requires_grad for p in parts)",
        f"{i4}{exact}",
        f"{i5}{catalogue.WEIGHT_NORM_LEGACY.remove_apis[0]}(module, hook.name)",
        f"{i2}for name, requires_grad in folded.items():",
        f"{i3}weight = getattr(module, name).detach()",
        f"{i3}delattr(module, name)",
        f"{i3}module.register_parameter(name, torch.nn.Parameter(weight, requires_grad=requires_grad))",
        f"{i1}return model",
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
    """An import line (a ``pass`` too: a notebook's ``%pip install`` stands there as one), or a try/if of imports."""
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom, cst.Pass)) for s in statement.body)
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


def insert_support(module: cst.Module, helper_kinds: Sequence[str], add_torch: bool, fold: bool = False) -> cst.Module:
    """Add ``import torch`` and the helpers (``fold``: the local fold too) to the file's leading imports.

    ``import torch`` goes before the first torch import of that block, where
    isort would sort it (after it when the block has none); the helpers go
    after the block.  A helper the file already defines is not added again.
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
    sources = [(helper_name(kind), helper_source(kind, newline, indent)) for kind in helper_kinds]
    if fold:
        sources.append((FOLD_HELPER, fold_source(newline, indent)))
    for name, text in sources:
        if name in existing:
            continue
        helper = cst.parse_statement(text, config=module.config_for_parsing)
        new.append(helper.with_changes(leading_lines=[blank, blank]))
    if not new:
        return module.with_changes(body=body)
    after = body[index:]
    if after and sources:
        lines = list(after[0].leading_lines)
        if len(lines) < 2:
            after[0] = after[0].with_changes(leading_lines=[blank] * (2 - len(lines)) + lines)
    return module.with_changes(body=[*body[:index], *new, *after])


def binds_top_level(module: cst.Module, name: str) -> bool:
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
    if binds_top_level(module, name):
        return module
    body: list[Statement] = list(module.body)
    index = 1 if body and _is_docstring(body[0]) else 0
    while index < len(body) and _is_import_block(body[index]):
        index += 1
    statement = cst.parse_statement(f"import {name}" + module.default_newline, config=module.config_for_parsing)
    return module.with_changes(body=[*body[:index], statement, *body[index:]])
