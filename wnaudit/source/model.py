"""Plain, picklable facts about one source file, produced by the analysis.

Worker processes send these back instead of syntax trees: they are small,
and everything the rules and the fixer need is here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Site:
    """Where a call is: 1-based line, 1-based character column, and its end."""

    line: int
    column: int
    end_line: int
    end_column: int
    #: Qualified name of the top-level class/function holding the call
    #: (the module name for module-level code).
    unit: str

    @property
    def key(self) -> tuple[int, int, int, int]:
        return (self.line, self.column, self.end_line, self.end_column)


@dataclass(frozen=True)
class Application:
    """A call that applies weight norm or spectral norm."""

    site: Site
    kind: str  # catalogue.Kind value
    #: Styles the applier may have at run time (catalogue.Style values).
    styles: frozenset[str]
    #: True when the applier resolves to nothing but the legacy API (WN103).
    legacy_only: bool
    api: str
    #: The call goes through a name bound to a choice (``norm_f = weight_norm if flag else spectral_norm``):
    #: that name, and where the legacy ``weight_norm`` sits in its binding (the WN103 fix rewrites it there).
    via: str = ""
    binding: Site | None = None
    #: The callee as written (``weight_norm``, ``nn.utils.weight_norm``, ``norm_f``): messages cite it.
    callee: str = ""
    #: The callee is a project name imported from another file that stands for torch appliers there
    #: (``from .norms import norm_f``): its qualified name (``voc.norms.norm_f``), for WN103 to find the binding.
    imported: str = ""


@dataclass(frozen=True)
class Removal:
    """A call to a remover API."""

    site: Site
    kind: str  # weight norm / spectral norm, or "" for remove_parametrizations
    style: str  # "legacy" or "modern"
    api: str
    #: How the call is protected: "none"; "dual" (a modern fallback in the same
    #: function handles what the legacy call cannot); "swallowed" (an except
    #: ValueError with no modern fallback); "checked" (an if that looks at the
    #: module's parametrizations/hooks first).
    guard: str = "none"
    #: remove_parametrizations only: no tensor name passed.
    missing_tensor_name: bool = False
    #: remove_parametrizations only: leave_parametrized=False given.
    leave_parametrized_false: bool = False
    #: The call passes ``*args`` or ``**kwargs`` (its arguments cannot be rewritten one by one).
    star_args: bool = False
    #: The target is ``self.<attr>`` in a method of the top-level class ``site.unit``: that attribute ("" otherwise).
    self_attr: str = ""
    #: The target is an element of ``self.<self_attr>`` (``for l in self.ups: remove_weight_norm(l)``, ``self.ups[0]``).
    element: bool = False
    #: The method of ``site.unit`` the call is in ("" outside one), and the tests on that method's parameters
    #: that hold where the call runs (``if not conv_pre_weight_norm:``); a test it cannot read is ``Test("", "?")``.
    method: str = ""
    when: tuple[Test, ...] = ()


@dataclass(frozen=True)
class Test:
    """A test on one parameter, as construction code writes it: ``norm == "weight_norm"``, ``not flag``.

    ``op`` is ``==``, ``!=``, ``in``, ``not in``, ``is``, ``is not``, ``true``, ``false`` or ``?`` (a
    test the removal rules cannot read); ``literals`` are the constants compared with, as ``repr`` writes them.
    """

    param: str
    op: str
    literals: tuple[str, ...] = ()


@dataclass(frozen=True)
class Value:
    """An expression construction code passes on, as far as the removal rules follow constants.

    Kept so that ``SConv1d(..., norm="weight_norm")`` can be followed through
    ``NormConv1d(..., norm=norm)`` to ``apply_parametrization_norm(nn.Conv1d(...), norm)``
    and on to the norm it applies, without the syntax tree.
    """

    #: "call", "const" (``literal``), "param" (``names[0]``, a parameter of the enclosing function), "if" or "unknown".
    kind: str
    #: call: the qualified names the callee may be; param: the parameter's name.
    names: tuple[str, ...] = ()
    literal: str = ""
    args: tuple[Value, ...] = ()
    keywords: tuple[tuple[str, Value], ...] = ()
    #: call: it passes ``*args`` or ``**kwargs`` (what they carry is unknown).
    star: bool = False
    line: int = 0
    #: "if" (``a if flag else b``, ``args`` the two branches): what must hold of the parameters for the first.
    when: tuple[Test, ...] = ()


@dataclass(frozen=True)
class Param:
    """One parameter of a function the removal rules follow (``self`` left out)."""

    name: str
    #: The default, when there is one.
    default: Value | None
    positional: bool
    keyword: bool


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    #: ``*args`` / ``**kwargs`` are accepted (extra arguments go there).
    varargs: bool = False
    varkw: bool = False


@dataclass(frozen=True)
class Return:
    """``return value`` where every test in ``when`` holds."""

    when: tuple[Test, ...]
    value: Value


@dataclass(frozen=True)
class Helper:
    """A top-level function made only of tests and returns (``apply_parametrization_norm(module, norm)``).

    Its returns, in source order: the first whose tests hold is what a call
    with those arguments gives back.
    """

    signature: Signature
    returns: tuple[Return, ...]


@dataclass(frozen=True)
class Built:
    """What a class assigns to one ``self`` attribute: the constructor it calls, if that is all it ever assigns."""

    line: int
    #: Qualified names the constructor may be (empty: not a single call, or assigned more than once).
    constructor: tuple[str, ...]
    #: The one call assigned, its parameters those of the method assigning it when that is ``__init__`` (otherwise
    #: they are unknown).  None when ``constructor`` says all about it (a torch layer or applier, whose arguments
    #: do not matter), when it is no call, or when the attribute is assigned more than once.
    value: Value | None = None
    #: A container (``nn.ModuleList()``, ``nn.ModuleList([...])``): every element put in it, when the class's code
    #: shows them all (``.append(...)``, a list or comprehension); None: not known.
    elements: tuple[Value, ...] | None = None


@dataclass(frozen=True)
class Misplaced:
    """A call to a remover name torch does not define there (``catalogue.MISPLACED_REMOVERS``)."""

    site: Site
    api: str
    real: str


@dataclass(frozen=True)
class Unit:
    """A top-level class or function: what it applies itself and what it refers to."""

    #: kind -> styles applied directly inside the unit.
    direct: tuple[tuple[str, frozenset[str]], ...]
    #: Qualified names the unit calls or inherits from (for transitive styles).
    refs: tuple[str, ...]


@dataclass
class FileSummary:
    path: str
    module: str
    units: dict[str, Unit] = field(default_factory=dict)
    #: Qualified names the file imports (for the file-level context).
    imports: tuple[str, ...] = ()
    applications: list[Application] = field(default_factory=list)
    removals: list[Removal] = field(default_factory=list)
    misplaced: list[Misplaced] = field(default_factory=list)
    #: line -> codes suppressed there (empty frozenset: bare ``# noqa``).
    noqa: dict[int, frozenset[str]] = field(default_factory=dict)
    #: The module-level name ``torch`` is the torch package (fixes may spell APIs through it).
    torch_bound: bool = False
    #: Module-level names bound by imports or assignments -> the qualified names they may hold.
    exports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Modules this file star-imports (their names are this module's names too).
    star_modules: tuple[str, ...] = ()
    #: The file's resolved absolute path: its identity as a module (``path`` is how the user named it).
    file: str = ""
    #: Top-level classes whose attributes can be read off their own code: bases only ``torch.nn.Module``,
    #: ``self`` never handed to other code, no ``self.apply``/``modules()`` walks, not subclassed in the file.
    #: Class -> attribute -> how it is built.
    plain_classes: dict[str, dict[str, Built]] = field(default_factory=dict)
    #: (class, attribute) -> lines of calls other than removals that receive ``self.<attribute>``.
    handed: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    #: Module-level names bound to a flag choice with one legacy ``weight_norm`` alternative
    #: (``norm_f = weight_norm if flag else spectral_norm``) -> where that alternative is written:
    #: calls through the name from other files are WN103 findings whose fix rewrites it here.
    choices: dict[str, Site] = field(default_factory=dict)
    #: Top-level class -> the signature of the ``__init__`` it defines itself.
    inits: dict[str, Signature] = field(default_factory=dict)
    #: Top-level functions made only of tests and returns (``Helper``), by qualified name.
    helpers: dict[str, Helper] = field(default_factory=dict)
    #: Top-level class of the file -> the calls that construct it in the file, with their arguments.
    constructions: dict[str, tuple[Value, ...]] = field(default_factory=dict)
    #: Some call in the file applies a norm to a module that already exists (``weight_norm(self.conv)``,
    #: ``weight_norm(m)``): attributes may then hold a norm their construction does not show.
    applies_in_place: bool = False
    #: The facts of the providers the rules declare (``providers/``), by provider name, each in the plain-JSON
    #: form its provider writes (``Provider.encode``): computed in the worker that parsed the file, from the
    #: same trees, and cached with the summary; a rule reads one decoded through ``Context.fact``.
    provided: dict[str, str] = field(default_factory=dict)
