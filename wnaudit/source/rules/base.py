"""What a source rule is made of: detection, message, fix and fix safety, with its own examples.

A rule's ``check`` yields :class:`Candidate` findings; each carries the
:class:`Fix` that rewrites its call, a function kept next to the rule in its
family module.  Fix functions take and return libcst nodes but load the
rewrite vocabulary (``wnaudit.source.rewrite``, which imports libcst) only
when they run, so linting never imports libcst: only ``--fix`` and ``--diff``
pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, Iterator

from ...common.findings import Applicability, CodeInfo, Severity
from ...core import catalogue
from ..model import FileSummary, Site
from ..providers.base import Provider

if TYPE_CHECKING:
    import libcst as cst

    from ..context import Context

WEIGHT_NORM = catalogue.Kind.WEIGHT_NORM.value
SPECTRAL_NORM = catalogue.Kind.SPECTRAL_NORM.value
OTHER = catalogue.Kind.OTHER.value
MODERN = catalogue.Style.MODERN.value
LEGACY = catalogue.Style.LEGACY.value

MODERN_REMOVER = catalogue.WEIGHT_NORM_MODERN.remove_apis[0]

#: The both-spellings remover a weight-norm fix adds, as the rule examples expect it
#: written.  Stated here on its own, not derived from ``rewrite/support.py``, so
#: the examples still catch a change to what the fix writes.
WEIGHT_NORM_HELPER_TEXT = (
    'def _remove_weight_norm_any_spelling(module, name="weight"):\n'
    '    """Fold a weight norm applied by either torch spelling (added by wnaudit --fix)."""\n'
    "    try:\n"
    "        return torch.nn.utils.remove_weight_norm(module, name)\n"
    "    except (ValueError, AttributeError):\n"
    "        return torch.nn.utils.parametrize.remove_parametrizations(module, name)\n"
)
#: The torch-only fold WN110's fix adds to a file when the project does not use wnaudit (``rewrite/support.py``).
LOCAL_FOLD = "_fold_weight_norm_for_inference"
#: Its text, as WN110's examples expect it written; stated here on its own, not derived from
#: ``rewrite/support.py``, so the examples catch a change to what the fix writes.
LOCAL_FOLD_TEXT = (
    "def _fold_weight_norm_for_inference(model):\n"
    '    """Fold every weight norm in ``model`` (either torch spelling) into a plain weight (added by wnaudit --fix)."""\n'
    "    for module in list(model.modules()):\n"
    "        folded = {}\n"
    "        if torch.nn.utils.parametrize.is_parametrized(module):\n"
    "            for name, chain in list(module.parametrizations.items()):\n"
    '                if all(type(p).__name__ == "_WeightNorm" for p in chain):\n'
    "                    folded[name] = any(p.requires_grad for p in chain.parameters())\n"
    "                    with torch.inference_mode(False), torch.no_grad():\n"
    "                        torch.nn.utils.parametrize.remove_parametrizations(module, name, leave_parametrized=True)\n"
    "        for hook in list(module._forward_pre_hooks.values()):\n"
    '            if type(hook).__name__ == "WeightNorm":\n'
    '                parts = [getattr(module, hook.name + suffix) for suffix in ("_g", "_v")]\n'
    "                folded[hook.name] = any(p.requires_grad for p in parts)\n"
    "                with torch.inference_mode(False), torch.no_grad():\n"
    "                    torch.nn.utils.remove_weight_norm(module, hook.name)\n"
    "        for name, requires_grad in folded.items():\n"
    "            weight = getattr(module, name).detach()\n"
    "            delattr(module, name)\n"
    "            module.register_parameter(name, torch.nn.Parameter(weight, requires_grad=requires_grad))\n"
    "    return model\n"
)
MODERN_WEIGHT_NORM = catalogue.WEIGHT_NORM_MODERN.apply_apis[0]
MODERN_SPECTRAL_NORM = catalogue.SPECTRAL_NORM_MODERN.apply_apis[0]

#: A rule's fix: the flagged call and the norm kind in, the rewritten call out
#: (None when the call has a shape the fix does not handle; it is then left as written).
CallRewrite = Callable[["cst.Call", str], "cst.Call | None"]


@dataclass(frozen=True)
class Fix:
    """How a candidate's call is rewritten, and what the file must provide afterwards."""

    rewrite: CallRewrite
    #: The norm kind (catalogue.Kind value) the rewrite is about.
    kind: str
    #: The new call names the both-spellings helper for ``kind``: the fixer defines it in the file.
    helper: bool = False
    #: The new call spells ``torch.nn.utils...``: the fixer adds ``import torch`` when the file lacks it.
    torch: bool = False
    #: Where the fix also rewrites a name bound elsewhere (the callee's binding), and the dotted name it
    #: becomes; the span is 1-based lines and 0-based character columns, as libcst reports positions.
    binding: tuple[tuple[int, int, int, int], str] | None = None
    #: The resolved path of the file the binding is written in, when it is not the candidate's own file
    #: (``from .norms import norm_f``): the fix is applied there, and only when that file is in the run.
    binding_file: str = ""


