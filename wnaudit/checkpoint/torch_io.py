"""Load and save torch checkpoints safely, turning torch's errors into one-line messages.

Without ``--trust-pickle`` nothing from the file runs: ``torch.load`` with
``weights_only=True`` (its restricted unpickler builds only tensors and plain
containers).  Zip archives are memory-mapped (so an audit reads no tensor data) only after
:mod:`zip_layout` has checked every record against the pickle: a compressed
archive is read through torch's own zip reader, a record shorter than its
storage is refused.
"""

from __future__ import annotations

import logging
import os
import pickle
import re
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from ..core.torch_api import import_torch
from .errors import CheckpointError
from .sniff import Format
from .zip_layout import read_layout

logger = logging.getLogger(__name__)

TRUST_FLAG = "--trust-pickle"
_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")
#: How torch's restricted unpickler says a global outside its safe set was met without naming it.
_OUTSIDE_SAFE_SET = ("add_safe_globals", "allowlisted", "Unsupported global")
_UNPICKLER_REASON = re.compile(r"WeightsUnpickler error: (.+)")
_MISSING_RECORD = re.compile(r"failed locating file (\S+?)[:\s]")
#: Members the unpickler reads (not the tensor storages under ``data/``): their CRC is checked on failure.
_STORAGE_DIR = "data/"
_CHUNK = 1 << 20


