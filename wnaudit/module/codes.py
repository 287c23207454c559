"""The finding codes the module entrance emits (WN2xx), declared as data."""

from __future__ import annotations

from ..common.findings import CodeInfo, Severity

WN201 = CodeInfo("WN201", "weight norm (modern parametrization) live in a loaded module", Severity.WARNING)
WN202 = CodeInfo("WN202", "weight norm (legacy forward-pre-hook) live in a loaded module", Severity.WARNING)
WN203 = CodeInfo("WN203", "spectral norm live in a loaded module", Severity.WARNING)
WN204 = CodeInfo("WN204", "other parametrization live in a loaded module", Severity.WARNING)
HALF_FOLDED = CodeInfo("WN205", "folded weight left as a plain or inference tensor", Severity.ERROR, applicability=None)

CODES: tuple[CodeInfo, ...] = (WN201, WN202, WN203, WN204, HALF_FOLDED)
BY_CODE: dict[str, CodeInfo] = {info.code: info for info in CODES}
