"""The exported-program entrance: torch.export archives and AOTInductor packages (``.pt2``).

The audit reads the archive's JSON (graph, signature, weights and constants
configs) and an AOTInductor package's generated wrapper source straight from
the zip: nothing from the file is unpickled or run, and torch is not imported.
Only ``--fix`` loads the program with torch (see :mod:`.trust` for when that
needs ``--trust-pickle``).  Imports only :mod:`wnaudit.core` and :mod:`wnaudit.common`.
Discovery imports ``sniff`` on every run; the audit's modules are imported when a program is audited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from .audit import audit_exported_programs
    from .sniff import looks_like_exported_program

_LAZY = {
    "audit_exported_programs": (f"{__name__}.audit", "audit_exported_programs"),
    "looks_like_exported_program": (f"{__name__}.sniff", "looks_like_exported_program"),
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = ["audit_exported_programs", "looks_like_exported_program"]
