"""The WN1xx source rules.  Each rule is a small class with its own examples.

``VALID`` snippets must produce no finding of the rule's code and ``INVALID``
snippets exactly one; the test suite runs them.  A rule only decides *what*
is wrong and *which* fix applies; ``fixer.py`` performs the rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

from ..core import catalogue
from ..common.findings import Applicability, CodeInfo, Severity
from .context import Context
from .model import FileSummary, Site

WEIGHT_NORM = catalogue.Kind.WEIGHT_NORM.value
SPECTRAL_NORM = catalogue.Kind.SPECTRAL_NORM.value
MODERN = catalogue.Style.MODERN.value
LEGACY = catalogue.Style.LEGACY.value

MODERN_REMOVER = catalogue.WEIGHT_NORM_MODERN.remove_apis[0]
MODERN_WEIGHT_NORM = catalogue.WEIGHT_NORM_MODERN.apply_apis[0]
MODERN_SPECTRAL_NORM = catalogue.SPECTRAL_NORM_MODERN.apply_apis[0]
LEGACY_WEIGHT_NORM = catalogue.WEIGHT_NORM_LEGACY.apply_apis[0]
LEGACY_WN_REMOVER = catalogue.WEIGHT_NORM_LEGACY.remove_apis[0]
LEGACY_SN_REMOVER = catalogue.SPECTRAL_NORM_LEGACY.remove_apis[0]

#: Fix actions understood by the fixer.
FIX_DUAL_REMOVE = "dual_remove"  # replace the callee with the both-spellings helper
FIX_MODERN_REMOVE = "modern_remove"  # call remove_parametrizations(module, name)
FIX_MIGRATE_APPLY = "migrate_apply"  # legacy weight_norm -> parametrizations.weight_norm
FIX_LEAVE_PARAMETRIZED = "leave_parametrized"  # leave_parametrized=False -> True
FIX_ADD_TENSOR_NAME = "add_tensor_name"  # remove_parametrizations(m) -> (m, "weight")
FIX_DUAL_FROM_MODERN = "dual_from_modern"  # remove_parametrizations(m, n) -> helper(m, n)


@dataclass(frozen=True)
class Candidate:
    """A finding before noqa/config filtering, with the fix it would take."""

    code: str
    site: Site
    message: str
    fix: tuple[str, str] | None  # (action, kind)


class Rule:
    code: ClassVar[str]
    title: ClassVar[str]
    severity: ClassVar[Severity]
    #: Whether ``--fix`` applies the rule's fix or only ``--unsafe-fixes`` does; the rule page says why.
    applicability: ClassVar[Applicability]
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[str, ...]] = ()

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        raise NotImplementedError

    @classmethod
    def info(cls) -> CodeInfo:
        """The rule's code declaration, as the registry and the findings carry it."""
        return CodeInfo(cls.code, cls.title, cls.severity, cls.applicability)


def _removal_fix(styles: frozenset[str], kind: str, star_args: bool) -> tuple[str, str]:
    """Modern guaranteed: call the modern remover; otherwise (or with ``*args``) a helper that handles both."""
    if styles == frozenset({MODERN}) and not star_args:
        return (FIX_MODERN_REMOVE, kind)
    return (FIX_DUAL_REMOVE, kind)


class _LegacyRemovalRule(Rule):
    kind: ClassVar[str]
    applier: ClassVar[str]

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style != LEGACY or removal.kind != self.kind or removal.guard != "none":
                continue
            styles = context.styles_for(summary, removal.site.unit, self.kind)
            if MODERN not in styles:
                continue
            may = "comes" if styles == frozenset({MODERN}) else "may come at run time"
            yield Candidate(
                self.code,
                removal.site,
                f"legacy {removal.api} on a module whose {self.kind} {may} from {self.applier}: "
                f"it raises ValueError and folds nothing; remove it with {MODERN_REMOVER}",
                _removal_fix(styles, self.kind, removal.star_args),
            )


