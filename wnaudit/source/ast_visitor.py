"""A faster ``ast.NodeVisitor`` for the hot walks (scopes, serving facts).

``ast.NodeVisitor`` looks each handler up by name on every node, runs the
``visit_Constant`` compatibility shim on every constant and walks children
through ``iter_fields`` and one more ``visit`` frame each: on a cold run that
is millions of calls.  ``Visitor`` calls the same handlers in the same order,
but caches the handler per (visitor class, node type), walks the children of
nodes without a handler on an explicit stack, and never steps into leaves no
handler can see (``Load``/``Store``/``Del``, operators, constants).

Limits, checked where they can be: a subclass defines ``visit_<Type>``
handlers on the class (not on the instance), overrides neither ``visit`` nor
``generic_visit``, and does not change the tree while it walks it (a node's
children are read when the walk reaches the node).
"""

from __future__ import annotations

import ast
import re
import sys
from types import FunctionType
from typing import Any, Callable, ClassVar

_Handler = Callable[[Any, ast.AST], Any]

#: Node types that carry no child nodes, by the field that holds them in their parents.
_LEAVES: dict[str, tuple[type[ast.AST], ...]] = {
    "ctx": tuple(ast.expr_context.__subclasses__()),
    "op": (*ast.operator.__subclasses__(), *ast.boolop.__subclasses__(), *ast.unaryop.__subclasses__()),
    "ops": tuple(ast.cmpop.__subclasses__()),
}
#: The handlers ``ast.NodeVisitor.visit_Constant`` still calls (deprecated aliases of ``Constant``).
_CONSTANT_ALIASES = ("visit_Num", "visit_Str", "visit_Bytes", "visit_NameConstant", "visit_Ellipsis")
#: Handler-table mark for a node with no handler of its own: walk its children.
_GENERIC: Any = object()
#: Stack mark: the walk is back up one level.
_UP: Any = object()
#: Frames the walk may save before it counts the real ones (``ast.NodeVisitor`` would have used them).
_COUNT_FRAMES_ABOVE = 256


#: How a field holds children: a list of them, one (or None), or not known (checked on each value).
_MANY, _ONE, _ANY = 0, 1, 2
#: ASDL types of fields that never hold a node.
_SCALARS = frozenset({"identifier", "string", "int", "constant"})
_SIGNATURE = re.compile(r"(\w+)\((.*)\)")
_FIELD = re.compile(r"(\w+)([*?]?) (\w+)")
#: Node type -> its fields that may hold nodes, each with how (``_MANY``, ``_ONE``, ``_ANY``), in field order.
_PLANS: dict[type, tuple[tuple[str, int], ...]] = {}


def _plan(kind: type) -> tuple[tuple[str, int], ...]:
    """The fields of a node type that may hold nodes, read from its ASDL signature (the class docstring).

    Scalar fields (names, numbers, constants) drop out; where the signature
    cannot be read every field is kept and each value checked, as ``ast`` does.
    """
    plan = _PLANS.get(kind)
    if plan is not None:
        return plan
    fields: tuple[str, ...] = getattr(kind, "_fields", ()) if issubclass(kind, ast.AST) else ()
    signature = _SIGNATURE.fullmatch((kind.__doc__ or "").split("\n", 1)[0])
    typed = [_FIELD.fullmatch(part.strip()) for part in signature.group(2).split(",")] if signature else []
    if fields and len(typed) == len(fields) and all(m and m.group(3) == f for m, f in zip(typed, fields)):
        plan = tuple(
            (m.group(3), _MANY if m.group(2) == "*" else _ONE) for m in typed if m and m.group(1) not in _SCALARS
        )
    else:
        plan = tuple((f, _ANY) for f in fields)
    _PLANS[kind] = plan
    return plan


def _check_depth(saved: int) -> None:
    """Raise ``RecursionError`` where ``ast.NodeVisitor``'s recursion would have (to within a few frames).

    ``saved`` is the frames the walks on a stack have not used, over the caller's real ones.
    """
    frame, frames = sys._getframe(1), 0
    while frame is not None:
        frames += 1
        frame = frame.f_back  # type: ignore[assignment]
    if frames + saved > sys.getrecursionlimit():
        raise RecursionError("maximum recursion depth exceeded")


def _call_by_name(name: str) -> _Handler:
    """A handler that is not a plain function (a static method, a callable object): bound on each call."""
    return lambda visitor, node: getattr(visitor, name)(node)


