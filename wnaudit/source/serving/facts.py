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
from typing import Iterable, KeysView, TypeAlias

from ...common.gc_pause import cyclic_gc_paused
from ...core import catalogue
from ..analysis import deep_recursion, parse_pieces
from ..ast_visitor import Visitor
from ..reading import SourceError, decode
from ..resolve import API_ROOTS, Resolver, Scope, bind_import, module_package

#: ``("new", dotted)``, ``("attr", class qualname, attribute)``, ``("sub", attribute, *ref)`` (a member of a model),
#: ``("self", class qualname)`` (``self`` in a method of that class, or of a subclass) or ``("ret", class qualname,
#: method)`` (what ``self.<method>(...)`` returns) or ``("arg", class qualname, parameter)`` (what the class's
#: constructions pass as that ``__init__`` parameter).  A mapping of parts (``Munch(decoder=...)``, a dict literal) is
#: ``("new", "<module>.<Munch@line:column>")``: a class of its own whose attributes are its keys (a part inference
#: never reads is then not served).
Ref = tuple[str, ...]

_REMOVERS = frozenset(
    api for s in catalogue.SPELLINGS if s.kind is not catalogue.Kind.SPECTRAL_NORM for api in s.remove_apis
)
_FOLDS = _REMOVERS | frozenset(catalogue.FOLDING_APIS)


def _exclusion(call: ast.Call) -> tuple[tuple[str, ...], str]:
    """What a fold's ``exclude=`` leaves live: the members a literal names (first components), or, for any other
    value, the keyword as written (the partial fold's evidence); ``((), "")`` when it excludes nothing."""
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg != catalogue.PARTIAL_FOLD_KEYWORD or _empty_literal(value):
            continue
        elements = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else []
        names = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if names and len(names) == len(elements):
            return tuple(sorted({name.split(".")[0] for name in names})), ""
        return (), f"{keyword.arg}={ast.unparse(value)}"
    return (), ""


def _empty_literal(node: ast.expr) -> bool:
    """``exclude=()`` or ``exclude=None`` excludes nothing."""
    return (isinstance(node, (ast.Tuple, ast.List, ast.Set)) and not node.elts) or (isinstance(node, ast.Constant) and node.value is None)


#: The legacy weight-norm removers: on a module the modern spelling parametrized they raise ``ValueError``.
_LEGACY_REMOVERS = frozenset(
    api for s in catalogue.SPELLINGS if s.kind is catalogue.Kind.WEIGHT_NORM and s.style is catalogue.Style.LEGACY
    for api in s.remove_apis
)
_CAPTURES = frozenset(catalogue.INFERENCE_CAPTURES)
_CONTEXTS = frozenset(catalogue.INFERENCE_CONTEXTS)
_MAX_DEPTH = 16
#: ``for m in model.modules():``: each ``m`` is the model or one of its parts (``named_*`` yield pairs).
_MODULE_ITERATORS = frozenset({"modules", "children", "named_modules", "named_children"})
_ITERATION_WRAPPERS = frozenset({"list", "tuple", "reversed", "enumerate"})
#: Builtins that only look at what they are given: handing a model to them runs none of it.
_LOOKERS = frozenset({"isinstance", "hasattr", "print", "len", "type", "id", "repr", "str", "callable"})
_HOOK_CLASSES = frozenset(s.implementation for s in catalogue.SPELLINGS if s.kind is not catalogue.Kind.SPECTRAL_NORM)


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
    #: What the code around the site does with the model (its function; the class for ``self.<name>``):
    #: ``name`` for a member read, ``name()`` for a method called, ``()`` for the model called itself.
    #: WN110 asks which of the model's parts the inference entry executes: a part nothing runs costs nothing.
    members: tuple[str, ...] = ()
    #: The model leaves that code (returned, handed to a call, stored): anything may run it.
    whole: bool = True
    #: A fold by the legacy weight-norm remover alone: it folds nothing the modern spelling applied (it raises,
    #: and a ``try``/``except`` around it hides that).
    legacy: bool = False
    #: A fold inside ``for name, child in model.named_children():`` that a test on ``name`` guards (or skips with
    #: ``continue``): the test as written.  It folds only some parts; the others stay live.
    partial: str = ""
    #: A fold API's ``exclude=("f0_predictor",)`` written as a literal: the members it leaves parametrized (their
    #: first name component).  It folds the rest of the model; a weight norm held under one of them stays live.
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True)
class HelperCall:
    """A call of a project function with a model (``fold_all(model)``, ``model.apply(fold_fn)``)."""

    callee: tuple[str, ...]
    refs: tuple[Ref, ...]
    scope: int
    #: The positional argument the model is passed as (-1: unknown), so the helper's summary can say
    #: whether it folds that parameter.
    position: int = -1
    #: The keyword the model is passed by ("": positional).
    keyword: str = ""