def load(path: Path, fmt: Format, *, trust_pickle: bool, storage_keys: Any = None) -> Any:
    """The object ``torch.save`` stored in ``path`` (tensors memory-mapped for zip archives).

    ``storage_keys`` (a :class:`~wnaudit.checkpoint.torch_zip.StorageKeys`)
    learns which record each memory-mapped storage came from, for the streaming fix.
    """
    if fmt is Format.TORCHSCRIPT:
        return _load_torchscript(path, trust_pickle=trust_pickle)
    torch = import_torch()
    mmap = False
    before: os.stat_result | None = None
    prepended = 0
    if fmt is Format.TORCH_ZIP:
        with open(path, "rb") as handle:
            layout = read_layout(handle)
            before = os.fstat(handle.fileno())
        # Memory-map only records stored plainly: a compressed record's bytes
        # are not its tensor's bytes; torch's own reader decompresses them.
        mmap = layout.may_mmap
        prepended = layout.prepended
        if storage_keys is not None and mmap:
            storage_keys.layout, storage_keys.loaded_stat = layout, before
        if not mmap:
            logger.debug("%s: compressed or unchecked records; loading without memory-mapping", path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            location = storage_keys.restore_location if storage_keys is not None and mmap else "cpu"
            loaded = torch.load(path, map_location=location, weights_only=not trust_pickle, mmap=mmap)
    except pickle.UnpicklingError as error:
        raise _unpickling_error(path, fmt, error, trust_pickle=trust_pickle) from error
    except (OSError, MemoryError):
        raise
    except Exception as error:  # torch raises RuntimeError, KeyError, EOFError... for corrupt files
        if prepended:
            raise CheckpointError(
                f"damaged torch zip archive: {prepended} bytes before the archive its zip directory describes "
                "(two archives concatenated?); torch.load cannot read it"
            ) from error
        damage = zip_damage(path, str(error)) if fmt is Format.TORCH_ZIP else None
        raise CheckpointError(damage or f"cannot read this {fmt.value}: {_first_line(error)}") from error
    if before is not None and not same_file(before, os.stat(path)):
        raise CheckpointError("the file changed while being read; nothing written")
    return loaded


def same_file(before: os.stat_result, after: os.stat_result) -> bool:
    """The same inode, size and modification time: nobody replaced or rewrote the file."""
    return (before.st_dev, before.st_ino, before.st_size, before.st_mtime_ns) == (
        after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns
    )


def _unpickling_error(path: Path, fmt: Format, error: Exception, *, trust_pickle: bool) -> CheckpointError:
    """Say what stopped the unpickler: a global outside the safe set (then, only then, name the flag) or damage."""
    text = str(error)
    match = _GLOBAL.search(text)
    if not trust_pickle and (match is not None or any(marker in text for marker in _OUTSIDE_SAFE_SET)):
        first = f" (first: {match.group(1)})" if match is not None else ""
        return CheckpointError(
            f"holds pickled Python objects{first}, e.g. a full torch.save(model); loading it runs code from the file: "
            f"rerun with {TRUST_FLAG} only if you trust it"
        )
    damage = zip_damage(path, text) if fmt is Format.TORCH_ZIP else None
    if damage is not None:
        return CheckpointError(damage)
    reason = _UNPICKLER_REASON.search(text)
    detail = reason.group(1).strip() if reason is not None else _first_line(error)
    return CheckpointError(f"damaged {fmt.value}: its pickle cannot be read ({detail})")


def zip_damage(path: Path, error_text: str = "") -> str | None:
    """What is damaged in a torch zip archive (truncated, a bad CRC, a missing record), or ``None``.

    Run only after loading failed, so an intact archive costs nothing; the
    tensor storages are not CRC-checked (they are memory-mapped, never the
    reason a load fails) — only the records the unpickler reads.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, ValueError):
        return "damaged torch zip archive: truncated or incomplete (no readable zip directory)"
    except (OSError, NotImplementedError):  # "zip file version 6.4": torch's own error says what is wrong
        return None
    with archive:
        names = archive.namelist()
        if not any(name == "data.pkl" or name.endswith("/data.pkl") for name in names):
            return "damaged torch zip archive: missing record data.pkl"
        for info in archive.infolist():
            inner = info.filename.split("/", 1)[-1]
            if inner.startswith(_STORAGE_DIR) or info.is_dir():
                continue
            try:
                with archive.open(info) as handle:
                    while handle.read(_CHUNK):
                        pass
            except zipfile.BadZipFile as error:
                what = "bad CRC" if "CRC" in str(error) else "unreadable"
                return f"damaged torch zip archive: {what} in record {info.filename}"
            except (zlib.error, EOFError, NotImplementedError, ValueError, OSError):
                return f"damaged torch zip archive: record {info.filename} is unreadable"
            except RuntimeError:  # zipfile's word for an encrypted record
                return f"damaged torch zip archive: record {info.filename} is marked encrypted"
    missing = _MISSING_RECORD.search(error_text + " ")
    if missing is not None:
        return f"damaged torch zip archive: missing record {missing.group(1)}"
    return None


def _load_torchscript(path: Path, *, trust_pickle: bool) -> Any:
    if not trust_pickle:
        raise CheckpointError(
            f"TorchScript archive: loading it runs its TorchScript code; rerun with {TRUST_FLAG} "
            "to audit its state (folding TorchScript is not supported: fold before scripting)"
        )
    torch = import_torch()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.jit.load's deprecation notice
            return torch.jit.load(str(path), map_location="cpu")
    except Exception as error:
        raise CheckpointError(f"cannot load this TorchScript archive: {_first_line(error)}") from error


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    line = text.splitlines()[0].strip()
    return f"{type(error).__name__}: {line}" if isinstance(error, KeyError) else line


class CountingWriter:
    """A write-only stream that reports bytes written (for the progress bar)."""

    def __init__(self, handle: BinaryIO, progress: Any) -> None:
        self._handle = handle
        self._progress = progress

    def write(self, data: Any) -> int:
        written = self._handle.write(data)
        self._progress(len(memoryview(data)))
        return written

    def flush(self) -> None:
        self._handle.flush()


def save(obj: Any, handle: BinaryIO, fmt: Format, progress: Any) -> None:
    """``torch.save`` in the same format the file had."""
    torch = import_torch()
    writer = CountingWriter(handle, progress)
    torch.save(obj, writer, _use_new_zipfile_serialization=fmt is not Format.TORCH_LEGACY)