@dataclass(frozen=True)
class Insertion:
    """A fix that adds a statement instead of rewriting the flagged call: ``model.remove_weight_norm()``.

    The statement may belong in another file than the finding (the serving
    code that evaluates a model another file builds); it is applied when that
    file is fixed in the same run.
    """

    #: The file to edit (its resolved path, as ``FileSummary.file``) and the line of the site there.
    file: str
    line: int
    #: The statement to add, and the module it needs imported (``import wnaudit``; "": none).
    statement: str
    module: str
    #: "after": after the site's statement and after the loads of ``target`` (or what holds it) that follow it
    #: in its function, enclosing blocks included (``rewrite/insert.py``): a fold renames the checkpoint's keys;
    #: "before": before the statement of the enclosing function that holds the site.
    placement: str
    #: The model as written at the site (``model``, ``self.vocoder``).
    target: str
    #: The statement calls the local fold (``rewrite.support.FOLD_HELPER``): the fixer defines it in the file.
    local: bool = False


@dataclass(frozen=True)
class Candidate:
    """A finding before noqa/config filtering, with the fix it would take."""

    code: str
    site: Site
    message: str
    fix: Fix | None
    insert: Insertion | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None or self.insert is not None


@dataclass(frozen=True)
class Valid:
    """Source in which the rule reports nothing."""

    source: str


@dataclass(frozen=True)
class Invalid:
    """Source in which the rule reports exactly once, and what ``--fix`` turns it into.

    ``expected_replacement`` is the exact fixed text; None says the rule
    offers no fix for this example (the text must then stay as it is).
    """

    source: str
    expected_replacement: str | None = None


class Rule:
    """One WN1xx rule.  A concrete rule sets every ClassVar below and ``check``."""

    code: ClassVar[str]
    title: ClassVar[str]
    severity: ClassVar[Severity]
    #: Whether ``--fix`` applies the rule's fix or only ``--unsafe-fixes`` does; the rule page says why.
    #: ``None``: the rule offers no fix (its candidates carry none; the page's "Fix safety" says so).
    applicability: ClassVar[Applicability | None]
    VALID: ClassVar[tuple[Valid, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()
    #: The rule reads the file's whole project, not just the file and its imports: it runs only when selected.
    project_wide: ClassVar[bool] = False
    #: The fact providers (``source/providers/``) whose facts the rule reads through ``Context.fact``: the
    #: analysis computes every provider some rule declares, on the same parse as the summary.
    PROVIDERS: ClassVar[tuple[type[Provider], ...]] = ()
    #: Its fix changes what the other rules find (it migrates a spelling they read): the plan re-runs every
    #: rule on the view after the fix and plans, with it, the fixes the new findings need.  Data, so that the
    #: plan stage reads it for any rule and names none.
    RERUN_AFTER_FIX: ClassVar[bool] = False
    #: A cross-file step that settles the rule's fixes before that re-run, as ``"module:function"`` (loaded
    #: only when the run has a fixable finding of the rule, so the rules never import the pipeline):
    #: ``function(code, summaries, reported, context, run_files) -> (blocked, along)``, with ``blocked``
    #: the reason each unsafe fix is withheld, by (path, code, site key), and ``along`` the other findings
    #: the safe ones take with them, by path.  "" : none.
    SETTLE_FIXES: ClassVar[str] = ""

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        raise NotImplementedError

    @classmethod
    def info(cls) -> CodeInfo:
        """The rule's code declaration, as the registry and the findings carry it."""
        return CodeInfo(cls.code, cls.title, cls.severity, cls.applicability)

    @classmethod
    def is_concrete(cls) -> bool:
        """A rule with its own code (not a base class shared by a family)."""
        return "code" in vars(cls)
