"""Read the structure and tensor shapes of a torch zip checkpoint without torch.

An audit needs key names and shapes only.  They are all in the archive's
``data.pkl``; the tensor data sits in separate members.  Unpickling
``data.pkl`` with an unpickler that knows only the handful of globals a state
dict uses (and builds inert stand-ins for them) gives the whole nesting with
:class:`TensorStub` leaves, reads no tensor data, runs nothing from the file,
and spares the audit the seconds that ``import torch`` costs.

Anything outside that handful raises :class:`Unsupported`; the caller then
falls back to ``torch.load(weights_only=True)``, which decides (and words the
error) as torch does.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class Unsupported(Exception):
    """The pickle uses something this reader does not model; use torch.load instead."""


@dataclass(frozen=True)
class TensorStub:
    """A tensor's shape and storage type, without its data."""

    shape: tuple[int, ...]
    storage: str


@dataclass(frozen=True)
class _StorageType:
    name: str


@dataclass(frozen=True)
class _Storage:
    type_name: str


def _rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any, *rest: Any) -> TensorStub:
    if not isinstance(storage, _Storage):
        raise Unsupported("tensor without a storage")
    return TensorStub(tuple(int(s) for s in size), storage.type_name)


def _rebuild_parameter(data: Any, requires_grad: bool, backward_hooks: Any, *state: Any) -> TensorStub:
    if not isinstance(data, TensorStub):
        raise Unsupported("parameter without a tensor")
    return data


def _size(values: Any = ()) -> tuple[int, ...]:
    return tuple(values)


_TORCH_UTILS = {
    "_rebuild_tensor": _rebuild_tensor,
    "_rebuild_tensor_v2": _rebuild_tensor,
    "_rebuild_parameter": _rebuild_parameter,
    "_rebuild_parameter_with_state": _rebuild_parameter,
}


class _ShapeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name in _TORCH_UTILS:
            return _TORCH_UTILS[name]
        if module == "torch" and name == "Size":
            return _size
        if module == "torch" and name.endswith("Storage"):
            return _StorageType(name)
        raise Unsupported(f"{module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) >= 2 and pid[0] == "storage" and isinstance(pid[1], _StorageType):
            return _Storage(pid[1].name)
        raise Unsupported(f"persistent id {pid!r:.60}")


def read_structure(path: Path) -> Any:
    """The checkpoint's object with :class:`TensorStub` leaves; raises :class:`Unsupported`."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
            if len(names) != 1:
                raise Unsupported("no single data.pkl")
            with archive.open(names[0]) as handle:
                return _ShapeUnpickler(handle).load()
    except Unsupported:
        raise
    except Exception as error:  # any oddity: let torch.load judge the file
        raise Unsupported(str(error)) from error
