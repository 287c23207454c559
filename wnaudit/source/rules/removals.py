"""Legacy removers (``remove_weight_norm``/``remove_spectral_norm``) that fold nothing: WN101, WN102, WN106.

The legacy removers only know the legacy forward-pre-hook; on a module whose
norm is a parametrization they raise ``ValueError``.  The fixes call the
modern remover where the modern spelling is certain, and otherwise a small
helper, added to the file, that tries both spellings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterator

from ...common.findings import Applicability, Severity
from ..model import FileSummary
from .base import (
    WEIGHT_NORM_HELPER_TEXT,
    LEGACY,
    MODERN,
    MODERN_REMOVER,
    MODERN_SPECTRAL_NORM,
    MODERN_WEIGHT_NORM,
    SPECTRAL_NORM,
    WEIGHT_NORM,
    Candidate,
    Fix,
    Invalid,
    Rule,
    Valid,
)

if TYPE_CHECKING:
    from ..context import Context
    import libcst as cst


def call_helper(call: cst.Call, kind: str) -> cst.Call:
    """``remove_weight_norm(m)`` -> ``_remove_weight_norm_any_spelling(m)``: folds whichever spelling applied it."""
    from ..rewrite import calls, support

    return calls.call_to(call, support.helper_name(kind))


def call_modern_remover(call: cst.Call, kind: str) -> cst.Call | None:
    """``remove_weight_norm(m[, name=n])`` -> ``remove_parametrizations(m, "weight" | tensor_name=n)``."""
    from ..rewrite import calls

    if calls.has_star(call):
        return None
    args = []
    named = len(calls.positional(call.args)) >= 2
    for arg in call.args:
        if calls.keyword(arg) == "name":
            arg = calls.rename_keyword(arg, "tensor_name")
            named = True
        args.append(arg)
    if not any(calls.keyword(arg) in (None, "module") for arg in args):
        return None
    renamed = calls.call_to(call, MODERN_REMOVER, args)
    return renamed if named else calls.with_tensor_name(renamed)


def _removal_fix(styles: frozenset[str], kind: str, star_args: bool) -> Fix:
    """Modern guaranteed: call the modern remover; otherwise (or with ``*args``) a helper that handles both."""
    if styles == frozenset({MODERN}) and not star_args:
        return Fix(call_modern_remover, kind, torch=True)
    return Fix(call_helper, kind, helper=True, torch=True)


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
            witness = context.witness(summary, removal.site.unit, self.kind, MODERN)
            cited = f" ({witness.cite()})" if witness is not None else ""
            yield Candidate(
                self.code,
                removal.site,
                f"legacy {removal.api} on a module whose {self.kind} {may} from {self.applier}{cited}: "
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
        Valid(
            "import torch\nfrom torch.nn.utils import weight_norm, remove_weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n"
        ),
        Valid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "from torch.nn.utils.parametrize import remove_parametrizations\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_parametrizations(conv, 'weight')\n"
        ),
        Valid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
            "def strip(m):\n    try:\n        torch.nn.utils.remove_weight_norm(m)\n"
            "    except (ValueError, AttributeError):\n"
            "        torch.nn.utils.parametrize.remove_parametrizations(m, 'weight')\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_weight_norm(conv)\n",
            expected_replacement=(
                "import torch\n"
                "from torch.nn.utils.parametrizations import weight_norm\n"
                "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
                'torch.nn.utils.parametrize.remove_parametrizations(conv, "weight")\n'
            ),
        ),
        Invalid(
            "import torch.nn as nn\ntry:\n    from torch.nn.utils.parametrizations import weight_norm\n"
            "except ImportError:\n    from torch.nn.utils import weight_norm\n"
            "from torch.nn.utils import remove_weight_norm as rwn\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.ups = nn.ModuleList([weight_norm(nn.Conv1d(2, 2, 3))])\n\n"
            "    def remove_weight_norm(self):\n        for layer in self.ups:\n            rwn(layer)\n",
            expected_replacement=(
                "import torch\n"
                "import torch.nn as nn\n"
                "try:\n"
                "    from torch.nn.utils.parametrizations import weight_norm\n"
                "except ImportError:\n"
                "    from torch.nn.utils import weight_norm\n"
                "\n"
                "\n"
                + WEIGHT_NORM_HELPER_TEXT
                + "\n"
                "\n"
                "class Net(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.ups = nn.ModuleList([weight_norm(nn.Conv1d(2, 2, 3))])\n"
                "\n"
                "    def remove_weight_norm(self):\n"
                "        for layer in self.ups:\n"
                "            _remove_weight_norm_any_spelling(layer)\n"
            ),
        ),
    )


class LegacyRemoveSpectralNorm(_LegacyRemovalRule):
    code = "WN102"
    title = "legacy remove_spectral_norm on a module whose spectral norm is (or may be) a parametrization"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    kind = SPECTRAL_NORM
    applier = MODERN_SPECTRAL_NORM
    VALID = (
        Valid(
            "import torch\nconv = torch.nn.utils.spectral_norm(torch.nn.Conv1d(2, 2, 3))\n"
            "torch.nn.utils.remove_spectral_norm(conv)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.nn.utils.parametrizations import spectral_norm\n"
            "conv = spectral_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_spectral_norm(conv)\n",
            expected_replacement=(
                "import torch\n"
                "from torch.nn.utils.parametrizations import spectral_norm\n"
                "conv = spectral_norm(torch.nn.Conv1d(2, 2, 3))\n"
                'torch.nn.utils.parametrize.remove_parametrizations(conv, "weight")\n'
            ),
        ),
    )


class SwallowedLegacyRemoval(Rule):
    code = "WN106"
    title = "legacy removal inside except ValueError with no modern fallback: silently folds nothing"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    VALID = (
        Valid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
            "def strip(model):\n    for m in model.modules():\n        try:\n"
            "            torch.nn.utils.remove_weight_norm(m)\n        except ValueError:\n"
            "            torch.nn.utils.parametrize.remove_parametrizations(m, 'weight')\n"
        ),
        Valid(
            "import torch\nfrom torch.nn.utils import weight_norm\n\n"
            "def strip(model):\n    for m in model.modules():\n        try:\n"
            "            torch.nn.utils.remove_weight_norm(m)\n        except ValueError:\n            pass\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
            "def build():\n    return weight_norm(torch.nn.Conv1d(2, 2, 3))\n\n"
            "def strip(model):\n    for m in model.modules():\n        try:\n"
            "            torch.nn.utils.remove_weight_norm(m)\n        except ValueError:\n            continue\n",
            expected_replacement=(
                "import torch\n"
                "from torch.nn.utils.parametrizations import weight_norm\n"
                "\n"
                "\n"
                + WEIGHT_NORM_HELPER_TEXT
                + "\n"
                "\n"
                "def build():\n"
                "    return weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
                "\n"
                "def strip(model):\n"
                "    for m in model.modules():\n"
                "        try:\n"
                "            _remove_weight_norm_any_spelling(m)\n"
                "        except ValueError:\n"
                "            continue\n"
            ),
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style != LEGACY or removal.guard != "swallowed":
                continue
            styles = context.styles_for(summary, removal.site.unit, removal.kind)
            if MODERN in styles:
                witness = context.witness(summary, removal.site.unit, removal.kind, MODERN)
                cited = f" ({witness.cite()})" if witness is not None else ""
                yield Candidate(
                    self.code,
                    removal.site,
                    f"{removal.api} inside an except ValueError that swallows the error: on a module whose "
                    f"{removal.kind} is a parametrization{cited} it silently folds nothing; fall back to {MODERN_REMOVER}",
                    Fix(call_helper, removal.kind, helper=True, torch=True),
                )
