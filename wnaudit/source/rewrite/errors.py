"""The one error a fix raises: imported by the fixer and the rewriting alike (no libcst here)."""

from __future__ import annotations


class FixError(RuntimeError):
    """A fix could not be applied; the file is left as it was."""
