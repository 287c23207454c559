"""The finding codes the exported-program entrance emits (WN4xx), declared as data."""

from __future__ import annotations

from ..common.findings import CodeInfo, Severity

FUSED = CodeInfo("WN401", "weight norm computed at run time in a torch.export program", Severity.WARNING)
DECOMPOSED = CodeInfo("WN402", "decomposed weight norm (norm/div/mul) computed at run time in a torch.export program", Severity.WARNING)
AOTI_PAIR = CodeInfo("WN403", "weight-norm pair among an AOTInductor package's constants", Severity.WARNING, applicability=None)

CODES: tuple[CodeInfo, ...] = (FUSED, DECOMPOSED, AOTI_PAIR)
BY_CODE: dict[str, CodeInfo] = {info.code: info for info in CODES}
