"""Applying weight norm with the deprecated legacy spelling: WN103.

``torch.nn.utils.weight_norm`` installs a forward-pre-hook that torch has
deprecated; the fix calls the parametrization spelling instead (and the
engine migrates this file's removals of it in the same run).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ...common.findings import Applicability, Severity
from ..model import Application, FileSummary, Site
from .base import LEGACY, MODERN_WEIGHT_NORM, WEIGHT_NORM, Candidate, Fix, Invalid, Rule, Valid

if TYPE_CHECKING:
    from ..context import Context
    import libcst as cst


def call_modern_weight_norm(call: cst.Call, kind: str) -> cst.Call:
    """``weight_norm(conv)`` -> ``torch.nn.utils.parametrizations.weight_norm(conv)``, arguments as written."""
    from ..rewrite import calls

    return calls.call_to(call, MODERN_WEIGHT_NORM)


def keep_call(call: cst.Call, kind: str) -> cst.Call:
    """The call stays as written: the fix rewrites the binding of its callee (``Fix.binding``) instead."""
    return call


class DeprecatedLegacyWeightNorm(Rule):
    code = "WN103"
    title = "deprecated legacy torch.nn.utils.weight_norm applied"
    severity = Severity.WARNING
    applicability = Applicability.UNSAFE
    # The migrated module breaks the legacy removals that receive it: they are found again on the
    # post-fix view and fixed with it (``pipeline/migration.py`` settles the ones in other files).
    RERUN_AFTER_FIX = True
    SETTLE_FIXES = "wnaudit.source.pipeline.migration:settle_migrations"
    VALID = (
        Valid("import torch\nconv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))\n"),
        Valid(
            "import torch.nn as nn\nweight_norm = nn.utils.weight_norm\n"
            "if hasattr(nn.utils.parametrizations, 'weight_norm'):\n"
            "    weight_norm = nn.utils.parametrizations.weight_norm\nconv = weight_norm(nn.Conv1d(2, 2, 3))\n"
        ),
        Valid(
            "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm\n"
            "from torch.nn.utils.parametrizations import weight_norm\n\n"
            "def layer(use_spectral_norm=False):\n"
            "    norm_f = weight_norm if use_spectral_norm == False else spectral_norm\n"
            "    return norm_f(nn.Conv1d(2, 2, 3))\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.nn.utils import weight_norm\nconv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n",
            expected_replacement=(
                "import torch\n"
                "conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
            ),
        ),
        Invalid(
            "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm, weight_norm\n\n"
            "def layer(use_spectral_norm=False):\n"
            "    norm_f = weight_norm if use_spectral_norm == False else spectral_norm\n"
            "    return norm_f(nn.Conv1d(2, 2, 3))\n",
            expected_replacement=(
                "import torch\n"
                "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm\n\n"
                "def layer(use_spectral_norm=False):\n"
                "    norm_f = torch.nn.utils.parametrizations.weight_norm if use_spectral_norm == False else spectral_norm\n"
                "    return norm_f(nn.Conv1d(2, 2, 3))\n"
            ),
        ),
        # The binding is shared with a suppressed call: rewriting it would change that call too, so no fix.
        Invalid(
            "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm, weight_norm\n\n"
            "def layers(flag=False):\n"
            "    norm_f = weight_norm if flag else spectral_norm\n"
            "    kept = norm_f(nn.Conv1d(2, 2, 3))  # noqa: WN103 (loads weight_g/weight_v directly)\n"
            "    return kept, norm_f(nn.Conv1d(2, 2, 3))\n",
            expected_replacement=None,
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for application in summary.applications:
            if not application.legacy_only:
                chosen = self._imported_choice(summary, application, context)
                if chosen is not None:
                    yield chosen
                continue
            binding = application.binding
            if binding is None:
                yield Candidate(
                    self.code,
                    application.site,
                    f"{application.api} is deprecated: apply {MODERN_WEIGHT_NORM} "
                    "(the fix also migrates this file's removals of it)",
                    Fix(call_modern_weight_norm, WEIGHT_NORM, torch=True),
                )
                continue
            yield self._through_choice(application, binding, f"line {binding.line}")

    def _through_choice(self, application: Application, binding: Site, where: str, file: str = "") -> Candidate:
        """A call through a flag-selected callable: the fix rewrites the binding's legacy alternative (``file``: elsewhere)."""
        return Candidate(
            self.code,
            application.site,
            f"`{application.via or application.callee}` applies the deprecated {application.api} when its flag "
            f"selects weight norm (bound at {where}): bind {MODERN_WEIGHT_NORM} there "
            + ("(the fix, offered when that file is linted in the same run, also migrates the removals of it)"
               if file else "(the fix also migrates this file's removals of it)"),
            Fix(
                keep_call, WEIGHT_NORM, torch=True,
                binding=((binding.line, binding.column - 1, binding.end_line, binding.end_column - 1), MODERN_WEIGHT_NORM),
                binding_file=file,
            ),
        )

    def _imported_choice(self, summary: FileSummary, application: Application, context: Context) -> Candidate | None:
        """``norm_f(conv)`` with ``from .norms import norm_f`` and the flag choice written in ``norms.py``."""
        if not application.imported or application.kind != WEIGHT_NORM or application.styles != {LEGACY}:
            return None
        found = context.bound_choice(summary, application.imported)
        if found is None:
            return None
        file, binding = found
        return self._through_choice(application, binding, f"{Path(file).name}:{binding.line}", file)
