"""Calls to remover names torch does not define where the code looks for them: WN108."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterator

from ...common.findings import Applicability, Severity
from ..model import FileSummary
from .base import WEIGHT_NORM, Candidate, Fix, Invalid, Rule, Valid

if TYPE_CHECKING:
    from ..context import Context
    import libcst as cst


def call_real_remover(real: str, call: cst.Call, kind: str) -> cst.Call | None:
    """``parametrizations.remove_parametrizations(m, n)`` -> ``torch.nn.utils.parametrize.remove_parametrizations(m, n)``."""
    from ..rewrite import calls

    return calls.call_to(call, real)


class RemoverThatDoesNotExist(Rule):
    code = "WN108"
    title = "remover called from a module that does not define it"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    VALID = (
        Valid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
            "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
            "torch.nn.utils.parametrizations.remove_parametrizations(conv, 'weight')\n",
            expected_replacement=(
                "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
                "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
                "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n"
            ),
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for call in summary.misplaced:
            module, _, name = call.api.rpartition(".")
            yield Candidate(
                self.code,
                call.site,
                f"{module} has no {name}: the call raises AttributeError and folds nothing; "
                f"the remover is {call.real}",
                Fix(functools.partial(call_real_remover, call.real), WEIGHT_NORM, torch=True),
            )
