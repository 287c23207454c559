"""Recognise checkpoint files by their first bytes, without torch.

HiFi-GAN style checkpoints are often named ``g_00500000`` with no extension,
so extensions alone are not enough.
"""

from __future__ import annotations

import struct
from pathlib import Path

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".safetensors")
INDEX_SUFFIX = ".index.json"

_ZIP_MAGIC = b"PK\x03\x04"
#: Legacy (non-zip) torch.save files start with a pickled magic number.
_LEGACY_TORCH_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"


def is_checkpoint_name(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith(INDEX_SUFFIX) or path.suffix.lower() in CHECKPOINT_SUFFIXES


def looks_like_checkpoint(path: Path) -> bool:
    """True when the file starts like a torch zip, a legacy torch file or safetensors."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError:
        return False
    if head.startswith(_ZIP_MAGIC) or head.startswith(_LEGACY_TORCH_MAGIC[:3]):
        return True
    if len(head) >= 9:
        (header_size,) = struct.unpack("<Q", head[:8])
        return 0 < header_size < (1 << 27) and head[8:9] == b"{"
    return False
