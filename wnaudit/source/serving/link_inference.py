"""Inference sites: a model put into eval mode, captured (compiled, traced), or run under an inference context.

Each site records the model as written, the references it may be, and what
the code around it does with the model (the members it reads or calls, or
that the model leaves the code): WN110 asks which parts the inference entry runs.
"""

from __future__ import annotations

import ast

from ...core import catalogue
from .fact_shapes import CONTEXTS
from .facts import Body, Ref, Use
from .link_refs import RefLookup
from .walk_frame import Frame


class InferenceLinker:
    """Links the calls that put a model to inference, and the contexts (``with``, decorators) they run under."""

    def __init__(self, lookup: RefLookup) -> None:
        self.lookup = lookup
        self.facts = lookup.facts

    def _contexts(self, exprs: list[ast.expr], frame: Frame) -> tuple[str, bool]:
        """(the inference context among ``exprs`` as written, or ""; whether ``parametrize.cached()`` is one)."""
        under, cached = "", False
        for expr in exprs:
            func = expr.func if isinstance(expr, ast.Call) else expr
            names = self.lookup.names(func, frame)
            if names & CONTEXTS and not under:
                under = ast.unparse(expr) if isinstance(expr, ast.Call) else f"{ast.unparse(expr)}()"
            if catalogue.PARAMETRIZE_CACHED in names:
                cached = True
        return under, cached

    def under(self, exprs: list[ast.expr], inner: Frame, _outer: object = None) -> None:
        """The context expressions of a ``with``, or a function's decorators: an inference context for the body?

        ``_outer`` is the record's third part (the frame around a ``with``), which the linking does not need.
        """
        under, cached = self._contexts(exprs, inner)
        if under and not inner.under:
            inner.under = under
        if cached:
            self.facts.folding_scopes.add(inner.number)

    def method_site(self, node: ast.Call, func: ast.Attribute, frame: Frame) -> bool:
        """``model.eval()``, ``model.requires_grad_(False)``: an inference site (True: the call is fully recorded)."""
        if func.attr not in catalogue.INFERENCE_METHODS:
            return False
        needed = catalogue.INFERENCE_METHODS[func.attr]
        if needed is not None and not (node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is needed):
            return False
        line, column = node.lineno, node.col_offset + 1
        keyed = func.value  # ``self.models["hift"].eval()``: that entry, not the whole mapping
        refs = (self.lookup.member_refs(keyed, frame) if isinstance(keyed, ast.Subscript) else ()) or self.lookup.model_refs(keyed, frame)
        members, whole = self._usage(func.value, frame)
        site = Use(line, column, f"`{ast.unparse(node)}`", refs, frame.number, ast.unparse(func.value), "mode", members, whole)
        body = frame.body
        if body is not None:
            self._method_evaluates(node, func, site, body, frame)
        if refs:
            self.facts.inference.append(site)
        return True

    def _method_evaluates(self, node: ast.Call, func: ast.Attribute, site: Use, body: Body, frame: Frame) -> None:
        """A method evaluating ``self``, or a classmethod evaluating what it builds (``from_pretrained``)."""
        owner = (frame.class_qual or "").rpartition(".")[2]
        if (
            frame.self_name is not None and isinstance(func.value, ast.Name)
            and func.value.id == frame.self_name and body.evaluates_self is None
        ):
            what = f"`{ast.unparse(node)}` in `{owner}.{body.name}()`"
            body.evaluates_self = Use(site.line, site.column, what, (), frame.number, "self")
        if body.is_classmethod and func.attr == "eval":
            what = f"{site.what} in `{owner}.{body.name}()`"
            body.evaluates.append(Use(site.line, site.column, what, site.refs, frame.number, site.target))

    def capture(self, node: ast.Call, func: ast.expr, first: ast.expr, frame: Frame) -> None:
        """``torch.compile(model)``, ``torch.jit.trace(model, ...)``: the model is captured as it is."""
        refs = self.lookup.model_refs(first, frame)
        if refs:
            what = f"`{ast.unparse(func)}({ast.unparse(first)})`"
            self.facts.inference.append(
                Use(node.lineno, node.col_offset + 1, what, refs, frame.number, ast.unparse(first), "capture")
            )

    def call_under_context(self, node: ast.Call, func: ast.expr, receiver: tuple[Ref, ...], frame: Frame) -> None:
        """``model(...)`` under ``torch.inference_mode()``: the model runs for inference."""
        if not frame.under:
            return
        called = self.lookup.model_refs(func, frame) if isinstance(func, (ast.Name, ast.Attribute)) else ()
        if not called or (isinstance(func, ast.Attribute) and func.attr in catalogue.SELF_RETURNING_METHODS):
            return
        written = ast.unparse(func)
        model = ast.unparse(func.value) if isinstance(func, ast.Attribute) and receiver else written
        members, whole = self._usage(func, frame)
        self.facts.inference.append(Use(
            node.lineno, node.col_offset + 1, f"`{written}(...)` under `{frame.under}`", called, frame.number, model, "call",
            members, whole,
        ))

    def _usage(self, node: ast.expr, frame: Frame) -> tuple[tuple[str, ...], bool]:
        """What the code around a site does with its model's root (``model`` of ``model.dec``; ``self.<name>``)."""
        root = node
        while True:
            if isinstance(root, ast.Attribute) and not (isinstance(root.value, ast.Name) and root.value.id == frame.self_name):
                root = root.value
            elif isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and root.func.attr in catalogue.SELF_RETURNING_METHODS:
                root = root.func.value
            elif isinstance(root, ast.Subscript):
                root = root.value  # ``parts["decoder"].eval()``: what the code reads of ``parts``
            else:
                break
        if isinstance(root, ast.Name):
            key = "self" if root.id == frame.self_name else root.id
            place: object = frame.number
        elif isinstance(root, ast.Attribute) and isinstance(root.value, ast.Name) and frame.class_qual is not None:
            key, place = f"self.{root.attr}", frame.class_qual
        else:
            return (), True
        members = tuple(sorted(self.lookup.walker.uses.usage.get((place, key), ())))
        return members, (place, key) in self.lookup.walker.uses.escaped or not members
