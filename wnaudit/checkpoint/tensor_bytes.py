"""A tensor's raw bytes as a buffer, without numpy.

The ``torch`` extra does not bring numpy, and ``Tensor.numpy()`` then fails
("Numpy is not available").  The writers need only the bytes: a
memoryview over the tensor's own memory (zero-copy, kept alive by the view),
or over a byte-swapped copy where the file's byte order differs from this
machine's (a big-endian torch archive).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any


def tensor_view(tensor: Any, byteorder: str = "little") -> memoryview:
    """The tensor's bytes in ``byteorder`` ("little" or "big"), C-contiguous, as a flat byte view."""
    import torch

    flat = tensor.detach().contiguous().reshape(-1)
    if not flat.numel():
        return memoryview(b"")
    if byteorder != sys.byteorder and flat.element_size() > 1:
        flat = flat.view(torch.uint8).reshape(-1, flat.element_size()).flip(1).contiguous().reshape(-1)
    size = flat.numel() * flat.element_size()
    array = (ctypes.c_ubyte * size).from_address(flat.data_ptr())
    array._tensor = flat  # type: ignore[attr-defined]  # the memory stays valid while the view lives
    return memoryview(array).cast("B")
