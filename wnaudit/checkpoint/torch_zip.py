"""Fold a torch zip checkpoint by streaming: untouched records copied in the kernel.

``torch.save`` of the folded object would re-serialise every tensor through
Python and hold every folded tensor at once.  This writer instead:

* pickles the new ``data.pkl`` itself, with ``torch.save``'s storage ids: an
  untouched tensor keeps its storage's record, a folded one gets a new record
  (its value is not needed to write the pickle, only its dtype and shape);
* copies every large record it keeps (untouched storages) from the input
  file with ``os.copy_file_range`` (falling back to ``os.sendfile``, then to
  reads), so those bytes never enter Python; small records (``byteorder``,
  ``version``, a bias of a few floats: up to 64 KiB) and the headers are read
  and gathered into few large writes, since 100,000 records one by one were
  300,000 system calls;
* computes each folded tensor only when its record is written, and drops it
  after: one folded tensor in memory at a time.

Which record a loaded (memory-mapped) storage came from is learnt while
torch loads the file, from the storage pointers, and checked against the
record offsets; anything unexpected makes the caller use ``torch.save``.
"""

from __future__ import annotations

import collections
import errno
import io
import logging
import os
import pickle
import struct
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..core.torch_api import resolve
from .errors import CheckpointError
from .zip_layout import STORAGE_ELEMENT_SIZES, Layout

logger = logging.getLogger(__name__)

#: torch aligns each record's data to this many bytes (so memory-mapped tensors are aligned).
ALIGNMENT = 64
_REBUILD_TENSOR = "torch._utils._rebuild_tensor_v2"
#: Sizes and offsets from this on need zip64 fields; the 32-bit fields then hold the sentinel.
_ZIP64_LIMIT = 0xFFFFFFFF
_ZIP64_SENTINEL = 0xFFFFFFFF
#: Records up to this size are read and written through the output buffer rather than copied in the kernel.
_SMALL_RECORD = 64 * 1024
_FLUSH_BYTES = 1 << 20
_STORAGE_NAMES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
}


class NotStreamable(Exception):
    """This file must be written with ``torch.save``; the message says why (for the debug log)."""


@dataclass
class StorageKeys:
    """Which archive record each loaded storage came from, learnt while torch loads the file."""

    seen: list[tuple[int, int]] = field(default_factory=list)  # (data pointer, nbytes) in load order
    by_pointer: dict[int, str] = field(default_factory=dict)
    #: Set by the loader when it memory-mapped the archive (only then can records be copied).
    layout: Layout | None = None
    loaded_stat: Any = None

    def restore_location(self, storage: Any, location: str) -> Any:
        """A ``map_location`` for ``torch.load``: records each storage, leaves it on the CPU."""
        self.seen.append((storage.data_ptr(), storage.nbytes()))
        return storage

    def resolve(self, layout: Layout) -> None:
        """Match pointers to records; raises :class:`NotStreamable` unless every one fits."""
        keys = [key for key, ref in layout.storages.items() if ref.numel * STORAGE_ELEMENT_SIZES[ref.type_name] > 0]
        loaded = [(pointer, size) for pointer, size in self.seen if size > 0]
        if len(keys) != len(loaded):
            raise NotStreamable(f"{len(loaded)} storages loaded for {len(keys)} records")
        base: int | None = None
        for key, (pointer, size) in zip(keys, loaded):
            record = layout.storage_record(key)
            assert record is not None  # checked by zip_layout
            ref = layout.storages[key]
            if size != ref.numel * STORAGE_ELEMENT_SIZES[ref.type_name]:
                raise NotStreamable(f"storage {key} loaded with {size} bytes")
            if base is None:
                base = pointer - record.data_offset
            if pointer - record.data_offset != base:
                raise NotStreamable(f"storage {key} is not mapped from its record")
            self.by_pointer[pointer] = key


