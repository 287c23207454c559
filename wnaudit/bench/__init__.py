"""``wnaudit bench``: measure, on a user's own model, what folding weight norms saves.

Importing this package does not import torch (the CLI registers the command
unconditionally and the source lint must stay torch-free); :func:`measure`
and the arm builders import it on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_getattr
from .errors import BenchError
from .result import BenchResult, Settings
from .stats import Interval, PairedSummary, Verdict

__all__ = ["BenchError", "BenchResult", "Interval", "PairedSummary", "Settings", "Verdict", "independent_copy", "measure"]

_LAZY = {
    "measure": ("wnaudit.bench.runner", "measure"),
    "independent_copy": ("wnaudit.bench.arms", "independent_copy"),
}

if TYPE_CHECKING:  # pragma: no cover
    from .arms import independent_copy
    from .runner import measure


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
