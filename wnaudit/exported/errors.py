"""The one error type of the exported-program entrance: its message is the whole report line."""

from __future__ import annotations


class ExportedProgramError(Exception):
    """An archive that cannot be read, audited or fixed; ``str()`` is one line naming the problem."""