@dataclass(frozen=True)
class FoldedTensor:
    """Stands in the new object for a folded tensor until its record is written."""

    key: str  # the new storage record's key
    dtype: str  # torch dtype name, e.g. "float32"
    shape: tuple[int, ...]
    compute: Callable[[], Any]

    @property
    def numel(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count

    @property
    def storage_name(self) -> str:
        return _STORAGE_NAMES[self.dtype]

    @property
    def nbytes(self) -> int:
        return self.numel * STORAGE_ELEMENT_SIZES[self.storage_name]


@dataclass(frozen=True)
class _NewStorage:
    folded: FoldedTensor


def _contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class _Pickler(pickle.Pickler):
    """Pickles the new object as ``torch.save`` does, naming kept storages by their old records."""

    def __init__(self, handle: Any, layout: Layout, keys: StorageKeys) -> None:
        super().__init__(handle, protocol=2)
        import torch

        self._torch = torch
        self._layout = layout
        self._keys = keys
        self.kept: list[str] = []
        self._kept_keys: set[str] = set()
        self.folded: list[FoldedTensor] = []

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, FoldedTensor):
            size = self._torch.Size(obj.shape)
            return (resolve(_REBUILD_TENSOR), (_NewStorage(obj), 0, size, _contiguous_strides(obj.shape), False, collections.OrderedDict()))
        return NotImplemented

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _NewStorage):
            self.folded.append(obj.folded)
            storage_class = getattr(self._torch, obj.folded.storage_name)
            return ("storage", storage_class, obj.folded.key, "cpu", obj.folded.numel)
        if isinstance(obj, self._torch.TypedStorage):
            key = self._keys.by_pointer.get(obj.data_ptr())
            if key is None:
                if obj.nbytes() == 0:
                    raise NotStreamable("an empty storage")  # torch.save gives it a record of its own
                raise NotStreamable("a storage that is not a record of the input")
            ref = self._layout.storages[key]
            if key not in self._kept_keys:  # a set: a list's ``in`` made this quadratic in storages
                self._kept_keys.add(key)
                self.kept.append(key)
            return ("storage", getattr(self._torch, ref.type_name), key, "cpu", ref.numel)
        return None


def first_free_key(layout: Layout) -> int:
    """The first storage number after every one the input uses; folded tensors are numbered on from it."""
    return max((int(key) for key in layout.storages if key.isdigit()), default=-1) + 1


def new_key(layout: Layout, index: int) -> str:
    """The key of the ``index``-th folded tensor (compute :func:`first_free_key` once for many)."""
    return str(first_free_key(layout) + index)


def pickle_object(obj: Any, layout: Layout, keys: StorageKeys) -> tuple[bytes, list[str], list[FoldedTensor]]:
    """The new ``data.pkl`` and the records it needs: kept storage keys, folded tensors in order."""
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, layout, keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notice that TypedStorage (which tensors still pickle) is deprecated
        pickler.dump(obj)
    return buffer.getvalue(), pickler.kept, pickler.folded


# --------------------------------------------------------------------------
# the zip writer
# --------------------------------------------------------------------------


@dataclass
class _Entry:
    name: bytes
    offset: int
    size: int
    crc: int


class ZipStreamWriter:
    """Writes a stored (uncompressed) zip to a file descriptor, records aligned like torch's."""

    def __init__(self, fd: int, progress: Callable[[int], None]) -> None:
        self._fd = fd
        self._position = os.lseek(fd, 0, os.SEEK_CUR)
        self._entries: list[_Entry] = []
        self._progress = progress
        #: Headers and small records gathered into few large writes (100,000 records were 300,000 syscalls).
        self._pending = bytearray()

    def _write(self, data: bytes | memoryview) -> None:
        size = len(memoryview(data).cast("B"))
        self._position += size
        if size >= _FLUSH_BYTES:  # a large folded tensor goes straight out, never copied into the buffer
            self._flush()
            _write_all(self._fd, data)
            return
        self._pending += data
        if len(self._pending) >= _FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        _write_all(self._fd, self._pending)
        self._pending.clear()

    def _local_header(self, name: bytes, size: int, crc: int) -> None:
        zip64 = size >= _ZIP64_LIMIT
        extra = struct.pack("<HHQQ", 0x0001, 16, size, size) if zip64 else b""
        start = self._position + 30 + len(name) + len(extra)
        padding = -(start + 4) % ALIGNMENT  # a padding extra field (id "FB", as torch writes it)
        extra += struct.pack("<HH", 0x4246, padding) + b"Z" * padding
        stored = _ZIP64_SENTINEL if zip64 else size
        self._entries.append(_Entry(name, self._position, size, crc))
        self._write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 45 if zip64 else 20, 0, 0, 0, 0x21, crc, stored, stored, len(name), len(extra)))
        self._write(name + extra)

    def add_bytes(self, name: str, data: bytes | memoryview) -> None:
        self._local_header(name.encode(), len(memoryview(data).cast("B")), zlib.crc32(data))
        self._write(data)
        self._progress(len(memoryview(data).cast("B")))

    def add_copy(self, name: str, source_fd: int, offset: int, size: int, crc: int) -> None:
        """A record copied from ``source_fd`` (in the kernel unless small); ``crc`` is the input's, checked on read-back."""
        self._local_header(name.encode(), size, crc)
        if size <= _SMALL_RECORD:  # a bias of a few floats: one pread, no syscalls of its own on the output
            data = os.pread(source_fd, size, offset)
            if len(data) != size:
                raise CheckpointError("file shrank while being rewritten")
            self._write(data)
            self._progress(size)
            return
        self._flush()
        _copy_range(source_fd, offset, self._fd, size, self._progress)
        self._position = os.lseek(self._fd, 0, os.SEEK_CUR)

    def finish(self) -> None:
        directory_start = self._position
        for entry in self._entries:
            zip64 = entry.size >= _ZIP64_LIMIT or entry.offset >= _ZIP64_LIMIT
            extra = struct.pack("<HHQQQ", 0x0001, 24, entry.size, entry.size, entry.offset) if zip64 else b""
            size = _ZIP64_SENTINEL if zip64 else entry.size
            offset = _ZIP64_SENTINEL if zip64 else entry.offset
            self._write(
                struct.pack(
                    "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 45, 45 if zip64 else 20, 0, 0, 0, 0x21, entry.crc,
                    size, size, len(entry.name), len(extra), 0, 0, 0, 0, offset,
                )
            )
            self._write(entry.name + extra)
        directory_size = self._position - directory_start
        count = len(self._entries)
        if count >= 0xFFFF or directory_start >= _ZIP64_LIMIT or directory_size >= _ZIP64_LIMIT:
            end64 = self._position
            self._write(struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, directory_size, directory_start))
            self._write(struct.pack("<4sIQI", b"PK\x06\x07", 0, end64, 1))
            self._write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, _ZIP64_SENTINEL, _ZIP64_SENTINEL, 0))
        else:
            self._write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, directory_size, directory_start, 0))
        self._flush()


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    with memoryview(data) as whole:
        view = whole.cast("B")
        while view:
            view = view[os.write(fd, view):]


