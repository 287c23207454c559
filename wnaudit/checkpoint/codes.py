"""The finding codes the checkpoint entrance emits (WN3xx), declared as data."""

from __future__ import annotations

from ..common.findings import CodeInfo, Severity

CODES: tuple[CodeInfo, ...] = (
    CodeInfo("WN301", "modern weight-norm keys stored unfolded in a checkpoint", Severity.WARNING),
    CodeInfo("WN302", "legacy weight-norm keys stored unfolded in a checkpoint", Severity.WARNING),
    CodeInfo("WN303", "spectral-norm keys stored unfolded in a checkpoint", Severity.WARNING),
    CodeInfo("WN304", "half of a stored reparametrization without its other half", Severity.WARNING, applicability=None),
)
BY_CODE: dict[str, CodeInfo] = {info.code: info for info in CODES}
