"""What one file says about the serving path: instances, inference sites, folds.

The project-wide rule WN110 asks, for a class that applies weight norm,
whether any code puts an instance of it (or of a model holding it) into
inference, and whether anything folds it on the way.  This module reads one
file's syntax tree into plain facts for that question; ``index.py`` links the
facts of many files.

An *instance reference* (:data:`Ref`) says where a model may come from:
``("new", dotted)`` is the result of calling ``dotted`` (a class, one of its
classmethods such as ``from_pretrained``, or a project function returning a
model), ``("attr", class, attribute)`` is ``self.<attribute>`` in that class.
Local names are followed flow-insensitively inside their function, as the
resolver follows names: every value a name is given may be the model.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterable

from ...core import catalogue
from ..resolve import API_ROOTS, Resolver, Scope, bind_import, module_package

#: ``("new", dotted)``, ``("attr", class qualname, attribute)`` or ``("sub", attribute, *ref)`` (a member of a model).
Ref = tuple[str, ...]

_REMOVERS = frozenset(
    api for s in catalogue.SPELLINGS if s.kind is not catalogue.Kind.SPECTRAL_NORM for api in s.remove_apis
)
_FOLDS = _REMOVERS | frozenset(catalogue.FOLDING_APIS)
_CAPTURES = frozenset(catalogue.INFERENCE_CAPTURES)
_CONTEXTS = frozenset(catalogue.INFERENCE_CONTEXTS)
_MAX_DEPTH = 16


@dataclass(frozen=True)
class Use:
    """An inference site or a fold: where, as written, and which model it is about."""

    line: int
    column: int
    #: The code as a message quotes it: ``model.eval()``, ``model(...)`` under ``torch.inference_mode()``.
    what: str
    refs: tuple[Ref, ...]
    #: The function it sits in (0: module level); inference and folds in one function belong together.
    scope: int
    #: The model as written at the site (``model``, ``self.vocoder``): the fold a message proposes names it.
    target: str = ""
    #: "mode" (``eval()``-style: fold after it), "capture" or "call" (compiled, traced, run: fold before it).
    kind: str = "mode"


@dataclass(frozen=True)
class HelperCall:
    """A call of a project function with a model (``fold_all(model)``, ``model.apply(fold_fn)``)."""

    callee: tuple[str, ...]
    refs: tuple[Ref, ...]
    scope: int


@dataclass
class Body:
    """A function or method: whether it folds itself, and what it calls."""

    name: str
    line: int
    #: Calls a remover or a fold API itself.
    folds: bool = False
    #: Attribute names it calls (``self.fold()``, ``layer.remove_weight_norm()``).
    calls: set[str] = field(default_factory=set)
    #: Qualified names of the functions it calls (a fold helper makes it fold).
    callees: set[str] = field(default_factory=set)
    #: Instances it returns (a loader function returning a model).
    returns: list[Ref] = field(default_factory=list)
    #: A classmethod or staticmethod that puts what it builds in eval mode (``from_pretrained``).
    evaluates: Use | None = None
    is_classmethod: bool = False
    #: The last line of the definition (an application between ``line`` and this is in it).
    end_line: int = 0
    #: ``self.eval()`` / ``self.requires_grad_(False)`` in this method (in ``__init__``: the class serves itself).
    evaluates_self: Use | None = None


@dataclass
class ClassFacts:
    qualname: str
    line: int
    bases: tuple[str, ...] = ()
    #: Qualified names of everything called in the class body (the modules it builds, the helpers it calls).
    builds: set[str] = field(default_factory=set)
    #: ``self.<attribute> = <model>`` anywhere in the class: attribute -> instance references.
    attrs: dict[str, list[Ref]] = field(default_factory=dict)
    methods: dict[str, Body] = field(default_factory=dict)


@dataclass
class ServingFacts:
    module: str
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    #: Module-level functions (qualified name -> body); their ``builds`` are their callees.
    functions: dict[str, Body] = field(default_factory=dict)
    #: Module-level names bound to something else than the file's own defs (re-exports).
    exports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    star_modules: tuple[str, ...] = ()
    inference: list[Use] = field(default_factory=list)
    folds: list[Use] = field(default_factory=list)
    helper_calls: list[HelperCall] = field(default_factory=list)
    #: ``<model>.<method>(...)``: (instance references, method name, scope).
    method_calls: list[tuple[tuple[Ref, ...], str, int]] = field(default_factory=list)
    #: Every attribute call: (method name called, the method it is called from, or "" outside methods).
    attribute_calls: set[tuple[str, str]] = field(default_factory=set)
    #: Functions that train (an optimizer, ``backward()``, ``train()``): their ``eval()`` is validation.
    training_scopes: set[int] = field(default_factory=set)
    #: Functions with an unlinked fold or ``parametrize.cached()``: their inference is taken as folded.
    folding_scopes: set[int] = field(default_factory=set)


@dataclass
class _Frame:
    """Where the walk is: the resolver scope, the function number, the enclosing body and class."""

    scope: Scope
    number: int
    body: Body | None
    class_qual: str | None
    self_name: str | None
    method: str
    #: The inference context the code runs under (``torch.inference_mode()``), or "".
    under: str = ""


class _Walker(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool) -> None:
        self.package = module_package(module, is_package)
        self.star: list[str] = []
        self.module_scope = Scope("module", module, None)
        self.facts = ServingFacts(module=module)
        self.frame = _Frame(self.module_scope, 0, None, None, None, "")
        self.functions = 0
        #: (id of a scope, name) -> the values assigned to the name there.
        self.values: dict[tuple[int, str], list[tuple[ast.expr, _Frame]]] = {}
        #: Work for after the walk, when every binding is known: (kind, node, frame, extra).
        self.pending: list[tuple[str, "ast.AST | list[ast.expr]", _Frame, object]] = []
        self.module = module

    def walk(self, tree: ast.Module) -> None:
        """Walk one piece's statements (a function of its own, so no loop variable keeps the last one alive)."""
        for statement in tree.body:
            self.visit(statement)

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

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._bind(target, node.value)
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
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
        self._bind(node.target, None)
        self.generic_visit(node)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_Return(self, node: ast.Return) -> None:
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
        scope = Scope("class", qualname, outer.scope)
        self.frame = _Frame(scope, outer.number, outer.body, qualname if top_level else outer.class_qual, None, outer.method, outer.under)
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
        scope = Scope("function", qualname, outer.scope)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
            if arg is not None:
                scope.bind(arg.arg, ("opaque",))
        frame = _Frame(scope, self.functions, body, outer.class_qual, self_name, method, outer.under)
        self.frame = frame
        self.pending.append(("decorators", list(node.decorator_list), frame, None))
        for statement in node.body:
            self.visit(statement)
        self.frame = outer

    def _function_body(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, outer: _Frame
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
        self.frame = _Frame(scope, outer.number, outer.body, outer.class_qual, outer.self_name, outer.method, outer.under)
        self.visit(node.body)
        self.frame = outer

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        outer = self.frame
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind(item.optional_vars, None)
        # Which contexts they are is known after the walk; the frame carries the items for then.
        inner = _Frame(outer.scope, outer.number, outer.body, outer.class_qual, outer.self_name, outer.method, outer.under)
        self.pending.append(("with", [item.context_expr for item in node.items], inner, outer))
        self.frame = inner
        for statement in node.body:
            self.visit(statement)
        self.frame = outer

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        self.pending.append(("call", node, self.frame, None))
        self.generic_visit(node)


class _Linker:
    """After the walk: resolve the calls and references recorded on the way."""

    def __init__(self, walker: _Walker) -> None:
        self.walker = walker
        self.facts = walker.facts
        self.resolver = Resolver(walker.module_scope, walker.star)
        self._active: set[tuple[int, str]] = set()

    def names(self, node: ast.AST, frame: _Frame) -> frozenset[str]:
        return self.resolver.expr(node, frame.scope)

    def refs(self, node: ast.expr | None, frame: _Frame, depth: int = 0) -> tuple[Ref, ...]:
        """Where the model an expression evaluates to may come from (empty: not known to be one)."""
        if node is None or depth > _MAX_DEPTH:
            return ()
        if isinstance(node, ast.Call):
            return self._call_refs(node, frame, depth)
        if isinstance(node, ast.Name):
            return self._name_refs(node.id, frame, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if frame.class_qual is not None and node.value.id == frame.self_name:
                return (("attr", frame.class_qual, node.attr),)
        if isinstance(node, (ast.IfExp,)):
            return self.refs(node.body, frame, depth + 1) + self.refs(node.orelse, frame, depth + 1)
        if isinstance(node, ast.NamedExpr):
            return self.refs(node.value, frame, depth + 1)
        if isinstance(node, ast.Await):
            return self.refs(node.value, frame, depth + 1)
        return ()

    def _call_refs(self, node: ast.Call, frame: _Frame, depth: int) -> tuple[Ref, ...]:
        """``model.eval()`` is ``model``; any other call is what calling its callee builds."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in catalogue.SELF_RETURNING_METHODS:
            return self.refs(func.value, frame, depth + 1)
        return tuple(("new", name) for name in sorted(self.names(func, frame)))

    def _name_refs(self, name: str, frame: _Frame, depth: int) -> tuple[Ref, ...]:
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

    def model_refs(self, node: ast.expr, frame: _Frame) -> tuple[Ref, ...]:
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

    def member_refs(self, node: ast.expr, frame: _Frame, depth: int = 0) -> tuple[Ref, ...]:
        """``model.dec`` as ``("sub", "dec", *ref)`` for each reference of ``model`` (empty: not a member of a model)."""
        if depth > _MAX_DEPTH or not isinstance(node, ast.Attribute):
            return ()
        inner = node.value
        if isinstance(inner, ast.Name) and frame.class_qual is not None and inner.id == frame.self_name:
            return ()  # ``self.dec`` is already an attribute reference
        base = self.member_refs(inner, frame, depth + 1) or self.model_refs(inner, frame)
        return tuple(("sub", node.attr, *ref) for ref in base)

    # -- the records ----------------------------------------------------------------
    def run(self) -> ServingFacts:
        for kind, node, frame, extra in self.walker.pending:
            if kind == "call":
                self._call(node, frame)  # type: ignore[arg-type]
            elif kind in ("with", "decorators"):
                self._under(node, frame)  # type: ignore[arg-type]
            elif kind == "attr":
                self._attribute(node, frame, str(extra))  # type: ignore[arg-type]
            elif kind == "return":
                assert isinstance(extra, Body)
                extra.returns.extend(self.refs(node, frame))  # type: ignore[arg-type]
            elif kind == "bases":
                assert isinstance(extra, ClassFacts)
                extra.bases = self._bases(node, frame)  # type: ignore[arg-type]
        self._exports()
        self.facts.star_modules = tuple(self.walker.star)
        return self.facts

    def _attribute(self, value: ast.expr, frame: _Frame, attribute: str) -> None:
        """``self.<attribute> = <model>`` in a method: the class holds that model."""
        refs = self.refs(value, frame)
        if refs and frame.class_qual in self.facts.classes:
            self.facts.classes[frame.class_qual].attrs.setdefault(attribute, []).extend(refs)

    def _bases(self, exprs: list[ast.expr], frame: _Frame) -> tuple[str, ...]:
        bases: list[str] = []
        for base in exprs:
            bases.extend(sorted(self.names(base, frame)))
        return tuple(bases)

    def _exports(self) -> None:
        scope = self.walker.module_scope
        own = scope.qualname
        for name, bindings in scope.bindings.items():
            if all(b[0] == "qual" and b[1] == (f"{own}.{name}" if own else name) for b in bindings):
                continue
            values = self.resolver.name(name, scope)
            if values:
                self.facts.exports[name] = tuple(sorted(values))

    def _contexts(self, exprs: list[ast.expr], frame: _Frame) -> tuple[str, bool]:
        """(the inference context among ``exprs`` as written, or ""; whether ``parametrize.cached()`` is one)."""
        under, cached = "", False
        for expr in exprs:
            func = expr.func if isinstance(expr, ast.Call) else expr
            names = self.names(func, frame)
            if names & _CONTEXTS and not under:
                under = ast.unparse(expr) if isinstance(expr, ast.Call) else f"{ast.unparse(expr)}()"
            if catalogue.PARAMETRIZE_CACHED in names:
                cached = True
        return under, cached

    def _under(self, exprs: list[ast.expr], inner: _Frame) -> None:
        """The context expressions of a ``with``, or a function's decorators: an inference context for the body?"""
        under, cached = self._contexts(exprs, inner)
        if under and not inner.under:
            inner.under = under
        if cached:
            self.facts.folding_scopes.add(inner.number)

    def _call(self, node: ast.Call, frame: _Frame) -> None:
        """Record what one call says: callees, training, a fold, a helper given a model, an inference site."""
        func = node.func
        names = self.names(func, frame)
        self._note_callees(func, names, frame)
        first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
        if _trains(node, names):
            self.facts.training_scopes.add(frame.number)
        if self._folds(node, names, first, frame):
            return
        receiver = self.model_refs(func.value, frame) if isinstance(func, ast.Attribute) else ()
        if names and not receiver:
            self._note_model_arguments(node, names, frame)
        if isinstance(func, ast.Attribute) and self._inference_method(node, func, frame):
            return
        if names & _CAPTURES and first is not None:
            self._capture(node, func, first, frame)
            return
        if receiver and isinstance(func, ast.Attribute):
            # ``model.dec.remove_weight_norm()`` is about ``model.dec``: the member, where it is known.
            self.facts.method_calls.append((self.member_refs(func.value, frame) or receiver, func.attr, frame.number))
        self._call_under_context(node, func, receiver, frame)

    def _note_callees(self, func: ast.expr, names: frozenset[str], frame: _Frame) -> None:
        """What the enclosing function and class call: the project names, and the attribute names."""
        body = frame.body
        if isinstance(func, ast.Attribute) and not any(n.partition(".")[0] in API_ROOTS for n in names):
            # ``layer.remove_weight_norm()``: a method call (``nn.utils.remove_weight_norm(x)`` is torch's function).
            # A call on a known model counts for that model only (``method_calls``); one on anything else
            # (a loop over ``modules()``, a parameter) may reach any class with a method of that name.
            if not self.model_refs(func.value, frame):
                self.facts.attribute_calls.add((func.attr, frame.method))
            if body is not None:
                body.calls.add(func.attr)
        if body is not None:
            body.callees.update(n for n in names if n.partition(".")[0] not in API_ROOTS)
        if frame.class_qual is not None and frame.class_qual in self.facts.classes:
            self.facts.classes[frame.class_qual].builds.update(names)

    def _folds(self, node: ast.Call, names: frozenset[str], first: ast.expr | None, frame: _Frame) -> bool:
        """A remover or fold API called, or applied with ``model.apply(fn)`` (True: the call is fully recorded)."""
        if names & _FOLDS:
            refs = self.model_refs(first, frame) if first is not None else ()
            self._fold(Use(node.lineno, node.col_offset + 1, ast.unparse(node), refs, frame.number), frame)
            return True
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "apply" and first is not None:
            return self._applied_function(node, func, first, frame)
        return False

    def _applied_function(self, node: ast.Call, func: ast.Attribute, first: ast.expr, frame: _Frame) -> bool:
        """``model.apply(fn)``: a fold when ``fn`` is one (True: the call is fully recorded), else a helper call."""
        applied = self.names(first, frame)
        receiver = self.model_refs(func.value, frame)
        if applied & _FOLDS:
            self._fold(Use(node.lineno, node.col_offset + 1, ast.unparse(node), receiver, frame.number), frame)
            return True
        if applied:
            self.facts.helper_calls.append(HelperCall(tuple(sorted(applied)), receiver, frame.number))
            if frame.body is not None:
                frame.body.callees.update(applied)
        return False

    def _note_model_arguments(self, node: ast.Call, names: frozenset[str], frame: _Frame) -> None:
        """``fold_all(model)``: a project function handed a model may fold it."""
        arg_refs = [ref for arg in node.args if not isinstance(arg, ast.Starred) for ref in self.model_refs(arg, frame)]
        if arg_refs:
            self.facts.helper_calls.append(HelperCall(tuple(sorted(names)), tuple(arg_refs), frame.number))

    def _inference_method(self, node: ast.Call, func: ast.Attribute, frame: _Frame) -> bool:
        """``model.eval()``, ``model.requires_grad_(False)``: an inference site (True: the call is fully recorded)."""
        if func.attr not in catalogue.INFERENCE_METHODS:
            return False
        needed = catalogue.INFERENCE_METHODS[func.attr]
        if needed is not None and not (node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is needed):
            return False
        line, column = node.lineno, node.col_offset + 1
        refs = self.model_refs(func.value, frame)
        site = Use(line, column, f"`{ast.unparse(node)}`", refs, frame.number, ast.unparse(func.value))
        body = frame.body
        if body is not None:
            self._note_method_evaluates(node, func, site, body, frame)
        if refs:
            self.facts.inference.append(site)
        return True

    def _note_method_evaluates(self, node: ast.Call, func: ast.Attribute, site: Use, body: Body, frame: _Frame) -> None:
        """A method evaluating ``self``, or a classmethod evaluating what it builds (``from_pretrained``)."""
        owner = (frame.class_qual or "").rpartition(".")[2]
        if (
            frame.self_name is not None and isinstance(func.value, ast.Name)
            and func.value.id == frame.self_name and body.evaluates_self is None
        ):
            what = f"`{ast.unparse(node)}` in `{owner}.{body.name}()`"
            body.evaluates_self = Use(site.line, site.column, what, (), frame.number, "self")
        if body.is_classmethod and func.attr == "eval" and body.evaluates is None:
            what = f"{site.what} in `{owner}.{body.name}()`"
            body.evaluates = Use(site.line, site.column, what, site.refs, frame.number, site.target)

    def _capture(self, node: ast.Call, func: ast.expr, first: ast.expr, frame: _Frame) -> None:
        """``torch.compile(model)``, ``torch.jit.trace(model, ...)``: the model is captured as it is."""
        refs = self.model_refs(first, frame)
        if refs:
            what = f"`{ast.unparse(func)}({ast.unparse(first)})`"
            self.facts.inference.append(
                Use(node.lineno, node.col_offset + 1, what, refs, frame.number, ast.unparse(first), "capture")
            )

    def _call_under_context(self, node: ast.Call, func: ast.expr, receiver: tuple[Ref, ...], frame: _Frame) -> None:
        """``model(...)`` under ``torch.inference_mode()``: the model runs for inference."""
        if not frame.under:
            return
        called = self.model_refs(func, frame) if isinstance(func, (ast.Name, ast.Attribute)) else ()
        if not called or (isinstance(func, ast.Attribute) and func.attr in catalogue.SELF_RETURNING_METHODS):
            return
        written = ast.unparse(func)
        model = ast.unparse(func.value) if isinstance(func, ast.Attribute) and receiver else written
        self.facts.inference.append(
            Use(node.lineno, node.col_offset + 1, f"`{written}(...)` under `{frame.under}`", called, frame.number, model, "call")
        )

    def _fold(self, use: Use, frame: _Frame) -> None:
        self.facts.folds.append(use)
        self.facts.folding_scopes.add(frame.number)
        if frame.body is not None:
            frame.body.folds = True


def _trains(node: ast.Call, names: frozenset[str]) -> bool:
    """Optimizers, ``backward()``, ``train()`` / ``train(True)``: the function trains."""
    if any(n.startswith(catalogue.TRAINING_API_PREFIXES) for n in names):
        return True
    func = node.func
    if not isinstance(func, ast.Attribute):
        return False
    return func.attr in catalogue.TRAINING_METHODS or (func.attr == "train" and (not node.args or _is_true(node.args[0])))


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def serving_facts(pieces: Iterable[tuple[int, ast.Module]], module: str, is_package: bool) -> ServingFacts:
    """The serving-path facts of one file, from its syntax trees piece by piece (``analysis.parse_pieces``).

    Each piece's tree counts lines from its own start: it is moved to the
    file's lines, walked and dropped, so memory follows the piece, not the file.
    """
    walker = _Walker(module, is_package)
    for offset, tree in pieces:
        if offset:
            ast.increment_lineno(tree, offset)
        walker.walk(tree)
        del tree
    return _Linker(walker).run()
