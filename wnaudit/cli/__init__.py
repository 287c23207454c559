"""The command line: ``wnaudit [OPTIONS] [PATHS]...`` (see ``command.py``)."""

from __future__ import annotations

from .command import main, run

__all__ = ["main", "run"]
