"""Turn the command line's MODEL (and --checkpoint) into a module and a way to rebuild it.

MODEL is a factory ``package.module:callable`` (or ``path/to/file.py:callable``)
called with no arguments, or a full pickled module (``torch.save(model)``),
which is unpickled only with ``--trust-pickle`` because unpickling runs code
from the file.  The rebuild function returned with the module makes the second
arm from scratch (factory called again, pickle loaded again), so the two arms
share no object at all.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..common.entry_points import EntryPointError, first_line, resolve_entry_point
from ..core import torch_api
from ..checkpoint.torch_io import TRUST_FLAG
from .errors import BenchError

logger = logging.getLogger("wnaudit.bench")

#: Top-level keys under which training scripts commonly nest the model's state dict.
_NESTING_KEYS = ("state_dict", "model", "model_state_dict", "generator", "module")


@dataclass
class LoadedModel:
    module: Any
    rebuild: Callable[[], Any]
    label: str


def load_model(
    spec: str, *, checkpoint: Path | None = None, checkpoint_key: str | None = None, trust_pickle: bool = False
) -> LoadedModel:
    """Load MODEL (and its checkpoint); raise :class:`BenchError` with one line on any problem."""
    path = Path(spec)
    if path.is_file() and not spec.endswith(".py"):
        build = _pickle_loader(path, trust_pickle)
    elif ":" in spec:
        build = _factory(spec)
    else:
        raise BenchError(f"{spec}: MODEL must be a factory 'package.module:callable' or a pickled module file")
    state = _read_checkpoint(checkpoint, checkpoint_key) if checkpoint is not None else None

    def rebuild() -> Any:
        module = build()
        torch = torch_api.import_torch()
        if not isinstance(module, torch.nn.Module):
            raise BenchError(f"{spec}: built a {type(module).__name__}, not a torch.nn.Module")
        if state is not None:
            _load_state(module, state, checkpoint)
        return module

    return LoadedModel(module=rebuild(), rebuild=rebuild, label=spec)


def _factory(spec: str) -> Callable[[], Any]:
    """The factory's import and call (``common/entry_points.py``, shared with ``wnaudit probe``)."""
    try:
        entry = resolve_entry_point(spec)
    except EntryPointError as error:
        raise BenchError(str(error)) from error

    def build() -> Any:
        try:
            return entry.call()
        except EntryPointError as error:
            raise BenchError(f"{spec}: the factory raised {first_line(error.__cause__ or error)}") from error

    return build


def _pickle_loader(path: Path, trust_pickle: bool) -> Callable[[], Any]:
    torch = torch_api.import_torch()
    if not trust_pickle:
        try:
            content = torch.load(path, map_location="cpu", weights_only=True)
        except Exception:  # noqa: BLE001 - a full-module pickle is refused by the safe loader
            raise BenchError(
                f"{path}: is a pickled module; loading it runs code from the file. "
                f"Pass {TRUST_FLAG} if you trust it"
            ) from None
        kind = "a state dict" if isinstance(content, Mapping) else f"a {type(content).__name__}"
        raise BenchError(f"{path}: holds {kind}, not a module: give a factory MODEL and pass this file as --checkpoint")

    def build() -> Any:
        try:
            return torch.load(path, map_location="cpu", weights_only=False)
        except Exception as error:  # noqa: BLE001 - unpickling can raise anything
            raise BenchError(f"{path}: cannot unpickle: {type(error).__name__}: {error}") from error

    return build


def _is_tensor_mapping(value: Any) -> bool:
    torch = torch_api.import_torch()
    return isinstance(value, Mapping) and bool(value) and all(isinstance(v, torch.Tensor) for v in value.values())


def _read_checkpoint(path: Path, key: str | None) -> Mapping[str, Any]:
    """The state dict in ``path`` (torch zip/pickle with weights_only, or safetensors)."""
    torch = torch_api.import_torch()
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            content: Any = load_file(str(path))
        else:
            content = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise BenchError(f"{path}: no such file") from None
    except Exception as error:  # noqa: BLE001 - torch's unpickler raises many types
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BenchError(f"{path}: cannot read as a weights-only checkpoint: {first_line}") from None
    if key is not None:
        for part in key.split("."):
            if not isinstance(content, Mapping) or part not in content:
                raise BenchError(f"{path}: no entry {key!r}")
            content = content[part]
    if _is_tensor_mapping(content):
        return content
    if isinstance(content, Mapping):
        nested = [k for k in _NESTING_KEYS if _is_tensor_mapping(content.get(k))]
        if len(nested) == 1:
            logger.info("%s: using the state dict under %r", path, nested[0])
            return content[nested[0]]
        keys = ", ".join(map(str, list(content)[:8]))
        raise BenchError(f"{path}: no state dict at the top level (keys: {keys}); name one with --checkpoint-key")
    raise BenchError(f"{path}: holds a {type(content).__name__}, not a state dict")


#: Folded checkpoints already reported as such in this process.
_NOTED: set[Path | None] = set()


def _load_state(module: Any, state: Mapping[str, Any], path: Path | None) -> None:
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as error:
        from .refold import REFOLD_NOTE, load_folded

        if load_folded(module, state):
            if path not in _NOTED:  # both arms load it: say it once
                _NOTED.add(path)
                logger.warning("%s: %s", path, REFOLD_NOTE)
            return
        missing, unexpected = _key_mismatch(module, state)
        detail = "; ".join(
            part
            for part in (
                f"missing {_few(missing)}" if missing else "",
                f"unexpected {_few(unexpected)}" if unexpected else "",
            )
            if part
        ) or str(error).strip().splitlines()[0]
        raise BenchError(f"{path}: does not fit the model: {detail}") from None


def _key_mismatch(module: Any, state: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    try:
        result = module.load_state_dict(state, strict=False)
    except RuntimeError:  # shape mismatches raise even when not strict
        return [], []
    return list(result.missing_keys), list(result.unexpected_keys)


def _few(keys: list[str]) -> str:
    shown = ", ".join(keys[:3])
    return f"{shown} (+{len(keys) - 3} more)" if len(keys) > 3 else shown
