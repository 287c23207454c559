"""Check a torch zip archive's tensor records against what its ``data.pkl`` says, before any read.

``torch.load(mmap=True)`` maps each storage straight from its record's offset
in the file and trusts the pickle for its size: a record that is compressed
(re-zipped with ``ZIP_DEFLATED`` by a storage pipeline) is then read as
garbage, and a record shorter than its storage is read past its end.  This
module reads the zip directory and the pickle (never tensor data, never
running anything from the file) and says whether every tensor byte the fold
would consume is the byte torch would load:

* each storage's record exists and holds at least ``numel * element size``
  bytes (a shorter one is refused: torch without mmap refuses it too);
* each tensor view (offset, sizes, strides) lies inside its storage;
* every record is stored plainly; otherwise the caller must not memory-map
  it and loads it through torch's own zip reader, which decompresses exactly.

The pickle is read by an *inert* unpickler: every global it names becomes a
stand-in class that records its arguments and runs nothing, so the check
covers any checkpoint (Lightning's hyper-parameters included).
"""

from __future__ import annotations

import collections
import io
import logging
import pickle
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from .errors import CheckpointError
from .zip_directory import zip_infos

#: Bytes per element of each storage class torch pickles (``torch.FloatStorage``...).
STORAGE_ELEMENT_SIZES = {
    "DoubleStorage": 8, "FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2,
    "LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1, "ByteStorage": 1,
    "BoolStorage": 1, "ComplexDoubleStorage": 16, "ComplexFloatStorage": 8,
    "QInt8Storage": 1, "QUInt8Storage": 1, "QInt32Storage": 4, "QUInt4x2Storage": 1, "QUInt2x4Storage": 1,
    "Float8_e4m3fnStorage": 1, "Float8_e5m2Storage": 1, "Float8_e4m3fnuzStorage": 1, "Float8_e5m2fnuzStorage": 1,
    "UInt16Storage": 2, "UInt32Storage": 4, "UInt64Storage": 8,
}
logger = logging.getLogger(__name__)

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_MAGIC = b"PK\x03\x04"
_TENSOR_REBUILDERS = ("_rebuild_tensor", "_rebuild_tensor_v2")
_PARAMETER_REBUILDERS = ("_rebuild_parameter", "_rebuild_parameter_with_state")


@dataclass(frozen=True)
class Record:
    """One zip member: where its bytes start in the file and how they are stored."""

    name: str
    data_offset: int
    file_size: int
    compress_size: int
    compress_type: int
    crc: int

    @property
    def stored(self) -> bool:
        return self.compress_type == zipfile.ZIP_STORED


class StorageRef(NamedTuple):
    """A storage as ``data.pkl`` names it: its record key, class and element count.

    A named tuple (not a frozen dataclass): one is built per tensor of the
    archive, and a tuple is built several times faster.
    """

    key: str
    type_name: str
    numel: int


class ViewRef(NamedTuple):
    """A tensor as ``data.pkl`` builds it: a view into a storage."""

    storage: StorageRef
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]


@dataclass
class Layout:
    """The archive's records and the storages and views its pickle refers to."""

    prefix: str
    records: dict[str, Record]
    storages: dict[str, StorageRef] = field(default_factory=dict)
    views: list[ViewRef] = field(default_factory=list)
    #: False when the pickle does something the inert reader cannot follow, or
    #: the zip directory is not where torch's reader looks for it; then torch's
    #: own (non-mapping) loader must read and judge the file.
    verified: bool = True
    #: The ``byteorder`` record: the byte order of every storage (torch swaps on load).
    byteorder: str = "little"
    #: Bytes before the archive Python's zip reader skipped (then ``records`` is empty).
    prepended: int = 0

    def storage_record(self, key: str) -> Record | None:
        return self.records.get(f"{self.prefix}/data/{key}")

    @property
    def all_stored(self) -> bool:
        """True when every record is stored plainly, so memory-mapping reads the true bytes."""
        return all(record.stored for record in self.records.values())

    @property
    def may_mmap(self) -> bool:
        """Memory-mapping reads exactly the bytes torch's reader would: checked, and nothing compressed."""
        return self.verified and self.all_stored


class _Inert:
    """Stand-in for any global the pickle names: records what it was given, runs nothing."""

    qualified = "?"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args

    def __new__(cls, *args: Any, **kwargs: Any) -> "_Inert":
        return super().__new__(cls)

    def __call__(self, *args: Any, **kwargs: Any) -> "_Inert":
        return _Inert(self, *args)

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __setitem__(self, key: Any, value: Any) -> None:
        self.__dict__.setdefault("items", {})[key] = value

    def append(self, value: Any) -> None:
        self.__dict__.setdefault("values", []).append(value)

    def extend(self, values: Any) -> None:
        for value in values:
            self.append(value)


