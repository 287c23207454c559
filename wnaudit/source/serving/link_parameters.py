"""What a function does to its parameters: the records ``effects.py`` sums up bottom-up (folds through helpers).

A fold, a project function or a method applied to a parameter (or to each of
its ``modules()``) is noted on the function's ``Body`` by the parameter's
position, so a caller handing a model to the function can tell whether it
comes back folded.
"""

from __future__ import annotations

import ast

from ...core import catalogue
from ..resolve import API_ROOTS, Scope
from .fact_shapes import FOLDS, HOOK_CLASSES
from .facts import Body
from .link_refs import RefLookup
from .walk_frame import Frame


class ParameterLinker:
    """Links each call of a function's body that applies something to one of its parameters."""

    def __init__(self, lookup: RefLookup) -> None:
        self.lookup = lookup
        self.walker = lookup.walker

    def _param_index(self, node: ast.expr | None, frame: Frame, depth: int = 0) -> int | None:
        """The position of the function parameter ``node`` is (or iterates the ``modules()`` of), else None."""
        body = frame.body
        if body is None or depth > 4:
            return None
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in catalogue.SELF_RETURNING_METHODS:
            node = node.func.value
        if not isinstance(node, ast.Name):
            return None
        scope: Scope | None = frame.scope
        while scope is not None and node.id not in scope.bindings:
            scope = scope.parent
        if scope is None or self.walker.param_scopes.get(id(scope)) is not body:
            return None
        for value, where in self.walker.values.get((id(scope), node.id), ()):
            if not (isinstance(value, ast.Name) and value.id == node.id):
                return self._param_index(value, where, depth + 1)  # ``for m in model.modules()``, ``net = model``
        return body.params.index(node.id) if node.id in body.params else None

    def note(self, node: ast.Call, names: frozenset[str], frame: Frame, body: Body) -> None:
        """A fold, a helper or a method applied to one of the function's parameters (``effects.py`` sums them up)."""
        func = node.func
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        if isinstance(func, ast.Name) and func.id == "isinstance" and len(args) == 2:
            body.checks_hook |= bool(self.lookup.names(args[1], frame) & HOOK_CLASSES)
            return
        indexes = [self._param_index(a, frame) for a in args]
        if names & FOLDS:
            if indexes and indexes[0] is not None:
                body.param_folds.add(indexes[0])
            return
        if isinstance(func, ast.Attribute) and self._method_on_parameter(func, args, indexes, frame, body):
            return
        project = tuple(sorted(n for n in names if n.partition(".")[0] not in API_ROOTS))
        if project:
            self._passes(node, project, indexes, frame, body)

    def _method_on_parameter(
        self, func: ast.Attribute, args: list[ast.expr], indexes: list[int | None], frame: Frame, body: Body,
    ) -> bool:
        """``param.apply(fn)``, ``param.remove_weight_norm()``, ``hook.remove(param)`` (True: fully recorded)."""
        receiver = self._param_index(func.value, frame)
        if func.attr == "apply" and receiver is not None and args:
            applied = self.lookup.names(args[0], frame)
            if applied & FOLDS:
                body.param_folds.add(receiver)
            elif applied:
                body.param_passes.append((tuple(sorted(applied)), 0, receiver))
            return True
        if receiver is not None:
            body.param_methods.append((func.attr, receiver))
        if func.attr == "remove" and indexes and indexes[0] is not None:
            body.hook_removes.add(indexes[0])  # ``hook.remove(module)`` of a ``WeightNorm`` hook
        return False

    def _passes(self, node: ast.Call, project: tuple[str, ...], indexes: list[int | None], frame: Frame, body: Body) -> None:
        """Parameters handed on to a project function, by position or by keyword."""
        for position, index in enumerate(indexes):
            if index is not None:
                body.param_passes.append((project, position, index))
        for keyword in node.keywords:
            index = self._param_index(keyword.value, frame) if keyword.arg else None
            if keyword.arg and index is not None:
                body.param_keyword_passes.append((project, keyword.arg, index))