class Visitor:
    """Drop-in base for ``ast.NodeVisitor`` subclasses: same handlers, same order, fewer calls."""

    #: Node type -> its handler, ``_GENERIC``, or None (a leaf: nothing to do); filled lazily, one per class.
    _handlers: ClassVar[dict[type, Any]] = {}
    #: Node type -> ``_plan`` less this class's blind fields, last first; filled lazily, one per class.
    _child_fields: ClassVar[dict[type, tuple[tuple[str, int], ...]]] = {}
    #: Fields skipped everywhere: they only ever hold leaves this class has no handler for.
    _blind_fields: ClassVar[frozenset[str]] = frozenset()
    #: Frames ``ast.NodeVisitor`` would have used above the running handler that the walks on a stack did not.
    _saved_frames = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("visit", "generic_visit"):
            if getattr(cls, name) is not getattr(Visitor, name):
                raise TypeError(f"{cls.__name__} overrides {name}; define visit_<Type> handlers instead")
        cls._handlers = {}
        cls._child_fields = {}
        cls._blind_fields = frozenset(
            field
            for field, kinds in _LEAVES.items()
            if not any(hasattr(cls, "visit_" + kind.__name__) for kind in kinds)
        )

    @classmethod
    def _resolve(cls, kind: type) -> Any:
        """The handler of one node type for this class (cached): what ``ast.NodeVisitor.visit`` would call."""
        handler = getattr(cls, "visit_" + kind.__name__, None) if issubclass(kind, ast.AST) else None
        if handler is None and kind is ast.Constant and any(hasattr(cls, name) for name in _CONSTANT_ALIASES):
            handler = ast.NodeVisitor.visit_Constant
        if handler is not None and not isinstance(handler, FunctionType):
            handler = _call_by_name("visit_" + kind.__name__)
        if handler is None:
            handler = _GENERIC if cls._fields_of(kind) else None
        cls._handlers[kind] = handler
        return handler

    @classmethod
    def _fields_of(cls, kind: type) -> tuple[tuple[str, int], ...]:
        """The fields of one node type that may hold a child this class would visit, last first (cached)."""
        fields = cls._child_fields.get(kind)
        if fields is None:
            skip = cls._blind_fields
            fields = cls._child_fields[kind] = tuple(reversed([(f, how) for f, how in _plan(kind) if f not in skip]))
        return fields

    def visit(self, node: ast.AST) -> Any:
        """Visit a node: its handler, or else its children (as ``ast.NodeVisitor.visit``)."""
        kind = node.__class__
        handlers = self._handlers
        handler = handlers[kind] if kind in handlers else self._resolve(kind)
        if handler is _GENERIC:
            return self.generic_visit(node)
        return None if handler is None else handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        """Visit the children of a node in field order: handlers called, the rest walked on a stack, not frames.

        Each level walked costs ``ast.NodeVisitor`` two frames (``visit``, ``generic_visit``): they are counted
        (``_saved_frames``, ``_check_depth``) so a tree too deep for it is too deep here.
        """
        handlers = self._handlers
        child_fields = self._child_fields
        saved = self._saved_frames
        stack: list[Any] = [node]
        depth = 0
        while stack:
            current = stack.pop()
            if current is _UP:
                depth -= 1
                continue
            kind = current.__class__
            if depth:  # not the node itself: its children, whatever its handler
                handler = handlers[kind] if kind in handlers else self._resolve(kind)
                if handler is not _GENERIC:
                    if handler is not None:
                        self._saved_frames = saved + 2 * depth - 1
                        try:
                            handler(self, current)
                        finally:
                            self._saved_frames = saved
                    continue
            depth += 1
            if saved + 2 * depth > _COUNT_FRAMES_ABOVE:
                _check_depth(saved + 2 * depth + 1)
            stack.append(_UP)
            # Pushed last field first, each list reversed, so they pop in field order; a list's non-nodes
            # (``Dict.keys``' None) pop as leaves.
            for field, how in child_fields[kind] if kind in child_fields else self._fields_of(kind):
                value = getattr(current, field, None)
                if how == _MANY or (how == _ANY and isinstance(value, list)):
                    if value:
                        stack.extend(reversed(value))
                elif value is not None and (how == _ONE or isinstance(value, ast.AST)):
                    stack.append(value)
