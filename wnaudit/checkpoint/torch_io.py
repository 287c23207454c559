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
from pathlib import Path
from typing import Any, BinaryIO

from ..core.torch_api import import_torch
from .errors import CheckpointError
from .sniff import Format
from .zip_layout import read_layout

logger = logging.getLogger(__name__)

TRUST_FLAG = "--trust-pickle"
_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")


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
    if fmt is Format.TORCH_ZIP:
        with open(path, "rb") as handle:
            layout = read_layout(handle)
            before = os.fstat(handle.fileno())
        # Memory-map only records stored plainly: a compressed record's bytes
        # are not its tensor's bytes; torch's own reader decompresses them.
        mmap = layout.may_mmap
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
        raise _unpickling_error(error) from error
    except (OSError, MemoryError):
        raise
    except Exception as error:  # torch raises RuntimeError, KeyError, EOFError... for corrupt files
        raise CheckpointError(f"cannot read this {fmt.value}: {_first_line(error)}") from error
    if before is not None and not same_file(before, os.stat(path)):
        raise CheckpointError("the file changed while being read; nothing written")
    return loaded


def same_file(before: os.stat_result, after: os.stat_result) -> bool:
    """The same inode, size and modification time: nobody replaced or rewrote the file."""
    return (before.st_dev, before.st_ino, before.st_size, before.st_mtime_ns) == (
        after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns
    )


def _unpickling_error(error: Exception) -> CheckpointError:
    text = str(error)
    match = _GLOBAL.search(text)
    if match is not None:
        what = f"pickled Python objects (first: {match.group(1)})"
        return CheckpointError(
            f"holds {what}, e.g. a full torch.save(model); loading it runs code from the file: "
            f"rerun with {TRUST_FLAG} only if you trust it"
        )
    return CheckpointError(f"cannot unpickle safely ({_first_line(error)}); rerun with {TRUST_FLAG} only if you trust the file")


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
