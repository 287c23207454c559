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
from pathlib import Path
from typing import BinaryIO

from .zip_directory import zip_infos

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".safetensors")
INDEX_SUFFIX = ".index.json"

_ZIP_MAGIC = b"PK\x03\x04"
#: Legacy (non-zip) torch.save files start with a pickled magic number.
_LEGACY_TORCH_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"


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


#: Bytes read to recognise a file: a zip's first local header with its member name.
SNIFF_BYTES = 512
_ZIP_NAME_LENGTH = struct.Struct("<H")


def looks_like_checkpoint(path: Path) -> bool:
    """True when the file's first bytes are a torch zip, a legacy torch file or safetensors.

    Cheap enough for every file of a directory walk: one read of
    :data:`SNIFF_BYTES`.  A zip counts only when it holds a ``data.pkl``
    (torch writes it first; a zip whose first member is something else costs
    a read of its central directory), so a plain zip of other content is not
    a checkpoint.
    """
    if not is_regular_file(path):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
            if head.startswith(_ZIP_MAGIC):
                return _zip_holds_torch_data(handle, head)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return False
    if head.startswith(_LEGACY_TORCH_MAGIC):
        return True
    if len(head) >= 9 and head[8:9] == b"{":
        (header_size,) = struct.unpack("<Q", head[:8])
        return 0 < header_size < MAX_SAFETENSORS_HEADER and 8 + header_size <= size
    return False


def _first_member_is_data_pkl(head: bytes) -> bool:
    if len(head) < 30:
        return False
    (name_length,) = _ZIP_NAME_LENGTH.unpack(head[26:28])
    first = head[30 : 30 + name_length]
    return first.endswith(b"/data.pkl") or first == b"data.pkl"


def _zip_holds_torch_data(handle: BinaryIO, head: bytes) -> bool:
    if _first_member_is_data_pkl(head):
        return True
    try:
        with zipfile.ZipFile(handle) as archive:
            return any(name.endswith("/data.pkl") or name == "data.pkl" for name in archive.namelist())
    except (zipfile.BadZipFile, EOFError, ValueError, OverflowError, OSError, NotImplementedError):
        return True  # a damaged zip: let the reader say what is wrong with it


class Format(enum.Enum):
    """The checkpoint formats wnaudit reads, recognised by content."""

    TORCH_ZIP = "torch zip archive"
    TORCHSCRIPT = "TorchScript archive"
    TORCH_LEGACY = "legacy torch.save file"
    SAFETENSORS = "safetensors"
    SHARD_INDEX = "shard index"


class UnrecognisedFormat(ValueError):
    """The file is not any checkpoint format wnaudit reads; the message says what it looks like."""


#: A TorchScript archive carries its compiled code beside the data.
_TORCHSCRIPT_MEMBERS = ("constants.pkl", "code/")
_PICKLE_PROTOCOL_2_PLUS = b"\x80"
#: safetensors refuses headers above 100 MB; a larger size field is not safetensors.
MAX_SAFETENSORS_HEADER = 100_000_000


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
        head = handle.read(16)
        if is_index_name(path):
            return Format.SHARD_INDEX
        if head.startswith(_ZIP_MAGIC):
            return _zip_kind(handle)  # the central directory, from the same open file
    if not head:
        raise UnrecognisedFormat("empty file (0 bytes)")
    if head.startswith(_LEGACY_TORCH_MAGIC[:3]):
        return Format.TORCH_LEGACY
    if len(head) >= 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] < MAX_SAFETENSORS_HEADER:
        return Format.SAFETENSORS
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