@dataclass
class Body:
    """A function or method: whether it folds itself, and what it calls."""

    name: str
    line: int
    #: Calls a remover or a fold API itself.
    folds: bool = False
    #: Calls a remover or fold API other than the legacy weight-norm remover: it may fold the modern spelling.
    folds_modern: bool = False
    #: Attribute names it calls (``self.fold()``, ``layer.remove_weight_norm()``).
    calls: set[str] = field(default_factory=set)
    #: Those of ``calls`` made only under ``if flag:`` on a parameter that defaults to false: what the
    #: method folds without its flag leaves them out (shape b: ``eval(self, inference=False)``).
    guarded: set[str] = field(default_factory=set)
    #: Qualified names of the functions it calls (a fold helper makes it fold).
    callees: set[str] = field(default_factory=set)
    #: Instances it returns (a loader function returning a model).
    returns: list[Ref] = field(default_factory=list)
    #: Each ``return <name>`` of a model, as an inference site: a declared serving entry (``[tool.wnaudit]
    #: serving``) hands what it returns to inference, so the fold goes before that return.
    returned_at: list[Use] = field(default_factory=list)
    #: A classmethod or staticmethod that puts what it builds in eval mode (``from_pretrained``): its ``eval()``
    #: calls in order (a loader may evaluate several models; WN110 names the one of the served carrier).
    evaluates: list[Use] = field(default_factory=list)
    is_classmethod: bool = False
    #: The last line of the definition (an application between ``line`` and this is in it).
    end_line: int = 0
    #: ``self.eval()`` / ``self.requires_grad_(False)`` in this method (in ``__init__``: the class serves itself).
    evaluates_self: Use | None = None
    # What the body does to its parameters, for the summaries ``effects.py`` builds bottom-up (folds through helpers).
    #: Positional parameter names (``self`` first for a method).
    params: list[str] = field(default_factory=list)
    #: Parameters a remover or fold API is applied to (or to each of their ``modules()``).
    param_folds: set[int] = field(default_factory=set)
    #: (callee names, argument position, parameter): a parameter handed on to a project function.
    param_passes: list[tuple[tuple[str, ...], int, int]] = field(default_factory=list)
    #: (callee names, keyword, parameter): the same, passed by keyword.
    param_keyword_passes: list[tuple[tuple[str, ...], str, int]] = field(default_factory=list)
    #: (method name, parameter): a method called on a parameter or on each of its ``modules()``.
    param_methods: list[tuple[str, int]] = field(default_factory=list)
    #: Parameters handed to ``hook.remove(...)``; a fold when the body checks for the ``WeightNorm`` hook.
    hook_removes: set[int] = field(default_factory=set)
    checks_hook: bool = False
    #: Members of ``self`` the body reads (``name``) or calls (``name()``); ``super().name()`` counts as ``name()``.
    self_members: set[str] = field(default_factory=set)
    #: ``self`` handed to a call or stored: what the body runs of it is not known.
    self_escapes: bool = False
    #: ``__init__``'s parameters annotated with classes (``backbone: Backbone``): parameter -> the names the
    #: annotation resolves to.  What a construction passes, where none shows it (a config that ships with the
    #: weights), is one of the project's classes of that type (shape d).
    annotations: dict[str, list[str]] = field(default_factory=dict)


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
    #: What its decorators call (``@register("hifigan")``: ``register``'s qualified names): a registry may hold it.
    decorators: tuple[str, ...] = ()
    #: Names the class calls other than as the whole value of a ``self.<attribute> = ...`` assignment:
    #: a carrier built that way cannot be traced to one attribute (shape c).
    loose: set[str] = field(default_factory=set)
    #: Attributes typed with project classes (``hift: HiFTGenerator`` in the class body, ``self.hift: HiFTGenerator
    #: = hift``): what they hold where the code does not show it (a config shipped with the weights).
    attr_types: dict[str, list[str]] = field(default_factory=dict)


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
    #: ``<model>.<method>(...)``: (instance references, method name, scope, calling class, calling method);
    #: the class and method are "" outside methods.  A call inside a method counts only when that method
    #: is itself called (shape b: ``Model.remove_weight_norm()`` calling each block's).
    method_calls: list[tuple[tuple[Ref, ...], str, int, str, str]] = field(default_factory=list)
    #: Every attribute call: (method name called, the method it is called from, or "" outside methods, and the
    #: function it is in, so that one made only in training code can be told apart).
    attribute_calls: set[tuple[str, str, int]] = field(default_factory=set)
    #: The same under ``if <flag>:`` where ``flag`` is a parameter of the method defaulting to a false value
    #: (method name called, calling method, flag): it runs only when a call passes the flag (shape b:
    #: ``def eval(self, inference=False): ... if inference: self.remove_weight_norm()``).
    guarded_calls: set[tuple[str, str, str]] = field(default_factory=set)
    #: ``x.<method>(..., <keyword>=<true constant>)``: (method, keyword) for every such call.
    flag_calls: set[tuple[str, str]] = field(default_factory=set)
    #: Functions that train (an optimizer, ``backward()``, ``train()``; their ``eval()`` is validation), by
    #: scope, with their names (qualified; the module's name at module level) for a message to name them.
    training_names: dict[int, str] = field(default_factory=dict)
    #: Functions that write a checkpoint (``torch.save``; the module itself at scope 0, a script): they make weights
    #: for others to serve, so their ``eval()`` or ``no_grad`` block is no inference site and no place for a fold.
    saving_scopes: set[int] = field(default_factory=set)
    #: Functions with an unlinked fold or ``parametrize.cached()``: their inference is taken as folded.
    folding_scopes: set[int] = field(default_factory=set)
    #: The same for folds by the legacy weight-norm remover alone: taken as folded only for the legacy spelling.
    legacy_folding_scopes: set[int] = field(default_factory=set)
    #: Line ranges of the module's own ``if __name__ == "__main__":`` blocks (their first and last lines).
    main_lines: list[tuple[int, int]] = field(default_factory=list)
    #: Module-level functions the module names only inside those blocks: short name -> their function numbers.
    #: With a class of the module as the model, their inference is the module's smoke test, not a serving path.
    smoke_scopes: dict[str, list[int]] = field(default_factory=dict)
    #: Module-level functions that store a class they are given into a module-level table (a registry's
    #: decorator, ``VOCODERS[name] = cls``): function qualified name -> the table's qualified name.
    registrars: dict[str, str] = field(default_factory=dict)
    #: Module-level registrations by call (``register("hifigan")(HiFiGAN)``): (what is called, the classes given).
    registered_calls: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    #: Module-level stores of classes into tables (``VOCODERS["hifigan"] = HiFiGAN``): table -> class names.
    table_entries: dict[str, list[str]] = field(default_factory=dict)
    #: Directories the file tells Hydra to read configs from (``initialize(config_path="../configs")``), as written.
    config_dirs: list[str] = field(default_factory=list)
    #: Type evidence on entries of mappings: ``isinstance(configs["hift"], HiFTGenerator)`` gives
    #: ``"hift" -> [qualified class names]``. A config the package does not ship (downloaded with the weights)
    #: is read through it: what it builds under that key is, by the project's own check, such a class.
    entry_types: dict[str, list[str]] = field(default_factory=dict)
    #: Bodies of ``if <config>.<flag>:`` (``cfg.fold_weight_norm``, ``cfg["fold"]``, ``cfg.get("fold")``): (the flag,
    #: first line, last line).  A fold there runs only where the project's own configuration turns the flag on.
    flag_lines: list[tuple[str, int, int]] = field(default_factory=list)
    #: Records made under such a flag: (flag, the list they are in: ``folds``, ``helper_calls``, ``method_calls``,
    #: or the scope set ``folding_scopes``/``legacy_folding_scopes`` they would join, index or scope).
    flagged: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def training_scopes(self) -> KeysView[int]:
        """The functions that train, by scope number (``training_names``' keys)."""
        return self.training_names.keys()


#: Members a name is used for: a tuple while few (most names: one), a set past ``_FEW_MEMBERS`` (an empty set alone is
#: 216 bytes; a big file's walk holds one per name and function).
Members: TypeAlias = "tuple[str, ...] | set[str]"
_FEW_MEMBERS = 8


