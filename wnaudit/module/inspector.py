"""The module inspector: what is still live (WN201-WN204) or half-folded (WN205)."""

from __future__ import annotations

from typing import Any, Iterable

from ..core import torch_api
from ..core.catalogue import FOLD_CALLS, TORCH_WEIGHT_NAME, WEIGHT_LIKE_NAME, Kind
from ..core.exclusion import Exclusion
from ..common.findings import Finding, finding
from ..core.live import LiveReparametrization, find_reparametrizations
from .codes import BY_CODE, HALF_FOLDED

def _live_message(live: LiveReparametrization) -> str:
    message = f"{live.spelling.label} is live on {live.qualified_name}: recomputed on every forward"
    if live.spelling.kind is Kind.WEIGHT_NORM:
        message += ", and in every torch.export program, AOTInductor package or torch.compile artifact made from the module"
    if live.stacked:
        chain = " -> ".join(s.label for s in live.chain)
        message += f"; stacked parametrizations ({chain}) fold only together: wnaudit.fold(model, weight_norm=True, spectral_norm=True, other=True)"
    else:
        message += f"; fold it once at load with {FOLD_CALLS[live.spelling.kind]}"
    return message


def _module_label(module: Any) -> str:
    parametrize = torch_api.parametrize_module()
    return f"<{parametrize.type_before_parametrizations(module).__name__}>"


def audit_module(module: Any, *, path: str | None = None) -> list[Finding]:
    """Report every live reparametrization and every half-done fold in ``module``.

    Reads no parametrized attribute, so a spectral-normed module in training
    mode is left exactly as it was.  ``path`` labels the findings (default:
    ``<ClassName>``).
    """
    return _audit(module, path or _module_label(module), Exclusion())


def _audit(module: Any, label: str, allowed: Exclusion) -> list[Finding]:
    """The findings, less the live reparametrizations of the ``allowed`` submodules."""
    findings: list[Finding] = []
    live_names: set[tuple[int, str]] = set()
    for live in find_reparametrizations(module):
        live_names.add((id(live.owner), live.tensor_name))
        if allowed.name_covering(live.owner) is not None:
            continue
        findings.append(
            finding(BY_CODE[live.spelling.module_code], label, _live_message(live), fixable=True, object=live.qualified_name)
        )
    for owner_name, owner in module.named_modules():
        findings.extend(_half_folded(label, owner, owner_name, live_names))
    return findings


def _is_torch_builtin(owner: Any) -> bool:
    parametrize = torch_api.parametrize_module()
    return parametrize.type_before_parametrizations(owner).__module__.startswith("torch.nn.")


def _half_folded(label: str, owner: Any, owner_name: str, live_names: set[tuple[int, str]]) -> list[Finding]:
    """WN205: a weight that a fold (or a torch remover) left in the wrong form."""
    torch = torch_api.import_torch()
    found: list[Finding] = []

    def report(name: str, problem: str) -> None:
        qualified = f"{owner_name}.{name}" if owner_name else name
        found.append(
            finding(
                HALF_FOLDED,
                label,
                f"{qualified} is {problem}; it should be an nn.Parameter: "
                "fold with wnaudit.fold_weight_norm(model), which keeps it one in any grad mode",
                fixable=False,
                object=qualified,
            )
        )

    for name, tensor in owner.named_parameters(recurse=False, remove_duplicate=False):
        if tensor.is_inference():
            report(name, "an inference tensor (folded under torch.inference_mode())")
    builtin = _is_torch_builtin(owner)
    for name, tensor in owner.named_buffers(recurse=False, remove_duplicate=False):
        # torch's own modules keep no buffer under a weight's name (``weight``,
        # ``in_proj_weight``, ``weight_hh_l0``): one there is a remover's leftover.
        # A user's module may, so only the usual weight names count there.
        if not (WEIGHT_LIKE_NAME.match(name) or (builtin and TORCH_WEIGHT_NAME.match(name))):
            continue
        if tensor.is_inference():
            report(name, "an inference-tensor buffer (folded under torch.inference_mode())")
        elif builtin:
            report(name, "a buffer (folded under torch.no_grad())")
    recomputed = torch_api.pruned_tensor_names(owner)
    for name, value in vars(owner).items():
        if (
            name not in recomputed
            and isinstance(value, torch.Tensor)
            and WEIGHT_LIKE_NAME.match(name)
            and (id(owner), name) not in live_names
        ):
            report(name, "a plain tensor attribute, not a registered parameter")
    return found


def assert_folded(module: Any, allow: str | Iterable[str] = ()) -> None:
    """Raise ``AssertionError`` naming every leftover; for users' own test suites.

    ``allow`` names submodules whose live reparametrizations are expected (a
    partial fold's ``exclude``); a half-done fold (WN205) fails anywhere.  A
    name matching no submodule raises ``ExcludeError`` (a ``ValueError``).
    """
    allowed = Exclusion.of(module, allow, argument="allow")
    findings = _audit(module, _module_label(module), allowed)
    if findings:
        lines = "\n".join(f"  {f.code} {f.object}: {f.message}" for f in findings)
        kept = f" (allowed: {', '.join(allowed.names)})" if allowed.names else ""
        raise AssertionError(f"{len(findings)} reparametrization leftover(s) in {_module_label(module)}{kept}:\n{lines}")

