"""What one file says about the serving path: instances, inference sites, folds.

The project-wide rule WN110 asks, for a class that applies weight norm,
whether any code puts an instance of it (or of a model holding it) into
inference, and whether anything folds it on the way.  This module holds the
plain facts one file's syntax tree gives for that question (the records the
cache keeps: the ``SERVING`` kind of ``facts/kinds.py`` encodes every data class defined here);
``reader.py`` reads them (the walk of ``fact_walker.py``, then the linking of
``linker.py``), and ``index.py`` links the facts of many files.

An *instance reference* (:data:`Ref`) says where a model may come from:
``("new", dotted)`` is the result of calling ``dotted`` (a class, one of its
classmethods such as ``from_pretrained``, or a project function returning a
model), ``("attr", class, attribute)`` is ``self.<attribute>`` in that class.
Local names are followed flow-insensitively inside their function, as the
resolver follows names: every value a name is given may be the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import KeysView

from ..reading import SourceError

#: ``("new", dotted)``, ``("attr", class qualname, attribute)``, ``("sub", attribute, *ref)`` (a member of a model),
#: ``("self", class qualname)`` (``self`` in a method of that class, or of a subclass) or ``("ret", class qualname,
#: method)`` (what ``self.<method>(...)`` returns) or ``("arg", class qualname, parameter)`` (what the class's
#: constructions pass as that ``__init__`` parameter).  A mapping of parts (``Munch(decoder=...)``, a dict literal) is
#: ``("new", "<module>.<Munch@line:column>")``: a class of its own whose attributes are its keys (a part inference
#: never reads is then not served).
Ref = tuple[str, ...]


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
    #: Every name the file's code gives a value (a keyword, a dict key, an assignment, a default, a ``.get``
    #: default, a command-line option), and whether one of those values may be on: what ``flags.py`` asks of the
    #: project's files, read from the same parse.
    settings: dict[str, bool] = field(default_factory=dict)
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


#: What reading a file's serving facts from its bytes may raise: the file is then not read as code.
READ_ERRORS = (SourceError, SyntaxError, ValueError, RecursionError, MemoryError)