class LegacyRemoveWeightNorm(_LegacyRemovalRule):
    code = "WN101"
    title = "legacy remove_weight_norm on a module whose weight norm is (or may be) a parametrization"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    kind = WEIGHT_NORM
    applier = MODERN_WEIGHT_NORM
    VALID = (
        "import torch\nfrom torch.nn.utils import weight_norm, remove_weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n",
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
        "from torch.nn.utils.parametrize import remove_parametrizations\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_parametrizations(conv, 'weight')\n",
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
        "def strip(m):\n    try:\n        torch.nn.utils.remove_weight_norm(m)\n"
        "    except (ValueError, AttributeError):\n"
        "        torch.nn.utils.parametrize.remove_parametrizations(m, 'weight')\n",
    )
    INVALID = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_weight_norm(conv)\n",
        "import torch.nn as nn\ntry:\n    from torch.nn.utils.parametrizations import weight_norm\n"
        "except ImportError:\n    from torch.nn.utils import weight_norm\n"
        "from torch.nn.utils import remove_weight_norm as rwn\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.ups = nn.ModuleList([weight_norm(nn.Conv1d(2, 2, 3))])\n\n"
        "    def remove_weight_norm(self):\n        for layer in self.ups:\n            rwn(layer)\n",
    )


class LegacyRemoveSpectralNorm(_LegacyRemovalRule):
    code = "WN102"
    title = "legacy remove_spectral_norm on a module whose spectral norm is (or may be) a parametrization"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    kind = SPECTRAL_NORM
    applier = MODERN_SPECTRAL_NORM
    VALID = (
        "import torch\nconv = torch.nn.utils.spectral_norm(torch.nn.Conv1d(2, 2, 3))\n"
        "torch.nn.utils.remove_spectral_norm(conv)\n",
    )
    INVALID = (
        "import torch\nfrom torch.nn.utils.parametrizations import spectral_norm\n"
        "conv = spectral_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_spectral_norm(conv)\n",
    )


class DeprecatedLegacyWeightNorm(Rule):
    code = "WN103"
    title = "deprecated legacy torch.nn.utils.weight_norm applied"
    severity = Severity.WARNING
    applicability = Applicability.UNSAFE
    VALID = (
        "import torch\nconv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))\n",
        "import torch.nn as nn\nweight_norm = nn.utils.weight_norm\n"
        "if hasattr(nn.utils.parametrizations, 'weight_norm'):\n"
        "    weight_norm = nn.utils.parametrizations.weight_norm\nconv = weight_norm(nn.Conv1d(2, 2, 3))\n",
    )
    INVALID = (
        "import torch\nfrom torch.nn.utils import weight_norm\nconv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n",
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for application in summary.applications:
            if application.legacy_only:
                yield Candidate(
                    self.code,
                    application.site,
                    f"{application.api} is deprecated: apply {MODERN_WEIGHT_NORM} "
                    "(the fix also migrates this file's removals of it)",
                    (FIX_MIGRATE_APPLY, WEIGHT_NORM),
                )


class RemoveParametrizationsUnparametrized(Rule):
    code = "WN104"
    title = "remove_parametrizations(..., leave_parametrized=False) on a weight-normed tensor"
    severity = Severity.ERROR
    applicability = Applicability.UNSAFE
    VALID = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
        "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight', leave_parametrized=True)\n",
    )
    INVALID = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
        "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight', leave_parametrized=False)\n",
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style != MODERN or not removal.leave_parametrized_false:
                continue
            if MODERN in context.styles_for(summary, removal.site.unit, WEIGHT_NORM):
                yield Candidate(
                    self.code,
                    removal.site,
                    "leave_parametrized=False cannot restore a weight-normed tensor (its two originals, g and v, "
                    "are not one tensor): the call always raises; use leave_parametrized=True to fold",
                    (FIX_LEAVE_PARAMETRIZED, WEIGHT_NORM),
                )


