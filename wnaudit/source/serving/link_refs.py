"""Where the model an expression evaluates to may come from: the instance references (``facts.Ref``) of one file.

The linking asks this for every call, fold and inference site once the walk
has bound every name of the file: a local name is followed through every
value it is given, ``self.<name>`` is that attribute of the class, a mapping
of parts is a class of its own, and a class chosen from a table or a module
by a string is any class the table or module holds.
"""

from __future__ import annotations

import ast

from ...core import catalogue
from ..resolve import Resolver, Scope
from .fact_shapes import MAX_DEPTH, config_path, mapping_entries, member_name
from .fact_walker import FactWalker
from .facts import ClassFacts, Ref
from .walk_frame import Frame


class RefLookup:
    """The instance references and the names of one walked file's expressions, resolved after the walk."""

    def __init__(self, walker: FactWalker) -> None:
        self.walker = walker
        self.facts = walker.facts
        self.resolver = Resolver(walker.module_scope, walker.star)
        self._active: set[tuple[int, str]] = set()

    def names(self, node: ast.AST, frame: Frame) -> frozenset[str]:
        """The qualified names ``node`` stands for, in its scope."""
        return self.resolver.expr(node, frame.scope)

    def refs(self, node: ast.expr | None, frame: Frame, depth: int = 0) -> tuple[Ref, ...]:
        """Where the model an expression evaluates to may come from (empty: not known to be one)."""
        if node is None or depth > MAX_DEPTH:
            return ()
        if isinstance(node, ast.Call):
            return self._call_refs(node, frame, depth)
        if isinstance(node, ast.Name):
            return self._name_refs(node.id, frame, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if frame.class_qual is not None and node.value.id == frame.self_name:
                return (("attr", frame.class_qual, node.attr),)
            # ``model_g = model.model_g``: a member of a model (shape b: ``model_g.dec.remove_weight_norm()``).
            return self.member_refs(node, frame, depth + 1)
        if isinstance(node, (ast.IfExp,)):
            return self.refs(node.body, frame, depth + 1) + self.refs(node.orelse, frame, depth + 1)
        if isinstance(node, ast.NamedExpr):
            return self.refs(node.value, frame, depth + 1)
        if isinstance(node, ast.Await):
            return self.refs(node.value, frame, depth + 1)
        if isinstance(node, (ast.Dict, ast.DictComp)):
            return self._container(node, frame, depth)
        if isinstance(node, ast.Subscript):
            return self.member_refs(node, frame, depth + 1)  # ``parts["decoder"]``, ``configs["hift"]``
        return ()

    def _call_refs(self, node: ast.Call, frame: Frame, depth: int) -> tuple[Ref, ...]:
        """``model.eval()`` is ``model``; any other call is what calling its callee builds."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in catalogue.SELF_RETURNING_METHODS:
            return self.refs(func.value, frame, depth + 1)
        names = self.names(func, frame)
        if names & catalogue.CONFIG_INSTANTIATORS:
            return (("conf", config_path(node.args[0]) if node.args else ""),)
        if names & catalogue.CONTAINER_CONSTRUCTORS or (
            isinstance(func, ast.Name) and func.id == "dict" and self.resolver.bindings_of("dict", frame.scope) is None
        ):
            return self._container(node, frame, depth)
        cls = self.facts.classes.get(frame.class_qual or "")
        if not names and isinstance(func, ast.Attribute) and cls is not None and func.attr in cls.methods and (
            isinstance(func.value, ast.Name) and func.value.id == frame.self_name
        ):
            return (("ret", cls.qualname, func.attr),)  # ``self.load_model(...)``: what that method returns
        if isinstance(func, (ast.Subscript, ast.Call)) or (not names and isinstance(func, ast.Name)):
            return self._chosen_class(func, frame, depth)
        return tuple(("new", name) for name in sorted(names))

    def _chosen_class(self, func: ast.expr, frame: Frame, depth: int) -> tuple[Ref, ...]:
        """A class chosen where it is called: ``MODELS[name](...)``, ``getattr(models, name)(...)``, or a local name
        bound to such a choice (``cls = REGISTRY[cfg["type"]]; cls(...)``)."""
        if isinstance(func, ast.Subscript):
            return self._chosen(func.value, frame, depth)
        if isinstance(func, ast.Call):
            return self._fetched(func, frame)
        return self._chosen_by_name(func.id, frame, depth) if isinstance(func, ast.Name) else ()

    def _chosen_by_name(self, name: str, frame: Frame, depth: int) -> tuple[Ref, ...]:
        """``cls = REGISTRY[cfg["type"]]`` or ``cls = getattr(models, name)``, then ``cls(...)``: the class the
        local name was chosen as, as if the lookup were called where it is written."""
        scope = self.resolver.bindings_of(name, frame.scope)
        out: list[Ref] = []
        for value, where in self.walker.values.get((id(scope[0]), name), ())[:8] if scope is not None else ():
            for choice in (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,):
                if isinstance(choice, ast.Subscript) and depth <= MAX_DEPTH:
                    out.extend(self._chosen(choice.value, where, depth + 1))
                elif isinstance(choice, ast.Call) and depth <= MAX_DEPTH:
                    out.extend(self._fetched(choice, where))
        return tuple(dict.fromkeys(out))

    def _fetched(self, fetch: ast.Call, frame: Frame) -> tuple[Ref, ...]:
        """``getattr(models, cfg.name)(...)``: a class of that module, chosen by a string (shape d); likewise
        ``TABLE.get(name)(...)``: a class of that table.

        A constant name is that class; any other is any class the module
        defines or imports (``members``), as the index resolves it.
        """
        func = fetch.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and isinstance(func.value, ast.Name):
            return self._chosen(func.value, frame, 0)  # ``VOCODERS.get(name)(...)``: a table's class
        if not (isinstance(func, ast.Name) and func.id == "getattr" and self.resolver.bindings_of("getattr", frame.scope) is None):
            return ()
        if len(fetch.args) < 2 or isinstance(fetch.args[0], ast.Starred):
            return ()
        modules = sorted(self.names(fetch.args[0], frame))
        chosen = fetch.args[1]
        if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str):
            return tuple(("new", f"{module}.{chosen.value}") for module in modules)
        return tuple(("members", module) for module in modules)

    def _container(self, node: ast.Call | ast.Dict | ast.DictComp, frame: Frame, depth: int) -> tuple[Ref, ...]:
        """A mapping of model parts as a class of its own, its keys the attributes (``"*"``: a key not written).

        ``model = Munch(decoder=Decoder(...), mpd=Discriminator())`` then
        ``model.decoder(...)``: what inference reads of it decides which parts
        are served, as for a class's attributes.
        """
        kind = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else "dict"
        )
        name = f"<{kind}@{node.lineno}:{node.col_offset + 1}>"
        qual = f"{self.facts.module}.{name}" if self.facts.module else name
        if qual not in self.facts.classes:
            facts = self.facts.classes[qual] = ClassFacts(qual, node.lineno)  # before the values: a cycle ends here
            for key, value in mapping_entries(node):
                refs = self.refs(value, frame, depth + 1)
                facts.attrs.setdefault(key, []).extend(refs)  # a key of unknown value is still one inference may read
                facts.builds.update(r[1] for r in refs if r[0] == "new")
        return (("new", qual),)

    def _chosen(self, table: ast.expr, frame: Frame, depth: int) -> tuple[Ref, ...]:
        """``{"v1": SynthA, "v2": SynthB}[version](...)``, ``MODELS[name](...)``: any class the table holds."""
        values: list[tuple[ast.expr, Frame]] = [(table, frame)]
        if isinstance(table, ast.Name):
            scope = self.resolver.bindings_of(table.id, frame.scope)
            values = list(self.walker.values.get((id(scope[0]), table.id), ())) if scope is not None else []
        out: list[Ref] = []
        for value, where in values[:8]:
            if isinstance(value, ast.Dict) and depth <= MAX_DEPTH:
                for item in value.values:
                    out.extend(("new", name) for name in sorted(self.names(item, where)))
        registry = self.table(table, frame)
        if registry:
            out.append(("registry", registry))  # what registrars and module-level stores put in it
        return tuple(dict.fromkeys(out))

    def _name_refs(self, name: str, frame: Frame, depth: int) -> tuple[Ref, ...]:
        scope: Scope | None = frame.scope
        while scope is not None:
            if scope.kind != "class" or scope is frame.scope:
                values = self.walker.values.get((id(scope), name))
                if values is not None:
                    key = (id(scope), name)
                    if key in self._active:
                        return ()
                    self._active.add(key)
                    try:
                        out: list[Ref] = []
                        for value, where in values:
                            out.extend(self.refs(value, where, depth + 1))
                        return tuple(dict.fromkeys(out))
                    finally:
                        self._active.discard(key)
                if name in scope.bindings:
                    return ()  # a parameter, an import, a def: not a model built here
            scope = scope.parent
        return ()

    def model_refs(self, node: ast.expr, frame: Frame) -> tuple[Ref, ...]:
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            inner = root.value
            if (
                isinstance(root, ast.Attribute) and isinstance(inner, ast.Name)
                and frame.class_qual is not None and inner.id == frame.self_name
            ):
                return (("attr", frame.class_qual, root.attr),)
            root = inner
        if isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and root.func.attr in catalogue.SELF_RETURNING_METHODS:
            return self.model_refs(root.func.value, frame)
        return self.refs(root, frame)

    def member_refs(self, node: ast.expr, frame: Frame, depth: int = 0) -> tuple[Ref, ...]:
        """``model.dec`` as ``("sub", "dec", *ref)`` for each reference of ``model`` (empty: not a member of a model)."""
        name = member_name(node)
        if depth > MAX_DEPTH or name is None:
            return ()
        inner = node.value  # type: ignore[attr-defined]
        if isinstance(inner, ast.Name) and frame.class_qual is not None and inner.id == frame.self_name:
            return ()  # ``self.dec`` is already an attribute reference
        base = self.member_refs(inner, frame, depth + 1) or self.model_refs(inner, frame)
        return tuple(("sub", name, *ref) for ref in base)

    def table(self, node: ast.expr, frame: Frame) -> str:
        """The qualified name of a module-level table: this module's own, or the one it imports ("": neither)."""
        if not isinstance(node, ast.Name):
            return ""
        bound = self.resolver.bindings_of(node.id, frame.scope)
        if bound is None:
            return ""
        scope, bindings = bound
        if scope is self.walker.module_scope and any(b[0] == "expr" for b in bindings):
            return f"{self.facts.module}.{node.id}" if self.facts.module else node.id
        names = self.names(node, frame)
        return next(iter(names)) if len(names) == 1 and scope is self.walker.module_scope else ""

    def argument_refs(self, node: ast.expr, frame: Frame) -> tuple[Ref, ...]:
        """The model an argument is; ``configs["hift"]`` of a loaded config is that entry, not the whole config."""
        refs = self.model_refs(node, frame)
        if any(r[0] == "conf" for r in refs):
            return self.member_refs(node, frame) or refs
        return refs
