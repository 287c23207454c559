"""The checkpoint audit (WN301-WN303) and fold, for ``.pt .pth .bin .ckpt .safetensors`` and shard indexes.

Importing this package never imports torch: the source lint imports
``wnaudit.checkpoint.sniff`` for discovery, and a safetensors audit reads only
the JSON header.  torch is imported inside the functions that need it.
Nor does it import the audit: discovery imports ``sniff`` on every run, and the audit's
modules (about 15 ms) are imported when a checkpoint is audited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from .audit import audit_checkpoints

__all__ = ["audit_checkpoints"]

__getattr__ = lazy_getattr(__name__, {"audit_checkpoints": (f"{__name__}.audit", "audit_checkpoints")}, globals())