def _add_member(usage: dict[tuple[object, str], Members], key: tuple[object, str], member: str) -> None:
    """Add ``member`` to what ``key`` is used for."""
    members = usage.get(key)
    if members is None:
        usage[key] = (member,)
    elif isinstance(members, set):
        members.add(member)
    elif member not in members:
        usage[key] = (*members, member) if len(members) < _FEW_MEMBERS else {*members, member}


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


class _Walker(Visitor):
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
        #: id of a call in a ``named_*`` module loop that a test on the part's name guards -> that test (``partial``).
        self.skipping: dict[int, str] = {}
        #: What code does with a name or ``self.<name>``: (function number or class, key) -> members used.
        self.usage: dict[tuple[object, str], Members] = {}
        #: (function number or class, key) where the model leaves the code (returned, passed, stored).
        self.escaped: set[tuple[object, str]] = set()
        #: ids of nodes read as the value of an attribute or called: not an escape.
        self._consumed: set[int] = set()
        self._called: set[int] = set()
        #: ids of calls whose value is dropped (an expression statement: ``model.eval()`` on its own line).
        self._dropped: set[int] = set()
        #: ids of calls that are the whole value of ``self.<attribute> = ...``.
        self.direct_attr_calls: set[int] = set()
        #: id of a function's scope -> its body (parameters are looked up there).
        self.param_scopes: dict[int, Body] = {}
        #: The numbers of the functions the walk is inside, innermost last (a closure's use counts for all).
        self._numbers: list[int] = [0]
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
                self._bind(mapping, _entry_as_mapping(target, value))
        elif (
            isinstance(mapping, ast.Attribute) and isinstance(mapping.value, ast.Name)
            and mapping.value.id == frame.self_name and frame.class_qual is not None
        ):
            self._bind(mapping, _entry_as_mapping(target, value))

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
        self.skipping.update(_skipping_calls(node))
        target, model = _module_loop(node)
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
        if outer.scope is self.module_scope:
            self._module_functions.setdefault(node.name, []).append(self.functions)
        scope = Scope("function", qualname, outer.scope)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
            if arg is not None:
                scope.bind(arg.arg, ("opaque",))
        frame = _Frame(scope, self.functions, body, outer.class_qual, self_name, method, outer.under)
        if body is not None and body is not outer.body:
            body.params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            self.param_scopes[id(scope)] = body
        self.frame = frame
        self.pending.append(("decorators", list(node.decorator_list), frame, None))
        if body is not None and method == "__init__" and body is not outer.body:
            self.pending.append(("annotations", [*node.args.args, *node.args.kwonlyargs], outer, body))  # type: ignore[list-item]
        self._numbers.append(self.functions)
        self._false_flags[self.functions] = _false_defaults(node.args)
        guard, self._guard = self._guard, ""
        for statement in node.body:
            self.visit(statement)
        self._guard = guard
        self._numbers.pop()
        self.frame = outer

    def visit_If(self, node: ast.If) -> None:
        """``if flag:`` on a parameter defaulting to a false value: the body runs only when a caller passes it."""
        test = node.test
        if self.frame.scope is self.module_scope and not self._in_main and node.body and _is_main_test(test):
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
        setting = "" if flag else _config_flag(test)
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
        self.pending.append(("call", node, self.frame, self._guard))
        func = node.func
        self._consumed.add(id(func))
        self._called.add(id(func))
        self._use(func, "()")
        if isinstance(func, ast.Attribute) and _is_super(func.value) and self.frame.body is not None:
            self.frame.body.self_members.add(f"{func.attr}()")
        if isinstance(func, ast.Name) and func.id in _LOOKERS:
            self._consumed.update(id(arg) for arg in node.args)
        if id(node) not in self._consumed and id(node) not in self._dropped:
            root: ast.expr = node
            while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and root.func.attr in catalogue.SELF_RETURNING_METHODS:
                root = root.func.value
            if root is not node:
                self._escape(root)  # ``return model.eval()``, ``net = model.to(device)``: the model goes on elsewhere
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        self._dropped.add(id(node.value))
        self.generic_visit(node)

    # -- what code does with a model (which parts an inference entry runs) -------------------
    def _key(self, node: ast.expr) -> str | None:
        """``model`` or ``self.<name>`` (``self`` as the method spells it), else None."""
        if isinstance(node, ast.Name):
            return "self" if node.id == self.frame.self_name else node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.frame.self_name:
            return f"self.{node.attr}"
        return None

    def _places(self, key: str) -> list[object]:
        """The function (and the functions around it, for a closure's use) and, for ``self.<name>``, the class."""
        numbers = self._numbers
        places: list[object] = [numbers[-1]] if len(numbers) <= 2 else list(numbers[1:])
        if key.startswith("self.") and self.frame.class_qual is not None:
            places.append(self.frame.class_qual)
        return places

    def _use(self, node: ast.expr, member: str) -> None:
        key = self._key(node)
        if key is None:
            return
        for place in self._places(key):
            _add_member(self.usage, (place, key), member)
        if key == "self" and self.frame.body is not None and member != "()":
            self.frame.body.self_members.add(member)

    def _escape(self, node: ast.expr) -> None:
        key = self._key(node)
        if key is None:
            return
        for place in self._places(key):
            self.escaped.add((place, key))
        if key == "self" and self.frame.body is not None:
            self.frame.body.self_escapes = True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._consumed.add(id(node.value))
        if isinstance(node.ctx, ast.Load):
            self._use(node.value, f"{node.attr}()" if id(node) in self._called else node.attr)
            if id(node) not in self._consumed:
                self._escape(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        """``parts["decoder"]`` reads the entry ``decoder`` of a mapping of parts (shape d); any other index escapes."""
        key = node.slice
        if isinstance(node.ctx, ast.Load) and isinstance(key, ast.Constant) and isinstance(key.value, str):
            self._consumed.add(id(node.value))
            self._use(node.value, key.value)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            (self._main_names if self._in_main else self._other_names).add(node.id)
        if isinstance(node.ctx, ast.Load) and id(node) not in self._consumed:
            self._escape(node)


class _Linker:
    """After the walk: resolve the calls and references recorded on the way."""

    def __init__(self, walker: _Walker) -> None:
        self.walker = walker
        self.facts = walker.facts
        self.resolver = Resolver(walker.module_scope, walker.star)
        self._active: set[tuple[int, str]] = set()
        #: id of a body -> (the body, attribute names it calls outside any flag guard).
        self._unguarded: dict[int, tuple[Body, set[str]]] = {}

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

    def _call_refs(self, node: ast.Call, frame: _Frame, depth: int) -> tuple[Ref, ...]:
        """``model.eval()`` is ``model``; any other call is what calling its callee builds."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in catalogue.SELF_RETURNING_METHODS:
            return self.refs(func.value, frame, depth + 1)
        names = self.names(func, frame)
        if names & catalogue.CONFIG_INSTANTIATORS:
            return (("conf", _config_path(node.args[0]) if node.args else ""),)
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

    def _chosen_class(self, func: ast.expr, frame: _Frame, depth: int) -> tuple[Ref, ...]:
        """A class chosen where it is called: ``MODELS[name](...)``, ``getattr(models, name)(...)``, or a local name
        bound to such a choice (``cls = REGISTRY[cfg["type"]]; cls(...)``)."""
        if isinstance(func, ast.Subscript):
            return self._chosen(func.value, frame, depth)
        if isinstance(func, ast.Call):
            return self._fetched(func, frame)
        return self._chosen_by_name(func.id, frame, depth) if isinstance(func, ast.Name) else ()

    def _chosen_by_name(self, name: str, frame: _Frame, depth: int) -> tuple[Ref, ...]:
        """``cls = REGISTRY[cfg["type"]]`` or ``cls = getattr(models, name)``, then ``cls(...)``: the class the
        local name was chosen as, as if the lookup were called where it is written."""
        scope = self.resolver.bindings_of(name, frame.scope)
        out: list[Ref] = []
        for value, where in self.walker.values.get((id(scope[0]), name), ())[:8] if scope is not None else ():
            for choice in (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,):
                if isinstance(choice, ast.Subscript) and depth <= _MAX_DEPTH:
                    out.extend(self._chosen(choice.value, where, depth + 1))
                elif isinstance(choice, ast.Call) and depth <= _MAX_DEPTH:
                    out.extend(self._fetched(choice, where))
        return tuple(dict.fromkeys(out))

    def _fetched(self, fetch: ast.Call, frame: _Frame) -> tuple[Ref, ...]:
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

    def _container(self, node: ast.Call | ast.Dict | ast.DictComp, frame: _Frame, depth: int) -> tuple[Ref, ...]:
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
            for key, value in _entries(node):
                refs = self.refs(value, frame, depth + 1)
                facts.attrs.setdefault(key, []).extend(refs)  # a key of unknown value is still one inference may read
                facts.builds.update(r[1] for r in refs if r[0] == "new")
        return (("new", qual),)

    def _chosen(self, table: ast.expr, frame: _Frame, depth: int) -> tuple[Ref, ...]:
        """``{"v1": SynthA, "v2": SynthB}[version](...)``, ``MODELS[name](...)``: any class the table holds."""
        values: list[tuple[ast.expr, _Frame]] = [(table, frame)]
        if isinstance(table, ast.Name):
            scope = self.resolver.bindings_of(table.id, frame.scope)
            values = list(self.walker.values.get((id(scope[0]), table.id), ())) if scope is not None else []
        out: list[Ref] = []
        for value, where in values[:8]:
            if isinstance(value, ast.Dict) and depth <= _MAX_DEPTH:
                for item in value.values:
                    out.extend(("new", name) for name in sorted(self.names(item, where)))
        registry = self._table(table, frame)
        if registry:
            out.append(("registry", registry))  # what registrars and module-level stores put in it
        return tuple(dict.fromkeys(out))

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
        name = _member_name(node)
        if depth > _MAX_DEPTH or name is None:
            return ()
        inner = node.value  # type: ignore[attr-defined]
        if isinstance(inner, ast.Name) and frame.class_qual is not None and inner.id == frame.self_name:
            return ()  # ``self.dec`` is already an attribute reference
        base = self.member_refs(inner, frame, depth + 1) or self.model_refs(inner, frame)
        return tuple(("sub", name, *ref) for ref in base)

    # -- the records ----------------------------------------------------------------
    def run(self) -> ServingFacts:
        """Link the walk's records, each released once linked: the nodes only it holds go then.

        A big file's walk so never holds all its records' nodes at once.
        """
        pending, self.walker.pending = self.walker.pending, []
        pending.reverse()
        while pending:
            self._record(*pending.pop())
        for body, names in self._unguarded.values():
            body.guarded -= names  # called both ways: it may run without the flag
        self._exports()
        self.facts.star_modules = tuple(self.walker.star)
        return self.facts

    def _record(self, kind: str, node: "ast.AST | list[ast.expr]", frame: _Frame, extra: object) -> None:
        """Link one record of the walk."""
        if kind == "call":
            self._call(node, frame, str(extra or ""))  # type: ignore[arg-type]
        elif kind in ("with", "decorators"):
            self._under(node, frame)  # type: ignore[arg-type]
        elif kind == "attr":
            self._attribute(node, frame, str(extra))  # type: ignore[arg-type]
        elif kind == "return":
            assert isinstance(extra, Body)
            refs = self.refs(node, frame)  # type: ignore[arg-type]
            extra.returns.extend(refs)
            if refs and isinstance(node, (ast.Name, ast.Attribute)):
                target = ast.unparse(node)
                extra.returned_at.append(Use(node.lineno, node.col_offset + 1, f"`return {target}`", tuple(refs), frame.number, target, "call"))
        elif kind == "bases":
            assert isinstance(extra, ClassFacts)
            extra.bases = self._bases(node, frame)  # type: ignore[arg-type]
        elif kind == "annotations":
            assert isinstance(extra, Body)
            self._annotations(node, frame, extra)  # type: ignore[arg-type]
        elif kind == "class_decorators":
            assert isinstance(extra, ClassFacts)
            extra.decorators = self._decorators(node, frame)  # type: ignore[arg-type]
        elif kind == "store":
            assert isinstance(extra, ast.expr)
            self._store(node, extra, frame)  # type: ignore[arg-type]
        elif kind == "attr_type":
            project = self._annotated(node, frame)  # type: ignore[arg-type]
            if project and frame.class_qual in self.facts.classes:
                self.facts.classes[frame.class_qual].attr_types[str(extra)] = project

    def _attribute(self, value: ast.expr, frame: _Frame, attribute: str) -> None:
        """``self.<attribute> = <model>`` in a method: the class holds that model."""
        refs = self.refs(value, frame) + self._argument(value, frame)
        if refs and frame.class_qual in self.facts.classes:
            self.facts.classes[frame.class_qual].attrs.setdefault(attribute, []).extend(refs)

    def _annotations(self, args: list[ast.arg], frame: _Frame, body: Body) -> None:
        """``backbone: Backbone`` / ``Optional[Backbone]`` / ``Backbone | None``: the class names a parameter is typed with."""
        for arg in args:
            project = self._annotated(arg.annotation, frame)
            if project:
                body.annotations[arg.arg] = project

    def _annotated(self, annotation: ast.expr | None, frame: _Frame) -> list[str]:
        """The project class names an annotation types with (``Optional[Backbone]`` and ``Backbone | None`` too)."""
        if isinstance(annotation, ast.Subscript):
            annotation = annotation.slice  # ``Optional[Backbone]``
        if isinstance(annotation, ast.BinOp):
            annotation = annotation.left  # ``Backbone | None``
        names = self.names(annotation, frame) if annotation is not None else frozenset()
        return sorted(n for n in names if n.partition(".")[0] not in API_ROOTS)

    def _argument(self, value: ast.expr, frame: _Frame) -> tuple[Ref, ...]:
        """``self.hift = hift.to(device)`` in ``__init__``: whatever the constructions pass as ``hift`` (shape d)."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in catalogue.SELF_RETURNING_METHODS:
            value = value.func.value
        body = frame.body
        if not isinstance(value, ast.Name) or body is None or frame.method != "__init__" or value.id not in body.params[1:]:
            return ()
        bound = self.resolver.bindings_of(value.id, frame.scope)
        if bound is None or self.walker.param_scopes.get(id(bound[0])) is not body:
            return ()
        return (("arg", frame.class_qual or "", str(value.id)),)

    def _decorators(self, exprs: list[ast.expr], frame: _Frame) -> tuple[str, ...]:
        """The project names a class's decorators call: ``@register("hifigan")`` and ``@register`` name ``register``."""
        names: set[str] = set()
        for expr in exprs:
            names |= self.names(expr.func if isinstance(expr, ast.Call) else expr, frame)
        return tuple(sorted(n for n in names if n.partition(".")[0] not in API_ROOTS))

    def _store(self, table: ast.Name, value: ast.expr, frame: _Frame) -> None:
        """``TABLE[key] = value``: a registrar when a function stores a parameter, an entry at module level."""
        name = self._table(table, frame)
        if not name:
            return
        if frame.number:
            registrar = self._registrar(frame)
            if registrar and isinstance(value, ast.Name) and self._is_parameter(value.id, frame):
                self.facts.registrars[registrar] = name
            return
        entries = sorted(n for n in self.names(value, frame) if n.partition(".")[0] not in API_ROOTS)
        if entries:
            self.facts.table_entries.setdefault(name, []).extend(entries)

    def _table(self, node: ast.expr, frame: _Frame) -> str:
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

    def _registrar(self, frame: _Frame) -> str:
        """The module-level function the code is in (a decorator factory's closure counts as its factory)."""
        scope: Scope | None = frame.scope
        while scope is not None and scope.parent is not None:
            if scope.kind == "function" and scope.parent is self.walker.module_scope:
                return scope.qualname
            scope = scope.parent
        return ""

    def _is_parameter(self, name: str, frame: _Frame) -> bool:
        bound = self.resolver.bindings_of(name, frame.scope)
        return bound is not None and bound[0].kind == "function" and ("opaque",) in bound[1]

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

    def _call(self, node: ast.Call, frame: _Frame, guard: str = "") -> None:
        """Record one call; what it records under ``if <config>.<flag>:`` is marked with the flag (``flagged``)."""
        flag = self._flag_at(node.lineno)
        if not flag:
            self._call_records(node, frame, guard)
            return
        lists = ("folds", "helper_calls", "method_calls")
        before = [len(getattr(self.facts, name)) for name in lists]
        self._call_records(node, frame, guard)
        for name, first in zip(lists, before):
            self.facts.flagged.extend((flag, name, i) for i in range(first, len(getattr(self.facts, name))))

    def _flag_at(self, line: int) -> str:
        """The configuration flag whose ``if`` body holds ``line`` ("": none)."""
        return next((flag for flag, first, last in self.facts.flag_lines if first <= line <= last), "")

    def _call_records(self, node: ast.Call, frame: _Frame, guard: str = "") -> None:
        """Record what one call says: callees, training, a fold, a helper given a model, an inference site."""
        func = node.func
        names = self.names(func, frame)
        self._note_callees(node, names, frame, guard)
        first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
        if _trains(node, names):
            self.facts.training_names[frame.number] = frame.scope.qualname
        if names & catalogue.CHECKPOINT_SAVERS:
            self.facts.saving_scopes.add(frame.number)
        self._note_registration(node, frame)
        self._note_config_dirs(node, names)
        self._note_entry_type(node, func, frame)
        if frame.body is not None:
            self._note_parameters(node, names, frame, frame.body)
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
            self.facts.method_calls.append((
                self.member_refs(func.value, frame) or receiver, func.attr, frame.number,
                (frame.class_qual or "") if frame.method else "", frame.method,
            ))
        self._call_under_context(node, func, receiver, frame)

    def _note_entry_type(self, node: ast.Call, func: ast.expr, frame: _Frame) -> None:
        """``isinstance(configs["hift"], HiFTGenerator)``: the project's own evidence of what that entry holds."""
        if not (isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2):
            return
        if self.resolver.bindings_of("isinstance", frame.scope) is not None:
            return
        entry, types = node.args
        key = entry.slice if isinstance(entry, ast.Subscript) else None
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value):
            return
        names: set[str] = set()
        for kind in types.elts if isinstance(types, ast.Tuple) else [types]:
            names |= self.names(kind, frame)
        project = sorted(n for n in names if n.partition(".")[0] not in API_ROOTS)
        if project:
            self.facts.entry_types.setdefault(key.value, []).extend(project)

    def _note_registration(self, node: ast.Call, frame: _Frame) -> None:
        """``register("hifigan")(HiFiGAN)`` at module level: the decorator applied by hand (a registry may hold it)."""
        if frame.number or not isinstance(node.func, ast.Call) or len(node.args) != 1:
            return
        called = sorted(n for n in self.names(node.func.func, frame) if n.partition(".")[0] not in API_ROOTS)
        given = sorted(self.names(node.args[0], frame))
        if called and given:
            self.facts.registered_calls.append((tuple(called), tuple(given)))

    def _note_config_dirs(self, node: ast.Call, names: frozenset[str]) -> None:
        """``initialize(config_path="../configs")``: where Hydra reads the configs ``instantiate`` builds from."""
        if names & catalogue.CONFIG_DIRECTORY_CALLS:
            self.facts.config_dirs.extend(
                k.value.value for k in node.keywords
                if k.arg in ("config_path", "config_dir") and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
            )

    def _note_callees(self, node: ast.Call, names: frozenset[str], frame: _Frame, guard: str = "") -> None:
        """What the enclosing function and class call: the project names, and the attribute names."""
        func = node.func
        body = frame.body
        if isinstance(func, ast.Attribute) and not any(n.partition(".")[0] in API_ROOTS for n in names):
            self._note_method_call(node, func, frame, guard)
        if body is not None:
            body.callees.update(n for n in names if n.partition(".")[0] not in API_ROOTS)
        if frame.class_qual is not None and frame.class_qual in self.facts.classes:
            cls = self.facts.classes[frame.class_qual]
            cls.builds.update(names)
            if id(node) not in self.walker.direct_attr_calls:
                cls.loose.update(names)

    def _note_method_call(self, node: ast.Call, func: ast.Attribute, frame: _Frame, guard: str) -> None:
        """``layer.remove_weight_norm()``: a method call (``nn.utils.remove_weight_norm(x)`` is torch's function).

        A call on ``self`` counts for this class and its subclasses; one on a
        known model for that model only (``method_calls``); one on anything else
        (a loop over ``modules()``, a parameter) may reach any class with a
        method of that name; one under a false-by-default flag only where a
        call passes the flag.
        """
        body = frame.body
        on_self = isinstance(func.value, ast.Name) and func.value.id == frame.self_name and frame.class_qual is not None
        if on_self and not guard and frame.method:
            qual = frame.class_qual or ""
            self.facts.method_calls.append(((("self", qual),), func.attr, frame.number, qual, frame.method))
        elif not self.model_refs(func.value, frame):
            if guard and frame.method:
                self.facts.guarded_calls.add((func.attr, frame.method, guard))
            else:
                self.facts.attribute_calls.add((func.attr, frame.method, frame.number))
        self.facts.flag_calls.update((func.attr, k.arg) for k in node.keywords if k.arg and _is_true(k.value))
        if body is not None:
            body.calls.add(func.attr)
            if guard:
                body.guarded.add(func.attr)
            else:
                self._unguarded.setdefault(id(body), (body, set()))[1].add(func.attr)

    # -- what a function does to its parameters ---------------------------------------------
    def _param_index(self, node: ast.expr | None, frame: _Frame, depth: int = 0) -> int | None:
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

    def _note_parameters(self, node: ast.Call, names: frozenset[str], frame: _Frame, body: Body) -> None:
        """A fold, a helper or a method applied to one of the function's parameters (``effects.py`` sums them up)."""
        func = node.func
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        if isinstance(func, ast.Name) and func.id == "isinstance" and len(args) == 2:
            body.checks_hook |= bool(self.names(args[1], frame) & _HOOK_CLASSES)
            return
        indexes = [self._param_index(a, frame) for a in args]
        if names & _FOLDS:
            if indexes and indexes[0] is not None:
                body.param_folds.add(indexes[0])
            return
        if isinstance(func, ast.Attribute) and self._note_method_on_parameter(func, args, indexes, frame, body):
            return
        project = tuple(sorted(n for n in names if n.partition(".")[0] not in API_ROOTS))
        if project:
            self._note_passes(node, project, indexes, frame, body)

    def _note_method_on_parameter(
        self, func: ast.Attribute, args: list[ast.expr], indexes: list[int | None], frame: _Frame, body: Body,
    ) -> bool:
        """``param.apply(fn)``, ``param.remove_weight_norm()``, ``hook.remove(param)`` (True: fully recorded)."""
        receiver = self._param_index(func.value, frame)
        if func.attr == "apply" and receiver is not None and args:
            applied = self.names(args[0], frame)
            if applied & _FOLDS:
                body.param_folds.add(receiver)
            elif applied:
                body.param_passes.append((tuple(sorted(applied)), 0, receiver))
            return True
        if receiver is not None:
            body.param_methods.append((func.attr, receiver))
        if func.attr == "remove" and indexes and indexes[0] is not None:
            body.hook_removes.add(indexes[0])  # ``hook.remove(module)`` of a ``WeightNorm`` hook
        return False

    def _note_passes(self, node: ast.Call, project: tuple[str, ...], indexes: list[int | None], frame: _Frame, body: Body) -> None:
        """Parameters handed on to a project function, by position or by keyword."""
        for position, index in enumerate(indexes):
            if index is not None:
                body.param_passes.append((project, position, index))
        for keyword in node.keywords:
            index = self._param_index(keyword.value, frame) if keyword.arg else None
            if keyword.arg and index is not None:
                body.param_keyword_passes.append((project, keyword.arg, index))

    def _folds(self, node: ast.Call, names: frozenset[str], first: ast.expr | None, frame: _Frame) -> bool:
        """A remover or fold API called, or applied with ``model.apply(fn)`` (True: the call is fully recorded)."""
        if names & _FOLDS:
            # ``fold(model.dec)`` folds that part, not its siblings: recorded as the member (``index`` falls back
            # to the whole model where the member resolves to nothing)
            refs = (self.member_refs(first, frame) or self.model_refs(first, frame)) if first is not None else ()
            legacy = names & _FOLDS <= _LEGACY_REMOVERS
            excluded, written = _exclusion(node)
            partial = self.walker.skipping.get(id(node), "") or written
            use = Use(
                node.lineno, node.col_offset + 1, ast.unparse(node), refs, frame.number, legacy=legacy, partial=partial,
                excluded=excluded,
            )
            self._fold(use, frame)
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
            legacy = applied & _FOLDS <= _LEGACY_REMOVERS
            self._fold(Use(node.lineno, node.col_offset + 1, ast.unparse(node), receiver, frame.number, legacy=legacy), frame)
            return True
        if applied:
            self.facts.helper_calls.append(HelperCall(tuple(sorted(applied)), receiver, frame.number, 0))
            if frame.body is not None:
                frame.body.callees.update(applied)
        return False

    def _note_model_arguments(self, node: ast.Call, names: frozenset[str], frame: _Frame) -> None:
        """``fold_all(model)``: a project function handed a model may fold it (one record per argument)."""
        for position, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            refs = self._argument_refs(arg, frame)
            if refs:
                self.facts.helper_calls.append(HelperCall(tuple(sorted(names)), refs, frame.number, position))
        for keyword in node.keywords:
            refs = self._argument_refs(keyword.value, frame) if keyword.arg else ()
            if keyword.arg and refs:
                self.facts.helper_calls.append(HelperCall(tuple(sorted(names)), refs, frame.number, -1, keyword.arg))

    def _argument_refs(self, node: ast.expr, frame: _Frame) -> tuple[Ref, ...]:
        """The model an argument is; ``configs["hift"]`` of a loaded config is that entry, not the whole config."""
        refs = self.model_refs(node, frame)
        if any(r[0] == "conf" for r in refs):
            return self.member_refs(node, frame) or refs
        return refs

    def _inference_method(self, node: ast.Call, func: ast.Attribute, frame: _Frame) -> bool:
        """``model.eval()``, ``model.requires_grad_(False)``: an inference site (True: the call is fully recorded)."""
        if func.attr not in catalogue.INFERENCE_METHODS:
            return False
        needed = catalogue.INFERENCE_METHODS[func.attr]
        if needed is not None and not (node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is needed):
            return False
        line, column = node.lineno, node.col_offset + 1
        keyed = func.value  # ``self.models["hift"].eval()``: that entry, not the whole mapping
        refs = (self.member_refs(keyed, frame) if isinstance(keyed, ast.Subscript) else ()) or self.model_refs(keyed, frame)
        members, whole = self._usage(func.value, frame)
        site = Use(line, column, f"`{ast.unparse(node)}`", refs, frame.number, ast.unparse(func.value), "mode", members, whole)
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
        if body.is_classmethod and func.attr == "eval":
            what = f"{site.what} in `{owner}.{body.name}()`"
            body.evaluates.append(Use(site.line, site.column, what, site.refs, frame.number, site.target))

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
        members, whole = self._usage(func, frame)
        self.facts.inference.append(Use(
            node.lineno, node.col_offset + 1, f"`{written}(...)` under `{frame.under}`", called, frame.number, model, "call",
            members, whole,
        ))

    def _usage(self, node: ast.expr, frame: _Frame) -> tuple[tuple[str, ...], bool]:
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
        members = tuple(sorted(self.walker.usage.get((place, key), ())))
        return members, (place, key) in self.walker.escaped or not members

    def _fold(self, use: Use, frame: _Frame) -> None:
        self.facts.folds.append(use)
        flag = self._flag_at(use.line)
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