class _StorageClass:
    def __init__(self, name: str) -> None:
        self.name = name


class _LayoutUnpickler(pickle.Unpickler):
    def __init__(self, handle: BinaryIO, layout: Layout) -> None:
        super().__init__(handle)
        self._layout = layout

    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name in _TENSOR_REBUILDERS:
            return self._rebuild_tensor
        if module == "torch._utils" and name in _PARAMETER_REBUILDERS:
            return lambda data, *rest: data
        if module == "torch" and name == "Size":
            return lambda values=(): tuple(values)
        if module == "torch" and name.endswith("Storage"):
            return _StorageClass(name)
        return type(name, (_Inert,), {"qualified": f"{module}.{name}"})

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise CheckpointError(f"data.pkl names a storage as {pid!r:.60}, not as torch.save does")
        _, storage_class, key, _location, numel = pid
        if not isinstance(storage_class, _StorageClass) or not isinstance(key, str) or not isinstance(numel, int):
            raise CheckpointError(f"data.pkl names a storage as {pid!r:.60}, not as torch.save does")
        storage = StorageRef(key, storage_class.name, numel)
        known = self._layout.storages.setdefault(key, storage)
        if known != storage:
            raise CheckpointError(f"data.pkl describes storage {key} twice, differently")
        return storage

    def _rebuild_tensor(self, storage: Any, offset: Any, size: Any, stride: Any, *rest: Any) -> Any:
        if isinstance(storage, StorageRef):
            try:
                view = ViewRef(storage, int(offset), tuple(int(s) for s in size), tuple(int(s) for s in stride))
            except (TypeError, ValueError) as error:
                raise CheckpointError(f"data.pkl builds a tensor of storage {storage.key} with a bad offset/size/stride") from error
            self._layout.views.append(view)
        return _Inert(storage, offset, size, stride)


def read_records(handle: BinaryIO) -> tuple[str, dict[str, Record]]:
    """The archive's single top-level folder and its members, with their data offsets."""
    try:
        infos = zip_infos(handle)
    except (zipfile.BadZipFile, EOFError, ValueError, OverflowError) as error:
        raise CheckpointError(f"damaged torch zip archive: truncated or corrupt ({error})") from error
    except NotImplementedError as error:  # e.g. "zip file version 6.4": torch's reader ignores that field
        raise Unfollowed(str(error)) from error
    shift = _prepended_bytes(handle)
    if shift != 0:
        raise Prepended(shift)
    prefixes = {info.filename.split("/", 1)[0] for info in infos}
    if len(prefixes) != 1:
        raise CheckpointError("a torch zip archive must hold one top-level folder")
    records = {}
    for info in infos:
        if info.flag_bits & 0x1:
            raise CheckpointError(f"damaged torch zip archive: record {info.filename} is marked encrypted, which torch cannot read")
        handle.seek(info.header_offset)
        fields = handle.read(_LOCAL_HEADER.size)
        if len(fields) < _LOCAL_HEADER.size or fields[:4] != _LOCAL_MAGIC:
            raise CheckpointError(f"damaged torch zip archive: no local header for {info.filename}")
        name_length, extra_length = _LOCAL_HEADER.unpack(fields)[-2:]
        data_offset = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        records[info.filename] = Record(
            info.filename, data_offset, info.file_size, info.compress_size, info.compress_type, info.CRC
        )
    return prefixes.pop(), records


class Unfollowed(Exception):
    """Python's zip reader refuses a field torch's ignores: torch's reader judges the archive."""


class Prepended(Exception):
    """Bytes before the zip archive (e.g. two archives concatenated): Python's zip reader
    skips them, torch's does not, so offsets read here are not the ones torch uses."""


