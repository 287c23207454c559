"""The walk of one file's syntax trees that gathers the raw records of its serving facts.

The walk binds names as the resolver does and notes what it can see at a
node (classes, functions, ``__main__`` blocks, configuration flags, what code
does with a model); what needs every binding of the file (calls, references,
bases) it keeps as records for ``linker.py``, which runs once the walk is done.
"""

from __future__ import annotations

import ast

from ...core import catalogue
from ..ast_visitor import Visitor
from ..resolve import Scope, bind_import, module_package
from .fact_shapes import (
    LOOKERS,
    config_flag,
    entry_as_mapping,
    false_defaults,
    is_main_test,
    is_super,
    module_loop,
    skipping_calls,
)
from .facts import Body, ClassFacts, ServingFacts
from .model_usage import ModelUsage
from .walk_frame import Frame


class FactWalker(Visitor):
    """One file's walk: the facts a node shows, and the records the linking resolves once every name is bound."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.package = module_package(module, is_package)
        self.star: list[str] = []
        self.module_scope = Scope("module", module, None)
        self.facts = ServingFacts(module=module)
        self.frame = Frame(self.module_scope, 0, None, None, None, "")
        self.functions = 0
        #: (id of a scope, name) -> the values assigned to the name there.
        self.values: dict[tuple[int, str], list[tuple[ast.expr, Frame]]] = {}
        #: Work for after the walk, when every binding is known: (kind, node, frame, extra).
        self.pending: list[tuple[str, "ast.AST | list[ast.expr]", Frame, object]] = []
        self.module = module
        #: id of a call in a ``named_*`` module loop that a test on the part's name guards -> that test (``partial``).
        self.skipping: dict[int, str] = {}
        #: What code does with a name or ``self.<name>`` (which parts an inference entry runs).
        self.uses = ModelUsage()
        self._use, self._escape = self.uses.use, self.uses.escape  # bound once: they run at nearly every node
        #: ids of nodes read as the value of an attribute or called: not an escape.
        self._consumed: set[int] = set()
        self._called: set[int] = set()
        #: ids of calls whose value is dropped (an expression statement: ``model.eval()`` on its own line).
        self._dropped: set[int] = set()
        #: ids of calls that are the whole value of ``self.<attribute> = ...``.
        self.direct_attr_calls: set[int] = set()
        #: id of a function's scope -> its body (parameters are looked up there).
        self.param_scopes: dict[int, Body] = {}
        #: Function number -> its parameters whose default is a false constant; the flag guarding the code now.
        self._false_flags: dict[int, set[str]] = {}
        self._guard = ""
        #: Inside a module-level ``if __name__ == "__main__":`` block; the names read there and elsewhere.
        self._in_main = False
        self._main_names: set[str] = set()
        self._other_names: set[str] = set()
        #: Module-level function short name -> the numbers of its definitions.
        self._module_functions: dict[str, list[int]] = {}

    def note_smoke_tests(self) -> None:
        """The module-level functions named only in the module's ``__main__`` blocks (never elsewhere in it)."""
        for name, numbers in self._module_functions.items():
            if name in self._main_names and name not in self._other_names:
                self.facts.smoke_scopes[name] = list(numbers)

    def walk(self, tree: ast.Module) -> None:
        """Walk one piece's statements (a function of its own, so no loop variable keeps the last one alive)."""
        for statement in tree.body:
            self.visit(statement)
            self._consumed.clear()  # ids of freed nodes may come back
            self._called.clear()
            self._dropped.clear()

    # -- bindings ---------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        bind_import(self.frame.scope, node, self.package, self.star)

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        frame = self.frame
        if isinstance(target, ast.Name):
            frame.scope.bind(target.id, ("expr", value, frame.scope) if value is not None else ("opaque",))
            if value is not None:
                self.values.setdefault((id(frame.scope), target.id), []).append((value, frame))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element, None)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, None)
        elif (
            isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            and frame.class_qual is not None and target.value.id == frame.self_name and value is not None
        ):
            self.pending.append(("attr", value, frame, target.attr))
            if isinstance(value, ast.Call):
                self.direct_attr_calls.add(id(value))
        elif isinstance(target, ast.Subscript) and value is not None:
            self._bind_entry(target, value)

    def _bind_entry(self, target: ast.Subscript, value: ast.expr) -> None:
        """``TABLE[key] = cls`` (a registry's store), and a model kept in a mapping: ``parts["hift"] = HiFT()`` on a
        local mapping, ``self.models["hift"] = HiFT()``, read as one more value of the mapping."""
        frame, mapping = self.frame, target.value
        if isinstance(mapping, ast.Name):
            self.pending.append(("store", mapping, frame, value))
            if frame.number and (id(frame.scope), mapping.id) in self.values:
                self._bind(mapping, entry_as_mapping(target, value))
        elif (
            isinstance(mapping, ast.Attribute) and isinstance(mapping.value, ast.Name)
            and mapping.value.id == frame.self_name and frame.class_qual is not None
        ):
            self._bind(mapping, entry_as_mapping(target, value))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._bind(target, node.value)
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        frame, target = self.frame, node.target
        if frame.class_qual is not None and (
            (isinstance(target, ast.Name) and frame.scope.kind == "class")
            or (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == frame.self_name)
        ):
            name = target.id if isinstance(target, ast.Name) else target.attr  # type: ignore[union-attr]
            self.pending.append(("attr_type", node.annotation, frame, name))
        if node.value is not None:
            self.visit(node.value)
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._bind(node.target, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind(node.target, node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.skipping.update(skipping_calls(node))
        target, model = module_loop(node)
        self._bind(node.target, None)
        if target is not None and model is not None:
            self._bind(target, model)  # each part is the model as far as folds and helpers go
        self.generic_visit(node)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_Return(self, node: ast.Return) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == self.frame.self_name:
            self._consumed.add(id(node.value))  # ``return self`` (``eval()``, ``to()`` overrides) runs nothing
        if node.value is not None:
            self.visit(node.value)
            if self.frame.body is not None:
                self.pending.append(("return", node.value, self.frame, self.frame.body))

    # -- scopes -------------------------------------------------------------------
    def _qualname(self, name: str) -> str:
        scope = self.frame.scope
        if scope.kind == "module":
            return f"{self.module}.{name}" if self.module else name
        return f"{scope.qualname}.{name}"

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        qualname = self._qualname(node.name)
        self.frame.scope.bind(node.name, ("qual", qualname))
        outer = self.frame
        top_level = outer.scope is self.module_scope
        if top_level:
            facts = ClassFacts(qualname, node.lineno)
            self.facts.classes[qualname] = facts
            self.pending.append(("bases", list(node.bases), outer, facts))
            self.pending.append(("class_decorators", list(node.decorator_list), outer, facts))
        scope = Scope("class", qualname, outer.scope)
        self.frame = Frame(scope, outer.number, outer.body, qualname if top_level else outer.class_qual, None, outer.method, outer.under)
        for statement in node.body:
            self.visit(statement)
        self.frame = outer

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        outer = self.frame
        qualname = self._qualname(node.name)
        outer.scope.bind(node.name, ("qual", qualname))
        body, self_name, method = self._function_body(node, qualname, outer)
        self.functions += 1
        if outer.scope is self.module_scope:
            self._module_functions.setdefault(node.name, []).append(self.functions)
        scope = Scope("function", qualname, outer.scope)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
            if arg is not None:
                scope.bind(arg.arg, ("opaque",))
        frame = Frame(scope, self.functions, body, outer.class_qual, self_name, method, outer.under)
        if body is not None and body is not outer.body:
            body.params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            self.param_scopes[id(scope)] = body
        self.frame = frame
        self.pending.append(("decorators", list(node.decorator_list), frame, None))
        if body is not None and method == "__init__" and body is not outer.body:
            self.pending.append(("annotations", [*node.args.args, *node.args.kwonlyargs], outer, body))  # type: ignore[list-item]
        self.uses.numbers.append(self.functions)
        self._false_flags[self.functions] = false_defaults(node.args)
        guard, self._guard = self._guard, ""
        for statement in node.body:
            self.visit(statement)
        self._guard = guard
        self.uses.numbers.pop()
        self.frame = outer

    def visit_If(self, node: ast.If) -> None:
        """``if flag:`` on a parameter defaulting to a false value: the body runs only when a caller passes it."""
        test = node.test
        if self.frame.scope is self.module_scope and not self._in_main and node.body and is_main_test(test):
            self.visit(test)
            self.facts.main_lines.append((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno))
            self._in_main = True
            for statement in node.body:
                self.visit(statement)
            self._in_main = False
            for statement in node.orelse:
                self.visit(statement)
            return
        self.visit(test)
        flag = test.id if isinstance(test, ast.Name) and test.id in self._false_flags.get(self.frame.number, ()) else ""
        setting = "" if flag else config_flag(test)
        if setting and node.body:
            self.facts.flag_lines.append((setting, node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno))
        guard = self._guard
        self._guard = guard or flag
        for statement in node.body:
            self.visit(statement)
        self._guard = guard
        for statement in node.orelse:
            self.visit(statement)

    def _function_body(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, outer: Frame
    ) -> tuple[Body | None, str | None, str]:
        """Where a definition's facts go (a new method or module-level function, else the enclosing body), its ``self`` and method."""
        positional = [*node.args.posonlyargs, *node.args.args]
        class_qual = outer.class_qual
        if outer.scope.kind == "class" and class_qual is not None and outer.scope.qualname == class_qual:
            decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
            is_classmethod = bool(decorators & {"classmethod", "staticmethod"})
            body = Body(node.name, node.lineno, is_classmethod=is_classmethod, end_line=node.end_lineno or node.lineno)
            self.facts.classes[class_qual].methods.setdefault(node.name, body)
            return body, positional[0].arg if positional and not is_classmethod else None, node.name
        if outer.scope is self.module_scope:
            body = Body(qualname, node.lineno, end_line=node.end_lineno or node.lineno)
            self.facts.functions[qualname] = body
            return body, outer.self_name, outer.method
        self_name = outer.self_name
        if self_name is not None and any(a.arg == self_name for a in (*positional, *node.args.kwonlyargs)):
            self_name = None  # ``self`` shadowed in a nested function
        return outer.body, self_name, outer.method

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        outer = self.frame
        scope = Scope("function", f"{outer.scope.qualname}.<lambda>", outer.scope)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            scope.bind(arg.arg, ("opaque",))
        self.frame = Frame(scope, outer.number, outer.body, outer.class_qual, outer.self_name, outer.method, outer.under)
        self.visit(node.body)
        self.frame = outer

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        outer = self.frame
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind(item.optional_vars, None)
        # Which contexts they are is known after the walk; the frame carries the items for then.
        inner = Frame(outer.scope, outer.number, outer.body, outer.class_qual, outer.self_name, outer.method, outer.under)
        self.pending.append(("with", [item.context_expr for item in node.items], inner, outer))
        self.frame = inner
        for statement in node.body:
            self.visit(statement)
        self.frame = outer

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        self.pending.append(("call", node, self.frame, self._guard))
        func = node.func
        self._consumed.add(id(func))
        self._called.add(id(func))
        self._use(func, "()", self.frame)
        if isinstance(func, ast.Attribute) and is_super(func.value) and self.frame.body is not None:
            self.frame.body.self_members.add(f"{func.attr}()")
        if isinstance(func, ast.Name) and func.id in LOOKERS:
            self._consumed.update(id(arg) for arg in node.args)
        if id(node) not in self._consumed and id(node) not in self._dropped:
            root: ast.expr = node
            while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and root.func.attr in catalogue.SELF_RETURNING_METHODS:
                root = root.func.value
            if root is not node:
                self._escape(root, self.frame)  # ``return model.eval()``, ``net = model.to(device)``: the model goes on elsewhere
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        self._dropped.add(id(node.value))
        self.generic_visit(node)

    # -- what code does with a model (which parts an inference entry runs) -------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._consumed.add(id(node.value))
        if isinstance(node.ctx, ast.Load):
            self._use(node.value, f"{node.attr}()" if id(node) in self._called else node.attr, self.frame)
            if id(node) not in self._consumed:
                self._escape(node, self.frame)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        """``parts["decoder"]`` reads the entry ``decoder`` of a mapping of parts (shape d); any other index escapes."""
        key = node.slice
        if isinstance(node.ctx, ast.Load) and isinstance(key, ast.Constant) and isinstance(key.value, str):
            self._consumed.add(id(node.value))
            self._use(node.value, key.value, self.frame)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            (self._main_names if self._in_main else self._other_names).add(node.id)
        if isinstance(node.ctx, ast.Load) and id(node) not in self._consumed:
            self._escape(node, self.frame)