def _config_flag(test: ast.expr) -> str:
    """``fold_weight_norm`` of ``cfg.fold_weight_norm``, ``cfg["fold_weight_norm"]``, ``cfg.get("fold_weight_norm")``."""
    if isinstance(test, ast.Attribute):
        return test.attr
    if isinstance(test, ast.Subscript) and isinstance(test.slice, ast.Constant) and isinstance(test.slice.value, str):
        return test.slice.value
    if (
        isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "get" and test.args
        and isinstance(test.args[0], ast.Constant) and isinstance(test.args[0].value, str)
    ):
        return test.args[0].value
    return ""


def _member_name(node: ast.expr) -> str | None:
    """``dec`` of ``model.dec`` and of ``model["dec"]`` (None: not a named member)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def _config_path(node: ast.expr) -> str:
    """``model.generator`` of ``cfg.model.generator`` / ``cfg["model"]["generator"]``: where in a config it reads."""
    parts: list[str] = []
    while (name := _member_name(node)) is not None:
        parts.append(name)
        node = node.value  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def _entry_as_mapping(target: ast.Subscript, value: ast.expr) -> ast.Dict:
    """``models["hift"] = HiFT()`` read as one more value of ``models``, a mapping holding that entry (models
    kept in dicts); a key not written is ``"*"``, as for a mapping built whole."""
    return ast.copy_location(ast.Dict(keys=[target.slice], values=[value]), target)


def _entries(node: ast.Call | ast.Dict | ast.DictComp, depth: int = 0) -> list[tuple[str, ast.expr]]:
    """(key, value) of each entry a mapping is built with; ``"*"`` where the key is not a written string."""
    if depth > 4:
        return []
    if isinstance(node, ast.DictComp):
        return [("*", node.value)]
    if isinstance(node, ast.Dict):
        out: list[tuple[str, ast.expr]] = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                out.extend(_entries(value, depth + 1) if isinstance(value, (ast.Dict, ast.DictComp)) else [])
            else:
                out.append((key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else "*", value))
        return out
    found = [e for a in node.args[:1] if isinstance(a, (ast.Dict, ast.DictComp)) for e in _entries(a, depth + 1)]
    for keyword in node.keywords:
        if keyword.arg is not None:
            found.append((keyword.arg, keyword.value))
        elif isinstance(keyword.value, (ast.Dict, ast.DictComp)):
            found.extend(_entries(keyword.value, depth + 1))
    return found


def _module_loop(node: ast.For | ast.AsyncFor) -> tuple[ast.expr | None, ast.expr | None]:
    """``for m in model.modules():`` -> (``m``, ``model``); ``named_modules()`` and ``enumerate`` bind the second name.

    ``list(...)``, ``tuple(...)`` and ``reversed(...)`` around the iterator change nothing.
    """
    call = node.iter
    pairs = 0
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in _ITERATION_WRAPPERS and call.args:
        pairs += call.func.id == "enumerate"
        call = call.args[0]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _MODULE_ITERATORS):
        return None, None
    target: ast.expr | None = node.target
    for _ in range(pairs + call.func.attr.startswith("named_")):
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
    return (target, call.func.value) if isinstance(target, ast.Name) else (None, None)


def _named_loop_variable(node: ast.For | ast.AsyncFor) -> str:
    """``name`` of ``for name, child in model.named_children():`` ("": not such a loop)."""
    iterator, target = node.iter, node.target
    if not (isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Attribute) and iterator.func.attr.startswith("named_")):
        return ""
    if not (isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name)):
        return ""
    return target.elts[0].id


def _calls_in(statements: list[ast.stmt], test: str) -> dict[int, str]:
    return {id(call): test for part in statements for call in ast.walk(part) if isinstance(call, ast.Call)}


def _skipping_calls(node: ast.For | ast.AsyncFor) -> dict[int, str]:
    """The calls of ``for name, child in model.named_children():`` that a test on ``name`` keeps from some parts.

    ``if name != "f0_predictor": fold(child)`` guards them; ``if name == "f0_predictor": continue`` skips every call
    after it in the loop body.  Each call's id -> the test as written.
    """
    name = _named_loop_variable(node)
    found: dict[int, str] = {}
    skipped = ""
    for position, statement in enumerate(node.body if name else ()):
        if not isinstance(statement, ast.If) or not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement.test)):
            continue
        test = ast.unparse(statement.test)
        found.update(_calls_in(statement.body, test))
        found.update(_calls_in(statement.orelse, f"not ({test})"))
        if not skipped and any(isinstance(n, ast.Continue) for n in statement.body):
            skipped = f"not ({test})"
            found.update(_calls_in(node.body[position + 1 :], skipped))
    return found


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _trains(node: ast.Call, names: frozenset[str]) -> bool:
    """Optimizers, ``backward()``, ``train()`` / ``train(True)``: the function trains."""
    if any(n.startswith(catalogue.TRAINING_API_PREFIXES) for n in names):
        return True
    func = node.func
    if not isinstance(func, ast.Attribute):
        return False
    return func.attr in catalogue.TRAINING_METHODS or (func.attr == "train" and (not node.args or _is_true(node.args[0])))


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and any(
        isinstance(b, ast.Constant) and b.value == "__main__" for b in sides
    )


def _false_defaults(args: ast.arguments) -> set[str]:
    """Parameters whose default is ``False``, ``None`` or ``0``."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return {a.arg for a, d in pairs if isinstance(d, ast.Constant) and not d.value}


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def serving_facts(pieces: Iterable[tuple[int, ast.Module]], module: str, is_package: bool) -> ServingFacts:
    """The serving-path facts of one file, from its syntax trees piece by piece (``analysis.parse_pieces``)."""
    reader = ServingReader(module, is_package)
    for offset, tree in pieces:
        reader.feed(offset, tree)
        del tree
    return reader.finish()


