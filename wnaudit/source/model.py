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


@dataclass(frozen=True)
class Built:
    """What a class assigns to one ``self`` attribute: the constructor it calls, if that is all it ever assigns."""

    line: int
    #: Qualified names the constructor may be (empty: not a single call, or assigned more than once).
    constructor: tuple[str, ...]


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
    #: Some call in the file applies a norm to a module that already exists (``weight_norm(self.conv)``,
    #: ``weight_norm(m)``): attributes may then hold a norm their construction does not show.
    applies_in_place: bool = False
