"""Read a fixed checkpoint back before it replaces anything (verify before commit).

Each writer hands :func:`wnaudit.common.atomic.atomic_writer` a verifier built
here.  It opens the complete, fsynced temporary file as a reader would and
checks it against what the fix meant to write: every folded tensor equal, bit
for bit, to what the fold computed; every other entry byte-identical to the
input; nothing missing, nothing extra.  A mismatch raises
:class:`CheckpointError`, the temporary file is dropped and the original stays.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Mapping

from .errors import CheckpointError
from .safetensors_io import COPY_CHUNK, Header, read_header_from, tensor_view


class VerificationError(CheckpointError):
    """The file written does not read back as what was meant; nothing was replaced."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"verification of the fixed file failed ({problem}); the original is unchanged")


def digest(data: Any) -> str:
    """A strong digest of a buffer (a folded tensor's bytes), kept instead of the tensor."""
    return hashlib.blake2b(memoryview(data), digest_size=32).hexdigest()


def tensor_digest(tensor: Any) -> str:
    return digest(tensor_view(tensor))


# --------------------------------------------------------------------------
# safetensors: header, folded digests, untouched byte ranges
# --------------------------------------------------------------------------


@dataclass
class SafetensorsExpectation:
    """What a rewritten safetensors file must hold, entry by entry, in order."""

    source: BinaryIO
    source_header: Header
    #: new name -> (dtype, shape, digest of the folded bytes)
    folded: dict[str, tuple[str, tuple[int, ...], str]] = field(default_factory=dict)
    #: names of entries copied unchanged from the source
    kept: list[str] = field(default_factory=list)

    def __call__(self, path: Path) -> None:
        with open(path, "rb") as written:
            header = read_header_from(written)
            expected = set(self.folded) | set(self.kept)
            if set(header.entries) != expected:
                missing = sorted(expected - set(header.entries))[:3]
                extra = sorted(set(header.entries) - expected)[:3]
                raise VerificationError(f"entries differ: missing {missing}, unexpected {extra}")
            if header.metadata != self.source_header.metadata:
                raise VerificationError("__metadata__ differs")
            for name, (dtype, shape, want) in self.folded.items():
                entry = header.entries[name]
                if (entry.dtype, entry.shape) != (dtype, shape):
                    raise VerificationError(f"{name} reads back as {entry.dtype} {list(entry.shape)}")
                if _range_digest(written, header.data_start + entry.begin, entry.nbytes) != want:
                    raise VerificationError(f"{name} does not read back as the folded tensor")
            for name in self.kept:
                old, new = self.source_header.entries[name], header.entries[name]
                if (old.dtype, old.shape) != (new.dtype, new.shape):
                    raise VerificationError(f"{name} changed dtype or shape")
                if not _same_range(
                    self.source, self.source_header.data_start + old.begin, written, header.data_start + new.begin, old.nbytes
                ):
                    raise VerificationError(f"{name} is not byte-identical to the input")


def _range_digest(handle: BinaryIO, offset: int, size: int) -> str:
    hasher = hashlib.blake2b(digest_size=32)
    handle.seek(offset)
    remaining = size
    while remaining:
        chunk = handle.read(min(COPY_CHUNK, remaining))
        if not chunk:
            raise VerificationError("the file is shorter than its header says")
        hasher.update(chunk)
        remaining -= len(chunk)
    return hasher.hexdigest()


def _same_range(left: BinaryIO, left_offset: int, right: BinaryIO, right_offset: int, size: int) -> bool:
    done = 0
    while done < size:
        step = min(COPY_CHUNK, size - done)
        left.seek(left_offset + done)
        right.seek(right_offset + done)
        a, b = left.read(step), right.read(step)
        if len(a) != step or a != b:
            return False
        done += step
    return True


# --------------------------------------------------------------------------
# torch.save files: the whole object, compared structurally
# --------------------------------------------------------------------------


