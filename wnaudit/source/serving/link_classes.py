"""What a class holds and is typed with, and what a function returns: the linking of those records of the walk.

``self.<attribute> = <model>`` makes the class hold that model; annotations
(``backbone: Backbone``) and ``isinstance`` checks are the project's own word
on what a part is where the code does not build it (a config shipped with
the weights); ``return model`` is what a loader hands on.
"""

from __future__ import annotations

import ast

from ...core import catalogue
from ..resolve import API_ROOTS
from .facts import Body, ClassFacts, Ref, Use
from .link_refs import RefLookup
from .walk_frame import Frame


class ClassLinker:
    """Links the walk's records of class attributes, bases, annotations, type checks and returns."""

    def __init__(self, lookup: RefLookup) -> None:
        self.lookup = lookup
        self.facts = lookup.facts

    def returned(self, value: ast.expr, frame: Frame, body: Body) -> None:
        """``return <model>`` in ``body``: what it returns, and the site a declared serving entry hands on."""
        refs = self.lookup.refs(value, frame)
        body.returns.extend(refs)
        if refs and isinstance(value, (ast.Name, ast.Attribute)):
            target = ast.unparse(value)
            body.returned_at.append(Use(value.lineno, value.col_offset + 1, f"`return {target}`", tuple(refs), frame.number, target, "call"))

    def attribute_type(self, annotation: ast.expr, frame: Frame, attribute: str) -> None:
        """``hift: HiFTGenerator`` in a class body, ``self.hift: HiFTGenerator = hift``: the attribute's project classes."""
        project = self.annotated(annotation, frame)
        if project and frame.class_qual in self.facts.classes:
            self.facts.classes[frame.class_qual].attr_types[attribute] = project

    def attribute(self, value: ast.expr, frame: Frame, attribute: str) -> None:
        """``self.<attribute> = <model>`` in a method: the class holds that model."""
        refs = self.lookup.refs(value, frame) + self._argument(value, frame)
        if refs and frame.class_qual in self.facts.classes:
            self.facts.classes[frame.class_qual].attrs.setdefault(attribute, []).extend(refs)

    def annotations(self, args: list[ast.arg], frame: Frame, body: Body) -> None:
        """``backbone: Backbone`` / ``Optional[Backbone]`` / ``Backbone | None``: the class names a parameter is typed with."""
        for arg in args:
            project = self.annotated(arg.annotation, frame)
            if project:
                body.annotations[arg.arg] = project

    def annotated(self, annotation: ast.expr | None, frame: Frame) -> list[str]:
        """The project class names an annotation types with (``Optional[Backbone]`` and ``Backbone | None`` too)."""
        if isinstance(annotation, ast.Subscript):
            annotation = annotation.slice  # ``Optional[Backbone]``
        if isinstance(annotation, ast.BinOp):
            annotation = annotation.left  # ``Backbone | None``
        names = self.lookup.names(annotation, frame) if annotation is not None else frozenset()
        return sorted(n for n in names if n.partition(".")[0] not in API_ROOTS)

    def _argument(self, value: ast.expr, frame: Frame) -> tuple[Ref, ...]:
        """``self.hift = hift.to(device)`` in ``__init__``: whatever the constructions pass as ``hift`` (shape d)."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in catalogue.SELF_RETURNING_METHODS:
            value = value.func.value
        body = frame.body
        if not isinstance(value, ast.Name) or body is None or frame.method != "__init__" or value.id not in body.params[1:]:
            return ()
        bound = self.lookup.resolver.bindings_of(value.id, frame.scope)
        if bound is None or self.lookup.walker.param_scopes.get(id(bound[0])) is not body:
            return ()
        return (("arg", frame.class_qual or "", str(value.id)),)

    def bases(self, exprs: list[ast.expr], frame: Frame, cls: ClassFacts) -> None:
        """The qualified names of a class's bases, in order."""
        bases: list[str] = []
        for base in exprs:
            bases.extend(sorted(self.lookup.names(base, frame)))
        cls.bases = tuple(bases)

    def entry_type(self, node: ast.Call, func: ast.expr, frame: Frame) -> None:
        """``isinstance(configs["hift"], HiFTGenerator)``: the project's own evidence of what that entry holds."""
        if not (isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2):
            return
        if self.lookup.resolver.bindings_of("isinstance", frame.scope) is not None:
            return
        entry, types = node.args
        key = entry.slice if isinstance(entry, ast.Subscript) else None
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value):
            return
        names: set[str] = set()
        for kind in types.elts if isinstance(types, ast.Tuple) else [types]:
            names |= self.lookup.names(kind, frame)
        project = sorted(n for n in names if n.partition(".")[0] not in API_ROOTS)
        if project:
            self.facts.entry_types.setdefault(key.value, []).extend(project)
