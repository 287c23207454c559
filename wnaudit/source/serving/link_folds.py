"""Folds: a remover or fold API called on a model, applied with ``model.apply(fn)``, or a helper handed a model.

A fold is linked to the model it names (a member, where it names one); one
that folds only some parts (a guarded ``named_children()`` loop, an
``exclude=``), only the legacy spelling, or only under a configuration flag
is recorded as such, so the index never takes it for a fold of everything.
"""

from __future__ import annotations

import ast

from .fact_shapes import FOLDS, LEGACY_REMOVERS, exclusion
from .facts import HelperCall, Use
from .link_refs import RefLookup
from .walk_frame import Frame


class FoldLinker:
    """Links the calls that fold a model, or that hand one to a project function that may."""

    def __init__(self, lookup: RefLookup) -> None:
        self.lookup = lookup
        self.facts = lookup.facts

    def record(self, node: ast.Call, names: frozenset[str], first: ast.expr | None, frame: Frame) -> bool:
        """A remover or fold API called, or applied with ``model.apply(fn)`` (True: the call is fully recorded)."""
        if names & FOLDS:
            # ``fold(model.dec)`` folds that part, not its siblings: recorded as the member (``index`` falls back
            # to the whole model where the member resolves to nothing)
            refs = (self.lookup.member_refs(first, frame) or self.lookup.model_refs(first, frame)) if first is not None else ()
            legacy = names & FOLDS <= LEGACY_REMOVERS
            excluded, written = exclusion(node)
            partial = self.lookup.walker.skipping.get(id(node), "") or written
            use = Use(
                node.lineno, node.col_offset + 1, ast.unparse(node), refs, frame.number, legacy=legacy, partial=partial,
                excluded=excluded,
            )
            self.fold(use, frame)
            return True
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "apply" and first is not None:
            return self._applied_function(node, func, first, frame)
        return False

    def _applied_function(self, node: ast.Call, func: ast.Attribute, first: ast.expr, frame: Frame) -> bool:
        """``model.apply(fn)``: a fold when ``fn`` is one (True: the call is fully recorded), else a helper call."""
        applied = self.lookup.names(first, frame)
        receiver = self.lookup.model_refs(func.value, frame)
        if applied & FOLDS:
            legacy = applied & FOLDS <= LEGACY_REMOVERS
            self.fold(Use(node.lineno, node.col_offset + 1, ast.unparse(node), receiver, frame.number, legacy=legacy), frame)
            return True
        if applied:
            self.facts.helper_calls.append(HelperCall(tuple(sorted(applied)), receiver, frame.number, 0))
            if frame.body is not None:
                frame.body.callees.update(applied)
        return False

    def model_arguments(self, node: ast.Call, names: frozenset[str], frame: Frame) -> None:
        """``fold_all(model)``: a project function handed a model may fold it (one record per argument)."""
        for position, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            refs = self.lookup.argument_refs(arg, frame)
            if refs:
                self.facts.helper_calls.append(HelperCall(tuple(sorted(names)), refs, frame.number, position))
        for keyword in node.keywords:
            refs = self.lookup.argument_refs(keyword.value, frame) if keyword.arg else ()
            if keyword.arg and refs:
                self.facts.helper_calls.append(HelperCall(tuple(sorted(names)), refs, frame.number, -1, keyword.arg))

    def fold(self, use: Use, frame: Frame) -> None:
        """Record a fold, and the scope it folds (as a whole, for the legacy spelling alone, or under a flag)."""
        self.facts.folds.append(use)
        flag = self.flag_at(use.line)
        scopes = "legacy_folding_scopes" if use.legacy else "folding_scopes"
        if flag and (use.legacy or not use.partial and not any(ref[0] == "sub" for ref in use.refs)):
            self.facts.flagged.append((flag, scopes, frame.number))  # joins only where the configuration turns it on
        elif use.legacy:
            self.facts.legacy_folding_scopes.add(frame.number)  # folds the legacy spelling alone
        elif not use.partial and not use.excluded and not any(ref[0] == "sub" for ref in use.refs):
            self.facts.folding_scopes.add(frame.number)  # a fold of a member is linked to that member alone
        if frame.body is not None:
            frame.body.folds = True
            frame.body.folds_modern = frame.body.folds_modern or not use.legacy

    def flag_at(self, line: int) -> str:
        """The configuration flag whose ``if`` body holds ``line`` ("": none)."""
        return next((flag for flag, first, last in self.facts.flag_lines if first <= line <= last), "")
