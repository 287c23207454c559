"""Recognise checkpoint files by their first bytes, without torch.

HiFi-GAN style checkpoints are often named ``g_00500000`` with no extension,
ParallelWaveGAN's ``checkpoint-400000steps.pkl``, others ``model_best.pth.tar``:
names are not enough, so directory walks look at every file's first bytes.
"""

from __future__ import annotations

import enum
import os
import stat
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .zip_directory import zip_infos

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".safetensors")
INDEX_SUFFIX = ".index.json"


def is_index_name(path: Path) -> bool:
    """A Hugging Face shard index (``*.index.json``), by name."""
    return path.name.lower().endswith(INDEX_SUFFIX)


def is_checkpoint_name(path: Path) -> bool:
    return is_index_name(path) or path.suffix.lower() in CHECKPOINT_SUFFIXES


def is_regular_file(path: Path) -> bool:
    """A FIFO blocks a reader forever and a device never ends: only regular files are read."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


class Format(enum.Enum):
    """The checkpoint formats wnaudit reads, recognised by content."""

    TORCH_ZIP = "torch zip archive"
    TORCHSCRIPT = "TorchScript archive"
    TORCH_LEGACY = "legacy torch.save file"
    SAFETENSORS = "safetensors"
    SHARD_INDEX = "shard index"


class UnrecognisedFormat(ValueError):
    """The file is not any checkpoint format wnaudit reads; the message says what it looks like."""


#: Bytes read to recognise a file in a walk: a zip's first local header with its member name.
SNIFF_BYTES = 512
#: The first bytes every signature's ``starts`` needs (a safetensors header size and its brace).
HEAD_BYTES = 16
#: safetensors refuses headers above 100 MB; a larger size field is not safetensors.
MAX_SAFETENSORS_HEADER = 100_000_000

_ZIP_MAGIC = b"PK\x03\x04"
#: Legacy (non-zip) torch.save files start with a pickled magic number.
_LEGACY_TORCH_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"
_ZIP_NAME_LENGTH = struct.Struct("<H")
_SAFETENSORS_SIZE = struct.Struct("<Q")


@dataclass(frozen=True)
class Signature:
    """How one format shows in a file's first bytes: the one place that knows it.

    ``starts``: whether the first :data:`HEAD_BYTES` announce the format; what
    :func:`detect_format` goes by, and what a directory walk tests before it
    reads more.  ``confirms``: the walk's stricter test (:func:`looks_like_checkpoint`),
    which takes no file it is unsure of, given the open file and its first
    :data:`SNIFF_BYTES`.  A zip is announced as :attr:`Format.TORCH_ZIP`;
    its central directory tells a TorchScript archive apart.
    """

    format: Format
    starts: Callable[[bytes], bool]
    confirms: Callable[[BinaryIO, bytes], bool]


def _zip_starts(head: bytes) -> bool:
    return head.startswith(_ZIP_MAGIC)


def _legacy_starts(head: bytes) -> bool:
    """The pickle protocol and long-integer opcodes the magic number begins with (torch judges the rest)."""
    return head.startswith(_LEGACY_TORCH_MAGIC[:3])


def _legacy_confirms(handle: BinaryIO, head: bytes) -> bool:
    return head.startswith(_LEGACY_TORCH_MAGIC)


def _safetensors_header_size(head: bytes) -> int | None:
    """The 8-byte little-endian header size, when the JSON header's brace follows it."""
    if len(head) < 9 or head[8:9] != b"{":
        return None
    return int(_SAFETENSORS_SIZE.unpack(head[:8])[0])


def _safetensors_starts(head: bytes) -> bool:
    size = _safetensors_header_size(head)
    return size is not None and size < MAX_SAFETENSORS_HEADER


def _safetensors_confirms(handle: BinaryIO, head: bytes) -> bool:
    """A header that is not empty and fits in the file."""
    size = _safetensors_header_size(head)
    return size is not None and 0 < size < MAX_SAFETENSORS_HEADER and 8 + size <= os.fstat(handle.fileno()).st_size


def _first_member_is_data_pkl(head: bytes) -> bool:
    if len(head) < 30:
        return False
    (name_length,) = _ZIP_NAME_LENGTH.unpack(head[26:28])
    first = head[30 : 30 + name_length]
    return first.endswith(b"/data.pkl") or first == b"data.pkl"


def _zip_holds_torch_data(handle: BinaryIO, head: bytes) -> bool:
    """A zip counts only when it holds a ``data.pkl``: torch writes it first, anything else costs a directory read."""
    if _first_member_is_data_pkl(head):
        return True
    try:
        with zipfile.ZipFile(handle) as archive:
            return any(name.endswith("/data.pkl") or name == "data.pkl" for name in archive.namelist())
    except (zipfile.BadZipFile, EOFError, ValueError, OverflowError, OSError, NotImplementedError):
        return True  # a damaged zip: let the reader say what is wrong with it