class ServingReader:
    """A file's serving facts, read from syntax trees another reader parsed (one parse of a file feeds both).

    Each piece's tree counts lines from its own start: it is moved to the
    file's lines, walked and its kept nodes slimmed, so memory follows the
    piece, not the file.  ``feed`` changes the tree (lines, end positions):
    it is the last reader of each piece (the analysis walks it first).
    What the walk raises is kept for ``finish``, so a hook never breaks the
    reader that parsed (the analysis of the file stands on its own).
    """

    def __init__(self, module: str, is_package: bool) -> None:
        self._walker = _Walker(module, is_package)
        self._error: BaseException | None = None

    def feed(self, offset: int, tree: ast.Module) -> None:
        """Walk one piece of the file (``offset``: the lines before it)."""
        if self._error is not None:
            return
        walker = self._walker
        try:
            if offset:
                shift_lines(tree, offset)
            kept = len(walker.pending)
            walker.walk(tree)
            slim_nodes(walker.pending[kept:])
        except (ValueError, RecursionError, MemoryError) as error:
            self._error = error

    def finish(self) -> ServingFacts:
        """The file's facts once every piece is fed; raises what a piece's walk raised."""
        if self._error is not None:
            raise self._error
        self._walker.note_smoke_tests()
        return _Linker(self._walker).run()

    def facts(self) -> ServingFacts | None:
        """``finish``, None when the walk failed (whoever reads the facts later reads the file again, and reports why)."""
        try:
            return self.finish()
        except READ_ERRORS:
            return None


