"""The probe's one inference input: random tensors of ``--input-shape`` or a saved tensor (``--input``).

Random inputs take the dtype and device of the model's first floating-point
parameter (a half-precision model on a GPU gets a half-precision CUDA input),
from a fixed seed so two probes see the same call.  A saved input is read with
``weights_only=True``: a tensor, a list or tuple of tensors (positional
arguments) or a mapping of names to tensors (keyword arguments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..common.entry_points import first_line
from ..core import torch_api


class InputFileError(ValueError):
    """The ``--input`` file cannot be read as tensors; the message is one line naming it."""


@dataclass(frozen=True)
class CallArguments:
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


def random_inputs(model: Any, shapes: Sequence[Sequence[int]], seed: int = 0) -> CallArguments:
    torch = torch_api.import_torch()
    reference = next((p for p in model.parameters() if p.is_floating_point()), None)
    dtype = reference.dtype if reference is not None else torch.get_default_dtype()
    device = reference.device if reference is not None else torch.device("cpu")
    generator = torch.Generator().manual_seed(seed)
    return CallArguments(tuple(torch.randn(*shape, generator=generator, dtype=dtype).to(device) for shape in shapes))


def saved_inputs(path: Path, model: Any) -> CallArguments:
    torch = torch_api.import_torch()
    reference = next((p for p in model.parameters()), None)
    device = reference.device if reference is not None else "cpu"
    try:
        content = torch.load(path, map_location=device, weights_only=True)
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except Exception as error:  # noqa: BLE001 - torch's unpickler raises many types
        raise InputFileError(f"{path}: cannot read as a weights-only tensor file: {first_line(error)}") from None
    if isinstance(content, torch.Tensor):
        return CallArguments((content,))
    if isinstance(content, (list, tuple)) and all(isinstance(item, torch.Tensor) for item in content):
        return CallArguments(tuple(content))
    if isinstance(content, Mapping) and all(isinstance(key, str) for key in content):
        return CallArguments((), dict(content))
    raise InputFileError(f"{path}: holds a {type(content).__name__}; expected a tensor, a list of tensors or a dict of named inputs")