#: The formats recognised by their first bytes, in the order they are tried (the first that starts decides).
SIGNATURES: tuple[Signature, ...] = (
    Signature(Format.TORCH_ZIP, _zip_starts, _zip_holds_torch_data),
    Signature(Format.TORCH_LEGACY, _legacy_starts, _legacy_confirms),
    Signature(Format.SAFETENSORS, _safetensors_starts, _safetensors_confirms),
)


def signature_of(head: bytes) -> Signature | None:
    """The signature a file's first bytes announce, or None when no format starts so."""
    return next((signature for signature in SIGNATURES if signature.starts(head)), None)


def looks_like_checkpoint(path: Path) -> bool:
    """True when the file's first bytes are a torch zip, a legacy torch file or safetensors.

    Cheap enough for every file of a directory walk: one read of
    :data:`SNIFF_BYTES`.  The format its first bytes announce must confirm
    it (:class:`Signature`), so a plain zip of other content is not a
    checkpoint.
    """
    if not is_regular_file(path):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
            signature = signature_of(head)
            return signature is not None and signature.confirms(handle, head)
    except OSError:
        return False


#: A TorchScript archive carries its compiled code beside the data.
_TORCHSCRIPT_MEMBERS = ("constants.pkl", "code/")
_PICKLE_PROTOCOL_2_PLUS = b"\x80"


def detect_format(path: Path) -> Format:
    """What ``path`` holds, from its name (shard index) and first bytes (everything else).

    Raises ``OSError`` if it cannot be read and :class:`UnrecognisedFormat` if
    it is none of the formats.  Reads only the first bytes (and a zip's
    central directory), never tensor data.
    """
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "is a directory", str(path))
    if not stat.S_ISREG(mode):
        raise UnrecognisedFormat("not a regular file (a FIFO, socket or device); not read")
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
        if is_index_name(path):
            return Format.SHARD_INDEX
        signature = signature_of(head)
        if signature is not None and signature.format is Format.TORCH_ZIP:
            return _zip_kind(handle)  # the central directory, from the same open file
    if signature is not None:
        return signature.format
    if not head:
        raise UnrecognisedFormat("empty file (0 bytes)")
    if head.startswith(_PICKLE_PROTOCOL_2_PLUS):
        raise UnrecognisedFormat("a plain pickle, not a torch.save checkpoint; not loaded")
    if _looks_like_text(head):
        raise UnrecognisedFormat("a text file, not a checkpoint")
    raise UnrecognisedFormat("not a torch, safetensors or shard-index checkpoint")


def _looks_like_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


#: A state dict's data.pkl holds names and shapes only (a few MB even for huge
#: models); a larger one is a zip bomb or not a checkpoint, and is not inflated.
MAX_PICKLE_BYTES = 256 * 1024 * 1024


def _zip_kind(handle: BinaryIO) -> Format:
    try:
        infos = zip_infos(handle)
    except (zipfile.BadZipFile, EOFError, ValueError, OverflowError) as error:
        raise UnrecognisedFormat(f"damaged torch zip archive: truncated or corrupt ({error})") from error
    except NotImplementedError as error:  # "zip file version 6.4": a field torch's reader ignores
        return _first_member_kind(handle, error)
    _check_zip_sizes(os.fstat(handle.fileno()).st_size, infos)
    names = [info.filename for info in infos]
    for name in names:
        _, _, member = name.partition("/")
        if any(member == m or member.startswith(m) for m in _TORCHSCRIPT_MEMBERS):
            return Format.TORCHSCRIPT
    if not any(name.endswith("/data.pkl") or name == "data.pkl" for name in names):
        raise UnrecognisedFormat("a zip archive without torch data (data.pkl); not a torch checkpoint")
    return Format.TORCH_ZIP


def _first_member_kind(handle: BinaryIO, error: NotImplementedError) -> Format:
    """Python's zip reader refused the directory: a torch zip if its first record is ``data.pkl`` (torch judges the rest)."""
    handle.seek(0)
    if _first_member_is_data_pkl(handle.read(SNIFF_BYTES)):
        return Format.TORCH_ZIP
    raise UnrecognisedFormat(f"a zip archive Python's zip reader cannot read ({error}) whose first record is not data.pkl")


def _check_zip_sizes(archive_size: int, infos: list[zipfile.ZipInfo]) -> None:
    """Refuse members whose declared sizes the archive cannot hold, before anything reads them.

    torch stores tensor records uncompressed, so a record claiming more bytes
    than the file has is a lie that would make a reader allocate for it.
    """
    for info in infos:
        if info.header_offset + info.compress_size > archive_size:
            raise UnrecognisedFormat(
                f"corrupt zip archive: member {info.filename} claims {info.compress_size} bytes beyond the file's {archive_size}"
            )
        if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            raise UnrecognisedFormat(f"corrupt zip archive: stored member {info.filename} declares two different sizes")
        if info.filename.endswith("data.pkl") and info.file_size > MAX_PICKLE_BYTES:
            raise UnrecognisedFormat(
                f"{info.filename} declares {info.file_size} bytes inflated (a zip bomb?); not inflated"
            )
