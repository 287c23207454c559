"""What a workspace is told at construction: the configuration its answers depend on (never set on it later)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def _nothing_excluded(path: Path) -> bool:
    """No exclude pattern in force (a workspace built without a config)."""
    return False


def _wn110_off(path: str) -> bool:
    return False


@dataclass(frozen=True)
class WorkspaceSettings:
    """The configuration a workspace's answers depend on (``pipeline/link.new_workspace`` builds it from ``Config``)."""

    #: ``[tool.wnaudit] fix-fold``: what WN110's fix calls (``Config.fix_fold``).
    fix_fold: str = "auto"
    #: ``exclude`` / ``extend-exclude``: an excluded file is never WN110's inference site nor its fold's home
    #: (``Config.is_path_excluded``).
    excluded: Callable[[Path], bool] = _nothing_excluded
    #: ``[tool.wnaudit] serving``: declared serving entry points, and the config root they resolve from.
    serving_entries: tuple[str, ...] = ()
    config_root: Path = field(default_factory=Path.cwd)
    #: Whether WN110 runs for a file (by its path): then its analysis also reads its serving facts.
    serving_on: Callable[[str], bool] = _wn110_off
