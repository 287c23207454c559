"""Apply the rules' fixes to one file through libcst, keeping everything else byte for byte.

Calls are found by the positions the analysis recorded, via libcst's
PositionProvider; comments, formatting, the encoding (PEP 263 cookie, BOM) and
line endings survive because libcst regenerates the untouched tree exactly.
Each candidate's own fix function rewrites its call; then the file gets what
the new calls need and loses the imports only the old ones used.
"""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from ..analysis.pieces import deep_recursion
from .errors import FixError
from ..model import FileSummary
from ..rules.base import Candidate
from .imports import orphaned_names, prune_imports
from .insert import Inserter, add_imports
from .support import binds_top_level, insert_support

logger = logging.getLogger(__name__)

#: A call's position as libcst reports it: start line, start column, end line, end column (columns 0-based).
Span = tuple[int, int, int, int]


class _CallFixer(cst.CSTTransformer):
    """Rewrites the wanted calls with their candidates' fixes, and notes what the file then needs."""

    def __init__(
        self, positions: Mapping[cst.CSTNode, CodeRange], wanted: Mapping[Span, Sequence[Candidate]], path: str,
        inserter: Inserter, rebinds: Sequence[Candidate] = (),
    ) -> None:
        super().__init__()
        self.inserter = inserter
        self.positions = positions
        self.wanted = wanted
        self.path = path
        self.done: list[Candidate] = []
        self.helper_kinds: set[str] = set()
        self.needs_torch = False
        #: Names written in a binding that a wanted fix (or a call elsewhere: ``rebinds``) rewrites -> the dotted name they become.
        self.bindings: dict[Span, str] = {
            candidate.fix.binding[0]: candidate.fix.binding[1]
            for candidate in (*(c for todo in wanted.values() for c in todo), *rebinds)
            if candidate.fix is not None and candidate.fix.binding is not None
        }
        #: The binding spans actually rewritten (a candidate from another file is fixed when its span is).
        self.rebound: set[Span] = set()

    def _rebound(self, original_node: cst.CSTNode, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if not self.bindings:
            return updated_node
        where = self.positions.get(original_node)
        if where is None:
            return updated_node
        span = (where.start.line, where.start.column, where.end.line, where.end.column)
        new = self.bindings.get(span)
        if new is None:
            return updated_node
        self.rebound.add(span)
        return cst.parse_expression(new)

    # Statements added beside the call rewrites, in the same walk (the inserter places them by the old positions).
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.inserter.visit_ClassDef(node)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        return self.inserter.leave_ClassDef(original_node, updated_node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.inserter.visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        return self.inserter.leave_FunctionDef(original_node, updated_node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return self.inserter.leave_IndentedBlock(original_node, updated_node)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return self.inserter.leave_Module(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._rebound(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._rebound(original_node, updated_node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        where = self.positions.get(original_node)
        if where is None:
            return updated_node
        todo = self.wanted.get((where.start.line, where.start.column, where.end.line, where.end.column))
        if not todo:
            return updated_node
        result = updated_node
        for candidate in todo:
            fix = candidate.fix
            new = fix.rewrite(result, fix.kind) if fix is not None else None
            if fix is None or new is None:
                logger.debug("%s: cannot fix %s at %d:%d", self.path, candidate.code, candidate.site.line, candidate.site.column)
                continue
            result = new
            self.done.append(candidate)
            if fix.helper:
                self.helper_kinds.add(fix.kind)
            self.needs_torch = self.needs_torch or fix.torch
        return result


def rewrite(
    data: str | bytes, summary: FileSummary, wanted: Mapping[Span, Sequence[Candidate]], keep: frozenset[str],
    inserts: Sequence[Candidate] = (), rebinds: Sequence[Candidate] = (),
) -> tuple[str | bytes, list[Candidate]]:
    """The fixed content and the candidates fixed; FixError when libcst or the result cannot be parsed.

    ``rebinds``: candidates whose fix rewrites only a binding written in this file (their call is elsewhere).
    """
    try:
        with deep_recursion():
            return _rewrite(data, summary, wanted, keep, inserts, rebinds)
    except cst.ParserSyntaxError as error:
        raise FixError(f"libcst cannot parse the file: {error.message}") from error
    except RecursionError as error:
        raise FixError("the file nests too deeply for libcst") from error
    except (SyntaxError, ValueError) as error:  # ast's view of the result, for the import cleanup
        raise FixError(f"the fixed file does not parse: {error}") from error


def _code(module: cst.Module, like: str | bytes) -> str | bytes:
    """The module's text, as bytes (in its own encoding) when the input was bytes."""
    return module.bytes if isinstance(like, bytes) else module.code


def _rewrite(
    data: str | bytes, summary: FileSummary, wanted: Mapping[Span, Sequence[Candidate]], keep: frozenset[str],
    inserts: Sequence[Candidate], rebinds: Sequence[Candidate],
) -> tuple[str | bytes, list[Candidate]]:
    wrapper = MetadataWrapper(cst.parse_module(data), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    fixer = _CallFixer(positions, wanted, summary.path, Inserter(wrapper.module, positions, list(inserts)), rebinds)
    fixed = wrapper.module.visit(fixer)
    for candidate in rebinds:
        fix = candidate.fix
        if fix is not None and fix.binding is not None and fix.binding[0] in fixer.rebound:
            fixer.done.append(candidate)
            fixer.needs_torch = fixer.needs_torch or fix.torch
        else:
            logger.debug("%s: binding of %s not found at %s", summary.path, candidate.code, fix.binding if fix else None)
    inserted = fixer.inserter.done
    if not fixer.done and not inserted:
        return data, []
    fixed = add_imports(fixed, inserted)
    local = any(c.insert is not None and c.insert.local for c in inserted)  # the local fold spells torch.nn...
    # A file fixed only for a statement (a notebook serving a model) may not be summarised: its imports say.
    needs_torch = (fixer.needs_torch or local) and not summary.torch_bound and not binds_top_level(fixed, "torch")
    fixed = insert_support(fixed, sorted(fixer.helper_kinds), needs_torch, fold=local)
    fixed = prune_imports(fixed, orphaned_names(data, _code(fixed, data), keep))
    return _code(fixed, data), [*fixer.done, *inserted]
