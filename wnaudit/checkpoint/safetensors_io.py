"""Read a safetensors header without torch; rewrite a file by streaming its bytes.

The audit needs names, dtypes and shapes only, all in the JSON header: reading
it costs one small read and no torch import.  The fix copies every untouched
tensor's bytes straight from the old file (no decode), so it runs at nearly
the speed of a file copy and never holds the whole checkpoint in memory.

Layout: an 8-byte little-endian header length N, N bytes of JSON
(``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}``,
padded with spaces), then the data buffer the offsets point into.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Mapping, cast

from .tensor_bytes import tensor_view as _tensor_view
from .errors import CheckpointError
from .sniff import MAX_SAFETENSORS_HEADER

METADATA_KEY = "__metadata__"
#: Bytes per element of each safetensors dtype.
DTYPE_SIZES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1,
    "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
}
#: Bytes copied per read when streaming untouched data.
COPY_CHUNK = 16 * 1024 * 1024
_HEADER_ALIGNMENT = 8


@dataclass(frozen=True)
class TensorEntry:
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin


@dataclass(frozen=True)
class Header:
    """A parsed safetensors header; ``data_start`` is the file offset of the data buffer."""

    entries: dict[str, TensorEntry]
    metadata: dict[str, str] | None
    data_start: int


def read_header(path: Path) -> Header:
    """Parse and validate the header; raises :class:`CheckpointError` if it is corrupt."""
    with open(path, "rb") as handle:
        return read_header_from(handle)


def read_header_from(handle: BinaryIO) -> Header:
    """Like :func:`read_header`, from an open file (so later reads see the same file)."""
    handle.seek(0)
    size_field = handle.read(8)
    if len(size_field) < 8:
        raise CheckpointError("corrupt safetensors header: file shorter than the 8-byte header length")
    (length,) = struct.unpack("<Q", size_field)
    file_size = os.fstat(handle.fileno()).st_size
    if length > MAX_SAFETENSORS_HEADER or 8 + length > file_size:
        raise CheckpointError(f"corrupt safetensors header: header length {length} exceeds the file ({file_size} bytes)")
    raw = handle.read(length)
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"corrupt safetensors header: not valid JSON ({error})") from error
    except RecursionError as error:
        raise CheckpointError("corrupt safetensors header: JSON nested too deeply") from error
    if not isinstance(document, dict):
        raise CheckpointError("corrupt safetensors header: not a JSON object")
    metadata = document.pop(METADATA_KEY, None)
    if metadata is not None and not (isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        raise CheckpointError("corrupt safetensors header: __metadata__ must map strings to strings")
    data_size = file_size - 8 - length
    entries = {name: _entry(name, info, data_size) for name, info in document.items()}
    _check_layout(entries, data_size)
    return Header(entries, metadata, 8 + length)


def _check_layout(entries: dict[str, TensorEntry], data_size: int) -> None:
    """Tensors must tile the data buffer exactly: no overlap, no gap (as safetensors requires)."""
    position = 0
    for name, entry in sorted(entries.items(), key=lambda item: (item[1].begin, item[1].end)):
        if entry.begin != position:
            problem = "overlaps another tensor" if entry.begin < position else "leaves a gap before it"
            raise CheckpointError(f"corrupt safetensors header: entry {name!r} {problem}")
        position = entry.end
    if position != data_size:
        raise CheckpointError(f"corrupt safetensors header: tensors cover {position} of the {data_size} data bytes")


def _entry(name: str, info: Any, data_size: int) -> TensorEntry:
    try:
        dtype, shape, (begin, end) = info["dtype"], tuple(info["shape"]), info["data_offsets"]
    except (TypeError, KeyError, ValueError) as error:
        raise CheckpointError(f"corrupt safetensors header: entry {name!r} lacks dtype/shape/data_offsets") from error
    if dtype not in DTYPE_SIZES or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise CheckpointError(f"corrupt safetensors header: entry {name!r} has dtype {dtype!r} / shape {list(shape)}")
    numel = 1
    for size in shape:
        numel *= size
    fits = isinstance(begin, int) and isinstance(end, int) and 0 <= begin <= end <= data_size
    if not fits or end - begin != numel * DTYPE_SIZES[dtype]:
        raise CheckpointError(f"corrupt safetensors header: entry {name!r} has data offsets {[begin, end]} that do not fit")
    return TensorEntry(dtype, shape, begin, end)


_TORCH_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def read_tensors(handle: BinaryIO, header: Header, names: set[str]) -> dict[str, Any]:
    """The named float tensors, read from the open file (only their own bytes)."""
    import torch

    tensors = {}
    for name in names:
        entry = header.entries[name]
        if entry.dtype not in _TORCH_DTYPES:
            raise CheckpointError(f"{name}: cannot fold a tensor of dtype {entry.dtype}")
        handle.seek(header.data_start + entry.begin)
        data = bytearray(entry.nbytes)
        if cast(Any, handle).readinto(data) != entry.nbytes:  # one copy, straight into the tensor's buffer
            raise CheckpointError(f"{name}: file shorter than its header says")
        dtype = getattr(torch, _TORCH_DTYPES[entry.dtype])
        flat = torch.frombuffer(data, dtype=dtype) if data else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(entry.shape)
    return tensors


def torch_dtype_name(tensor: Any) -> str:
    """The safetensors dtype string of a torch tensor."""
    import torch

    names = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
    try:
        return names[tensor.dtype]
    except KeyError:
        raise CheckpointError(f"cannot store a folded tensor of dtype {tensor.dtype} in safetensors") from None


def tensor_view(tensor: Any) -> memoryview:
    """The raw little-endian bytes of a tensor, as safetensors stores them, without copying (nor numpy)."""
    return _tensor_view(tensor, "little")


@dataclass(frozen=True)
class Replacement:
    """A tensor written in place of a stored one, computed only when its turn comes.

    ``dtype``/``shape`` are known up front (the header is written first), so
    a fold never holds more than one folded tensor in memory.
    """

    key: str
    dtype: str
    shape: tuple[int, ...]
    compute: Callable[[], Any]

    @property
    def nbytes(self) -> int:
        numel = 1
        for size in self.shape:
            numel *= size
        return numel * DTYPE_SIZES[self.dtype]

    @classmethod
    def of(cls, key: str, tensor: Any) -> "Replacement":
        return cls(key, torch_dtype_name(tensor), tuple(tensor.shape), lambda: tensor)


def rewrite(
    source: BinaryIO,
    header: Header,
    replacements: Mapping[str, Replacement],
    dropped: set[str],
    target: BinaryIO,
    progress: Callable[[int], None] = lambda n: None,
) -> None:
    """Write the open ``source`` file to ``target`` with edits, keeping ``__metadata__``.

    Reading from the handle the header came from means a file replaced
    meanwhile (a trainer saving a newer checkpoint) is never mixed in.

    ``replacements`` maps a stored key to the :class:`Replacement` written in
    its place; keys in ``dropped`` are left out; every other tensor's bytes are
    copied unchanged, without decoding.
    """
    layout: list[tuple[str, str, tuple[int, ...], int, Any]] = []  # name, dtype, shape, size, source
    for name, entry in sorted(header.entries.items(), key=lambda item: item[1].begin):
        if name in dropped:
            continue
        if name in replacements:
            new = replacements[name]
            layout.append((new.key, new.dtype, new.shape, new.nbytes, new))
        else:
            layout.append((name, entry.dtype, entry.shape, entry.nbytes, entry))
    document: dict[str, Any] = {}
    if header.metadata is not None:
        document[METADATA_KEY] = header.metadata
    offset = 0
    for name, dtype, shape, size, _ in layout:
        document[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    encoded = json.dumps(document, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % _HEADER_ALIGNMENT)
    target.write(struct.pack("<Q", len(encoded)))
    target.write(encoded)
    for name, dtype, shape, size, data in layout:
        if isinstance(data, Replacement):
            tensor = data.compute()
            if torch_dtype_name(tensor) != dtype or tuple(tensor.shape) != shape:
                raise CheckpointError(f"{name}: folded to {tensor.dtype} {list(tensor.shape)}, not {dtype} {list(shape)}")
            target.write(tensor_view(tensor))
            progress(size)
            continue
        source.seek(header.data_start + data.begin)
        remaining = size
        while remaining:
            chunk = source.read(min(COPY_CHUNK, remaining))
            if not chunk:
                raise CheckpointError("file shrank while being rewritten")
            target.write(chunk)
            remaining -= len(chunk)
            progress(len(chunk))