def _prepended_bytes(handle: BinaryIO) -> int:
    """How far Python's zip reader shifted every offset (``concat`` in zipfile): 0 for a plain archive.

    Python finds the central directory just before the end records and adds
    the difference to every declared offset; torch's (miniz) reads the
    declared offsets as they are.
    """
    handle.seek(0, 2)
    size = handle.tell()
    tail_start = max(0, size - (1 << 16) - 22)
    handle.seek(tail_start)
    tail = handle.read()
    end = tail.rfind(b"PK\x05\x06")
    if end < 0 or len(tail) < end + 22:
        return 0  # zipfile found it, so this does not happen; nothing to compare
    directory_end = end
    declared_size, declared_offset = struct.unpack("<II", tail[end + 12 : end + 20])
    locator = end - 20
    if locator >= 56 and tail[locator : locator + 4] == b"PK\x06\x07":
        record = tail[locator - 56 : locator]  # the zip64 end record, just before its locator
        if record[:4] == b"PK\x06\x06":
            declared_size, declared_offset = struct.unpack("<QQ", record[40:56])
            directory_end = locator - 56
    return tail_start + directory_end - declared_size - declared_offset


def read_layout(handle: BinaryIO) -> Layout:
    """Records, storages and views of the open archive; raises :class:`CheckpointError` if they disagree.

    An archive with bytes before it comes back unverified (empty, with
    ``verified`` False): only torch's own reader can say what it holds.
    """
    try:
        prefix, records = read_records(handle)
    except Prepended as shifted:
        logger.debug("bytes before the zip archive; torch's reader decides what it holds")
        return Layout("", {}, verified=False, prepended=shifted.args[0])
    except Unfollowed as reason:
        logger.debug("zip directory not followed here (%s); torch's reader decides what it holds", reason)
        return Layout("", {}, verified=False)
    layout = Layout(prefix, records)
    pickle_name = f"{prefix}/data.pkl"
    if pickle_name not in records:
        raise CheckpointError("a zip archive without torch data (data.pkl)")
    layout.byteorder = _byteorder(handle, records.get(f"{prefix}/byteorder"))
    try:
        _LayoutUnpickler(io.BytesIO(_record_bytes(handle, records[pickle_name])), layout).load()
    except CheckpointError:
        raise
    except Exception as error:  # noqa: BLE001 - torch's reader judges (and words) what this one cannot follow
        logger.debug("data.pkl not followed by the layout check (%s: %s)", type(error).__name__, error)
        layout.verified = False
    check_layout(layout)
    return layout


def _record_bytes(handle: BinaryIO, record: Record) -> bytes:
    """A record's bytes: a stored one read at its offset (CRC checked), a compressed one through ``zipfile``."""
    if not record.stored:
        with zipfile.ZipFile(handle) as archive:
            return archive.read(record.name)
    handle.seek(record.data_offset)
    data = handle.read(record.file_size)
    if len(data) != record.file_size or zlib.crc32(data) != record.crc:
        raise zipfile.BadZipFile(f"bad CRC or short record {record.name}")
    return data


def check_layout(layout: Layout) -> None:
    """Every storage has a record big enough for it; every view lies inside its storage."""
    for key, storage in layout.storages.items():
        record = layout.storage_record(key)
        if record is None:
            raise CheckpointError(f"damaged torch zip archive: missing record data/{key}")
        element = STORAGE_ELEMENT_SIZES.get(storage.type_name)
        if element is None:
            raise CheckpointError(f"storage {key} has type {storage.type_name}, which wnaudit cannot size")
        needed = storage.numel * element
        if storage.numel < 0 or record.file_size < needed:
            raise CheckpointError(
                f"damaged torch zip archive: record data/{key} holds {record.file_size} bytes, but its storage needs {needed} "
                f"({storage.numel} x {storage.type_name}); the file is truncated or corrupt"
            )
    for view in layout.views:
        _check_view(view)


def _check_view(view: ViewRef) -> None:
    key = view.storage.key
    if len(view.size) != len(view.stride):
        raise CheckpointError(f"a tensor of storage {key} has {len(view.size)} sizes but {len(view.stride)} strides")
    if view.offset < 0 or any(s < 0 for s in view.size) or any(s < 0 for s in view.stride):
        raise CheckpointError(f"a tensor of storage {key} has a negative offset, size or stride")
    if any(s == 0 for s in view.size):
        return
    last = view.offset + sum((size - 1) * stride for size, stride in zip(view.size, view.stride))
    if last >= view.storage.numel:
        raise CheckpointError(
            f"a tensor of storage {key} reaches element {last}, past the storage's {view.storage.numel} elements"
        )


def _byteorder(handle: BinaryIO, record: Record | None) -> str:
    """What the ``byteorder`` record says (``little`` without one, as torch assumes)."""
    if record is None or not record.stored or record.file_size > 16:
        return "little"
    handle.seek(record.data_offset)
    text = handle.read(record.file_size)
    if text not in (b"little", b"big"):
        raise CheckpointError(f"the byteorder record says {text!r:.30}, neither 'little' nor 'big'")
    return text.decode()
