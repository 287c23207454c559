"""The checkpoint audit (WN301-WN303) and fold, for ``.pt .pth .bin .ckpt .safetensors`` and shard indexes.

Importing this package never imports torch: the source lint imports
``wnaudit.checkpoint.sniff`` for discovery, and a safetensors audit reads only
the JSON header.  torch is imported inside the functions that need it.
"""

from __future__ import annotations

from .audit import audit_checkpoints

__all__ = ["audit_checkpoints"]