class RemoveParametrizationsNoName(Rule):
    code = "WN105"
    title = "remove_parametrizations called without the tensor name"
    severity = Severity.ERROR
    applicability = Applicability.UNSAFE
    VALID = (
        "import torch\ndef strip(m):\n    torch.nn.utils.parametrize.remove_parametrizations(m, 'weight')\n",
    )
    INVALID = (
        "import torch\ndef strip(m):\n    torch.nn.utils.parametrize.remove_parametrizations(m)\n",
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style == MODERN and removal.missing_tensor_name:
                yield Candidate(
                    self.code,
                    removal.site,
                    f"{removal.api} needs the tensor name (e.g. \"weight\"): without it the call raises TypeError",
                    (FIX_ADD_TENSOR_NAME, WEIGHT_NORM),
                )


class SwallowedLegacyRemoval(Rule):
    code = "WN106"
    title = "legacy removal inside except ValueError with no modern fallback: silently folds nothing"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    VALID = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
        "def strip(model):\n    for m in model.modules():\n        try:\n"
        "            torch.nn.utils.remove_weight_norm(m)\n        except ValueError:\n"
        "            torch.nn.utils.parametrize.remove_parametrizations(m, 'weight')\n",
        "import torch\nfrom torch.nn.utils import weight_norm\n\n"
        "def strip(model):\n    for m in model.modules():\n        try:\n"
        "            torch.nn.utils.remove_weight_norm(m)\n        except ValueError:\n            pass\n",
    )
    INVALID = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
        "def build():\n    return weight_norm(torch.nn.Conv1d(2, 2, 3))\n\n"
        "def strip(model):\n    for m in model.modules():\n        try:\n"
        "            torch.nn.utils.remove_weight_norm(m)\n        except ValueError:\n            continue\n",
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style != LEGACY or removal.guard != "swallowed":
                continue
            styles = context.styles_for(summary, removal.site.unit, removal.kind)
            if MODERN in styles:
                yield Candidate(
                    self.code,
                    removal.site,
                    f"{removal.api} inside an except ValueError that swallows the error: on a module whose "
                    f"{removal.kind} is a parametrization it silently folds nothing; fall back to {MODERN_REMOVER}",
                    (FIX_DUAL_REMOVE, removal.kind),
                )


class ModernRemoveOnLegacyNorm(Rule):
    code = "WN107"
    title = "remove_parametrizations on a module whose weight norm is the legacy hook"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    VALID = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
        "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n",
        "import torch\nfrom torch.nn.utils import weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))  # noqa: WN103\n"
        "if torch.nn.utils.parametrize.is_parametrized(conv):\n"
        "    torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n",
    )
    INVALID = (
        "import torch\nfrom torch.nn.utils import weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))  # noqa: WN103\n"
        "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n",
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style != MODERN or removal.guard != "none":
                continue
            unit = removal.site.unit
            if context.styles_for(summary, unit, catalogue.Kind.OTHER.value):
                continue  # it may be removing some other parametrization
            for kind in (WEIGHT_NORM, SPECTRAL_NORM):
                if context.styles_for(summary, unit, kind) == frozenset({LEGACY}):
                    fixable = not removal.star_args and not removal.leave_parametrized_false
                    yield Candidate(
                        self.code,
                        removal.site,
                        f"{removal.api} on a module whose {kind} is the legacy forward-pre-hook: it raises "
                        "ValueError (no parametrization) and folds nothing",
                        (FIX_DUAL_FROM_MODERN, kind) if fixable else None,
                    )
                    break


RULES: tuple[type[Rule], ...] = (
    LegacyRemoveWeightNorm,
    LegacyRemoveSpectralNorm,
    DeprecatedLegacyWeightNorm,
    RemoveParametrizationsUnparametrized,
    RemoveParametrizationsNoName,
    SwallowedLegacyRemoval,
    ModernRemoveOnLegacyNorm,
)

#: The WN1xx code declarations, for the registry (``wnaudit.report.codes``).
SOURCE_CODES: tuple[CodeInfo, ...] = tuple(rule.info() for rule in RULES)
BY_CODE: dict[str, CodeInfo] = {info.code: info for info in SOURCE_CODES}


def all_rules() -> list[type[Rule]]:
    """Every source rule, in code order (for docs, SARIF and listings)."""
    return sorted(RULES, key=lambda rule: rule.code)


def candidates(summary: FileSummary, context: Context) -> list[Candidate]:
    out = [c for rule in all_rules() for c in rule().check(summary, context)]
    out.sort(key=lambda c: (c.site.line, c.site.column, c.code))
    return out