def _copy_range(source_fd: int, offset: int, target_fd: int, size: int, progress: Callable[[int], None]) -> None:
    """Copy ``size`` bytes at ``offset`` of the source to the target's position, in the kernel."""
    remaining = size
    for copy, unsupported in _kernel_copies(source_fd, target_fd):
        while remaining:
            try:
                copied = copy(offset, min(remaining, 1 << 30))
            except OSError as error:
                if error.errno not in unsupported:
                    raise
                break  # this system cannot copy this way: try the next one
            if copied == 0:
                raise CheckpointError("file shrank while being rewritten")
            offset += copied
            remaining -= copied
            progress(copied)
    while remaining:  # no in-kernel copy on this system
        chunk = os.pread(source_fd, min(remaining, 16 << 20), offset)
        if not chunk:
            raise CheckpointError("file shrank while being rewritten")
        view = memoryview(chunk)
        while view:
            view = view[os.write(target_fd, view):]
        offset += len(chunk)
        remaining -= len(chunk)
        progress(len(chunk))


def _kernel_copies(source_fd: int, target_fd: int) -> list[tuple[Callable[[int, int], int], frozenset[int]]]:
    """The in-kernel ways to copy (offset, count) -> bytes copied, best first, each with the errnos that mean "unsupported"."""
    copies: list[tuple[Callable[[int, int], int], frozenset[int]]] = []
    copy_file_range = getattr(os, "copy_file_range", None)
    if copy_file_range is not None:
        copies.append((
            lambda offset, count: copy_file_range(source_fd, target_fd, count, offset),
            frozenset({errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF}),
        ))
    copies.append((
        lambda offset, count: os.sendfile(target_fd, source_fd, offset, count),
        frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP}),
    ))
    return copies


def write_archive(
    source_fd: int,
    layout: Layout,
    pickled: bytes,
    kept: list[str],
    folded: list[FoldedTensor],
    target_fd: int,
    progress: Callable[[int], None],
    on_folded: Callable[[FoldedTensor, Any], None],
) -> None:
    """The new archive: ``data.pkl``, the input's other small records, kept and folded storages."""
    from .tensor_bytes import tensor_view

    writer = ZipStreamWriter(target_fd, progress)
    prefix = layout.prefix
    writer.add_bytes(f"{prefix}/data.pkl", pickled)
    storage_records = {f"{prefix}/data/{key}" for key in layout.storages}
    for name, record in layout.records.items():
        if name == f"{prefix}/data.pkl" or name in storage_records:
            continue
        writer.add_copy(name, source_fd, record.data_offset, record.file_size, record.crc)
    for key in kept:
        storage = layout.storage_record(key)
        assert storage is not None  # checked by zip_layout
        writer.add_copy(f"{prefix}/data/{key}", source_fd, storage.data_offset, storage.file_size, storage.crc)
    for item in folded:
        tensor = item.compute()
        if str(tensor.dtype).removeprefix("torch.") != item.dtype or tuple(tensor.shape) != item.shape:
            raise CheckpointError(f"folded to {tensor.dtype} {list(tensor.shape)}, not {item.dtype} {list(item.shape)}")
        writer.add_bytes(f"{prefix}/data/{item.key}", tensor_view(tensor, layout.byteorder))  # as the byteorder record says
        on_folded(item, tensor)
        del tensor
    writer.finish()