def torch_verifier(expected: Any, load: Any, folded: Mapping[int, tuple[str, tuple[int, ...], str]] | None = None) -> Any:
    """A verifier that loads the written file with ``load(path)`` and compares it to ``expected``.

    ``expected`` is the object the fix meant to save: folded tensors as
    computed, every other value the very object read from the input.
    ``folded`` maps ``id`` of a stand-in in ``expected`` to the dtype, shape and
    digest of the folded tensor written in its place (streaming writes keep no
    folded tensor in memory).
    """

    def verify(path: Path) -> None:
        written = load(path)
        problem = first_difference(expected, written, (), folded or {})
        if problem is not None:
            raise VerificationError(problem)

    return verify


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def same_bits(a: Any, b: Any) -> bool:
    """Two tensors with the same dtype, shape and bytes (NaNs compare by their bits)."""
    import torch

    if a.dtype != b.dtype or a.shape != b.shape or a.device != b.device:
        return False
    if type(a) is not type(b) or getattr(a, "requires_grad", False) != getattr(b, "requires_grad", False):
        return False
    if a.device.type == "meta":  # no data: dtype, shape and device are all there is to compare
        return a.stride() == b.stride()
    if a.is_quantized or a.is_sparse or a.numel() == 0:
        return bool(torch.equal(a, b)) if a.numel() else True
    flat_a, flat_b = a.detach().contiguous().reshape(-1), b.detach().contiguous().reshape(-1)
    return bool(torch.equal(flat_a.view(torch.uint8), flat_b.view(torch.uint8)))


Folded = Mapping[int, tuple[str, tuple[int, ...], str]]
_Pending = list[tuple[Any, Any, tuple[str, ...]]]


def first_difference(expected: Any, actual: Any, location: tuple[str, ...], folded: Folded | None = None) -> str | None:
    """Where ``actual`` differs from ``expected`` (None when they are the same); iterative."""
    stack: _Pending = [(expected, actual, location)]
    seen: set[tuple[int, int]] = set()
    folded = folded or {}
    while stack:
        want, got, where = stack.pop()
        if id(want) in folded:
            problem = _folded_difference(folded[id(want)], got)
        elif _is_tensor(want):
            problem = None if _is_tensor(got) and same_bits(want, got) else "does not read back bit-identical"
        elif (id(want), id(got)) in seen:
            continue
        else:
            seen.add((id(want), id(got)))
            problem = _container_difference(want, got, where, stack)
        if problem is not None:
            name = ".".join(where) or "<root>"
            return f"{name}{' ' if problem.startswith('does') else ': '}{problem}"
    return None


def _folded_difference(record: tuple[str, tuple[int, ...], str], got: Any) -> str | None:
    """A folded tensor reads back with the dtype, shape and digest the fold computed."""
    dtype, shape, want_digest = record
    if not _is_tensor(got) or str(got.dtype).removeprefix("torch.") != dtype or tuple(got.shape) != shape:
        return "does not read back as the folded tensor"
    if tensor_digest(got) != want_digest:
        return "does not read back as the folded tensor"
    return None


def _container_difference(want: Any, got: Any, where: tuple[str, ...], stack: _Pending) -> str | None:
    """Compare one non-tensor value; a container's children go on ``stack``."""
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping) or list(want.keys()) != list(got.keys()):
            return "the keys differ"
        stack.extend((want[k], got[k], (*where, str(k))) for k in want)
    elif isinstance(want, (list, tuple)):
        if type(got) is not type(want) or len(got) != len(want):
            return "the sequence differs"
        stack.extend((w, g, (*where, str(i))) for i, (w, g) in enumerate(zip(want, got)))
    elif _same_leaf(want, got):
        return None
    elif type(want) is type(got) and hasattr(want, "__dict__") and hasattr(got, "__dict__"):
        # a trusted pickle's object (a module, a config) without value equality: compare its state
        stack.append((vars(want), vars(got), where))
    else:
        return "the value differs"
    return None


def _same_leaf(want: Any, got: Any) -> bool:
    if isinstance(want, float) and isinstance(got, float) and math.isnan(want) and math.isnan(got):
        return True
    try:
        return bool(type(want) is type(got) and want == got)
    except Exception:  # noqa: BLE001 - an object without a usable ==: compare by repr
        return repr(want) == repr(got)