def shift_lines(tree: ast.AST, offset: int) -> None:
    """``ast.increment_lineno``, with the nodes of one line sharing one line number object.

    The walk keeps the nodes the linker reads (about two in five of a file's);
    ``increment_lineno`` gives each node two new numbers of its own (a tenth of
    what a big file's walk holds).
    """
    shifted: dict[int, int] = {}
    stack: list[object] = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, ast.AST) or not (held := node.__dict__):
            continue  # a list's None or name; a context or operator (one object for the whole process)
        line, end = held.get("lineno"), held.get("end_lineno")
        if line is not None:
            setattr(node, "lineno", shifted.get(line) or shifted.setdefault(line, line + offset))
        if end is not None:
            setattr(node, "end_lineno", shifted.get(end) or shifted.setdefault(end, end + offset))
        for name in node._fields:  # the children, inline: this loop runs for every node of the file
            child = held.get(name)
            if type(child) is list:
                stack.extend(child)
            elif isinstance(child, ast.AST):
                stack.append(child)


#: Node attributes the linker never reads (the walk has read them): dropped from the nodes it keeps.
_UNREAD = ("end_lineno", "end_col_offset")


def slim_nodes(records: Iterable[tuple[str, object, _Frame, object]]) -> None:
    """Drop the end positions of the nodes the walk's ``records`` keep (their node and extra parts).

    The linker reads the calls, values and annotations the walk kept, often
    two in five of a file's nodes; without the end positions a node's
    attribute dictionary is the small size (a fifth of what a big file's walk
    holds).  A node without them has its subtree
    slimmed already (nested calls are kept once for each call around them).
    """
    stack: list[object] = []
    for record in records:
        for part in (record[1], record[3]):
            if type(part) is list:
                stack.extend(part)
            elif isinstance(part, ast.AST):
                stack.append(part)
    while stack:
        node = stack.pop()
        if not isinstance(node, ast.AST) or not (held := node.__dict__):
            continue
        if "end_lineno" in held:
            node.__dict__ = {name: value for name, value in held.items() if name not in _UNREAD}
        elif node._attributes:
            continue
        for name in node._fields:  # inline, as in ``shift_lines``: this loop runs for every kept node
            child = held.get(name)
            if type(child) is list:
                stack.extend(child)
            elif isinstance(child, ast.AST):
                stack.append(child)


#: What reading a file's serving facts from its bytes may raise: the file is then not read as code.
READ_ERRORS = (SourceError, SyntaxError, ValueError, RecursionError, MemoryError)


def read_serving_facts(data: bytes, path: str, module: str, is_package: bool) -> ServingFacts:
    """A file's serving facts from its bytes, wherever they are computed (the index, the analyses, the workers).

    Any tree CPython can build, as the analysis walks it; no collection rescans the tree meanwhile.
    Raises one of ``READ_ERRORS`` when the file cannot be read as code.
    """
    with deep_recursion(), cyclic_gc_paused():
        return serving_facts(parse_pieces(decode(data).text, path), module, is_package)
