"""The module entrance: audit a loaded ``torch.nn.Module`` (WN2xx findings)."""

from __future__ import annotations

from .inspector import assert_folded, audit_module

__all__ = ["assert_folded", "audit_module"]
