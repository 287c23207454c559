"""The finding codes the runtime entrance emits (WN206, WN207), declared as data."""

from __future__ import annotations

from ..common.findings import CodeInfo, Severity

WN206 = CodeInfo("WN206", "reparametrized weight computed during a watched call", Severity.WARNING)
WN207 = CodeInfo(
    "WN207", "hand-written normalization of a parameter recomputed on every call", Severity.WARNING, applicability=None
)

CODES: tuple[CodeInfo, ...] = (WN206, WN207)
