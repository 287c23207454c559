"""The runtime entrance: what a model computes while it runs (``wnaudit.watch``, the pytest plugin).

Imports the core and ``common/`` only, never another entrance; torch is imported when a watch starts.
"""

from __future__ import annotations

from .watch import Watch, watch

__all__ = ["Watch", "watch"]
