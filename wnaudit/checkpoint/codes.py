"""The finding codes the checkpoint entrance emits (WN3xx), declared as data."""

from __future__ import annotations

from ..common.findings import CodeInfo, Severity

CODES: tuple[CodeInfo, ...] = (
    CodeInfo("WN301", "modern weight-norm keys stored unfolded in a checkpoint", Severity.WARNING),
    CodeInfo("WN302", "legacy weight-norm keys stored unfolded in a checkpoint", Severity.WARNING),
    CodeInfo("WN303", "spectral-norm keys stored unfolded in a checkpoint", Severity.WARNING),
)
BY_CODE: dict[str, CodeInfo] = {info.code: info for info in CODES}
