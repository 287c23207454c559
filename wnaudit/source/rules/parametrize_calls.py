"""Calls to torch's ``remove_parametrizations`` that raise instead of folding: WN104, WN105, WN107."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ...common.findings import Applicability, Severity
from ..model import FileSummary
from .base import (
    WEIGHT_NORM_HELPER_TEXT,
    LEGACY,
    MODERN,
    OTHER,
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


def leave_parametrized_true(call: cst.Call, kind: str) -> cst.Call | None:
    """``leave_parametrized=False`` (keyword or third positional) -> ``True``."""
    from ..rewrite import calls

    args = list(call.args)
    for index, arg in enumerate(args):
        if calls.keyword(arg) == "leave_parametrized":
            args[index] = calls.with_value_true(arg)
            return call.with_changes(args=args)
    positional = [index for index, arg in enumerate(args) if calls.keyword(arg) is None]
    if len(positional) >= 3:
        args[positional[2]] = calls.with_value_true(args[positional[2]])
        return call.with_changes(args=args)
    return None


def add_tensor_name(call: cst.Call, kind: str) -> cst.Call | None:
    """``remove_parametrizations(m)`` -> ``remove_parametrizations(m, "weight")``."""
    from ..rewrite import calls

    if calls.has_star(call):
        return None
    return calls.with_tensor_name(call)


def call_helper_from_modern(call: cst.Call, kind: str) -> cst.Call | None:
    """``remove_parametrizations(m, n[, True])`` -> ``_remove_weight_norm_any_spelling(m, n)``.

    The helper takes ``(module, name)``: ``tensor_name=`` becomes ``name=`` and a
    ``leave_parametrized`` of True (the only value that folds) is dropped; any
    other value leaves the call as written.
    """
    from ..rewrite import calls, support

    args = []
    for arg in call.args:
        name = calls.keyword(arg)
        if name == "leave_parametrized":
            if not calls.is_true(arg):
                return None
            continue
        if name == "tensor_name":
            arg = calls.rename_keyword(arg, "name")
        args.append(arg)
    positional = calls.positional(args)
    if len(positional) > 2:
        if not calls.is_true(positional[2]):
            return None
        args.remove(positional[2])
    return calls.call_to(call, support.helper_name(kind), calls.without_trailing_comma(call, args))


class RemoveParametrizationsUnparametrized(Rule):
    code = "WN104"
    title = "remove_parametrizations(..., leave_parametrized=False) on a weight-normed tensor"
    severity = Severity.ERROR
    applicability = Applicability.UNSAFE
    VALID = (
        Valid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
            "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight', leave_parametrized=True)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
            "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight', leave_parametrized=False)\n",
            expected_replacement=(
                "import torch\n"
                "from torch.nn.utils.parametrizations import weight_norm\n"
                "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
                "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight', leave_parametrized=True)\n"
            ),
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style != MODERN or not removal.leave_parametrized_false:
                continue
            if MODERN in context.styles_for(summary, removal.site.unit, WEIGHT_NORM):
                witness = context.witness(summary, removal.site.unit, WEIGHT_NORM, MODERN)
                cited = f" ({witness.cite()})" if witness is not None else ""
                yield Candidate(
                    self.code,
                    removal.site,
                    f"leave_parametrized=False cannot restore a weight-normed tensor{cited} (its two originals, g and v, "
                    "are not one tensor): the call always raises; use leave_parametrized=True to fold",
                    Fix(leave_parametrized_true, WEIGHT_NORM),
                )


class RemoveParametrizationsNoName(Rule):
    code = "WN105"
    title = "remove_parametrizations called without the tensor name"
    severity = Severity.ERROR
    applicability = Applicability.UNSAFE
    VALID = (
        Valid("import torch\ndef strip(m):\n    torch.nn.utils.parametrize.remove_parametrizations(m, 'weight')\n"),
    )
    INVALID = (
        Invalid(
            "import torch\ndef strip(m):\n    torch.nn.utils.parametrize.remove_parametrizations(m)\n",
            expected_replacement=(
                "import torch\n"
                "def strip(m):\n"
                '    torch.nn.utils.parametrize.remove_parametrizations(m, "weight")\n'
            ),
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style == MODERN and removal.missing_tensor_name:
                yield Candidate(
                    self.code,
                    removal.site,
                    f"{removal.api} needs the tensor name (e.g. \"weight\"): without it the call raises TypeError",
                    Fix(add_tensor_name, WEIGHT_NORM),
                )


class ModernRemoveOnLegacyNorm(Rule):
    code = "WN107"
    title = "remove_parametrizations on a module whose weight norm is the legacy hook"
    severity = Severity.ERROR
    applicability = Applicability.SAFE
    VALID = (
        Valid(
            "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
            "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n"
        ),
        Valid(
            "import torch\nfrom torch.nn.utils import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))  # noqa: WN103\n"
            "if torch.nn.utils.parametrize.is_parametrized(conv):\n"
            "    torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.nn.utils import weight_norm\n"
            "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))  # noqa: WN103\n"
            "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\n",
            expected_replacement=(
                "import torch\n"
                "from torch.nn.utils import weight_norm\n"
                "\n"
                "\n"
                + WEIGHT_NORM_HELPER_TEXT
                + "\n"
                "\n"
                "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))  # noqa: WN103\n"
                "_remove_weight_norm_any_spelling(conv, 'weight')\n"
            ),
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for removal in summary.removals:
            if removal.style != MODERN or removal.guard != "none":
                continue
            unit = removal.site.unit
            if context.styles_for(summary, unit, OTHER):
                continue  # it may be removing some other parametrization
            reaching = {kind: context.styles_for(summary, unit, kind) for kind in (WEIGHT_NORM, SPECTRAL_NORM)}
            if any(MODERN in styles for styles in reaching.values()):
                continue  # it may be removing that parametrization (a modern weight or spectral norm)
            for kind in (WEIGHT_NORM, SPECTRAL_NORM):
                if reaching[kind] == frozenset({LEGACY}):
                    fixable = not removal.star_args and not removal.leave_parametrized_false
                    witness = context.witness(summary, unit, kind, LEGACY)
                    cited = f" ({witness.cite()})" if witness is not None else ""
                    yield Candidate(
                        self.code,
                        removal.site,
                        f"{removal.api} on a module whose {kind} is the legacy forward-pre-hook{cited}: it raises "
                        "ValueError (no parametrization) and folds nothing",
                        Fix(call_helper_from_modern, kind, helper=True, torch=True) if fixable else None,
                    )
                    break
