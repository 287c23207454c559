"""The random inputs of ``wnaudit bench``, refused before allocation when they cannot fit in memory.

``--input-shape 100000,100000,100000`` asks for 4 PB; torch would try to allocate it and fail with a
traceback (or the kernel would kill the process).  The inputs' bytes are computed from the shapes
first and compared with the machine's physical memory.
"""

from __future__ import annotations

import math
import os
from typing import Any

from .errors import BenchError

#: ``torch.randn`` makes float32 tensors (a ``--dtype`` cast comes later).
_BYTES_PER_ELEMENT = 4


def physical_memory() -> int | None:
    """This machine's physical memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_inputs_fit(shapes: list[list[int]], memory: int | None = None) -> None:
    """Raise :class:`BenchError` (one line) when the inputs of ``shapes`` need more bytes than ``memory``."""
    needed = sum(math.prod(shape) for shape in shapes) * _BYTES_PER_ELEMENT
    memory = physical_memory() if memory is None else memory
    if memory is not None and needed > memory:
        shown = " ".join(",".join(map(str, shape)) for shape in shapes)
        raise BenchError(
            f"--input-shape {shown}: the inputs need {needed:,} bytes, more than this machine's memory ({memory:,} bytes); nothing allocated"
        )


def random_inputs(torch: Any, shapes: list[list[int]], seed: int) -> tuple[Any, ...]:
    """One float32 tensor of normal noise per shape, reproducible from ``seed``."""
    check_inputs_fit(shapes)
    generator = torch.Generator().manual_seed(seed)
    try:
        return tuple(torch.randn(*shape, generator=generator) for shape in shapes)
    except (RuntimeError, MemoryError) as error:  # fits the machine, not what is free now
        text = str(error).strip()
        raise BenchError(f"--input-shape: cannot allocate the inputs: {text.splitlines()[0] if text else type(error).__name__}") from None
