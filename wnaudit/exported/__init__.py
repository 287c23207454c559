"""The exported-program entrance: torch.export archives and AOTInductor packages (``.pt2``).

The audit reads the archive's JSON (graph, signature, weights and constants
configs) and an AOTInductor package's generated wrapper source straight from
the zip: nothing from the file is unpickled or run, and torch is not imported.
Only ``--fix`` loads the program with torch (see :mod:`.trust` for when that
needs ``--trust-pickle``).  Imports only :mod:`wnaudit.core` and :mod:`wnaudit.common`.
"""

from __future__ import annotations

from .audit import audit_exported_programs
from .sniff import looks_like_exported_program

__all__ = ["audit_exported_programs", "looks_like_exported_program"]
