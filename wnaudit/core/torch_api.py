"""Resolve the catalogue's qualified names to torch objects.

Kept apart so that importing the catalogue never imports torch, and so that the
torch-side code asks for classes by the catalogue's names instead of importing
torch internals by hand.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from .catalogue import (
    PARAMETRIZE_CACHE_FLAG,
    PARAMETRIZE_MODULE,
    PRUNING_METHOD,
    PRUNING_TENSOR_ATTR,
    PT2_LOAD_API,
    PT2_LOADED_MODEL,
    SPECTRAL_NORM_STATE_HOOKS,
    Spelling,
)


class TorchMissingError(RuntimeError):
    """torch is needed for modules and checkpoints but is not installed."""


def import_torch() -> Any:
    """Import torch, or explain which extra to install."""
    try:
        return importlib.import_module("torch")
    except ImportError as error:  # pragma: no cover - exercised only without torch
        raise TorchMissingError(
            'torch is not installed; checkpoints and modules need it: pip install "wnaudit[torch]"'
        ) from error


@functools.lru_cache(maxsize=None)
def resolve(qualified_name: str) -> Any:
    """Import ``package.module.attr`` (attributes may be nested) and return the object."""
    parts = qualified_name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot resolve {qualified_name}")


def implementation(spelling: Spelling) -> Any:
    """The hook or parametrization class torch uses for a spelling."""
    return resolve(spelling.implementation)


def parametrize_module() -> Any:
    return resolve(PARAMETRIZE_MODULE)


def parametrize_cache_active() -> bool:
    """True inside ``torch.nn.utils.parametrize.cached()``."""
    return bool(getattr(parametrize_module(), PARAMETRIZE_CACHE_FLAG, 0))


def spectral_norm_state_hook_classes() -> tuple[Any, ...]:
    return tuple(resolve(name) for name in SPECTRAL_NORM_STATE_HOOKS)


# --------------------------------------------------------------------------
# torch internals the fold touches, each behind one small function
# --------------------------------------------------------------------------

#: The per-module dictionaries of forward-pre-hooks (torch keeps the same key in each).
_FORWARD_PRE_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_pre_hooks_always_called")


def storage_missing(tensor: Any) -> str | None:
    """Why ``tensor`` has no data a kernel may read (``meta``, a storage of no memory), or None if it has.

    torch's CPU kernels and the zip writer read through the data pointer without asking: handed
    a storage-less tensor they crash the process (SIGSEGV) instead of raising.
    """
    if tensor.device.type == "meta":
        return "is stored on the meta device, without data"
    if tensor.numel() and tensor.untyped_storage().data_ptr() == 0:
        return "has no storage (a null data pointer)"
    return None


def weight_norm_kernel(v: Any, g: Any, dim: int) -> Any:
    """torch's fused weight-norm kernel, the call both weight-norm spellings make in their forward."""
    return import_torch()._weight_norm(v, g, dim)


def forward_pre_hooks(module: Any) -> list[tuple[int, Any]]:
    """The module's forward-pre-hooks as (key, hook) pairs, in the order they run."""
    return list(module._forward_pre_hooks.items())


def forward_pre_hook(module: Any, key: int | None) -> Any:
    return module._forward_pre_hooks[key]


def drop_forward_pre_hook(module: Any, key: int | None) -> None:
    """Remove one forward-pre-hook (and its entries in torch's side tables)."""
    for attr in _FORWARD_PRE_HOOK_DICTS:
        getattr(module, attr, {}).pop(key, None)


def unwrap_hook(wrapped: Any) -> Any:
    """The user-visible function or object behind a state-dict hook entry."""
    return getattr(wrapped, "hook", wrapped)


def load_state_dict_pre_hooks(module: Any) -> Any:
    """The module's load-state-dict pre-hooks dictionary (key -> wrapped hook)."""
    return module._load_state_dict_pre_hooks


def state_dict_hooks(module: Any) -> Any:
    """The module's state-dict (save) hooks dictionary (key -> hook)."""
    return module._state_dict_hooks


def own_parameters(module: Any) -> Any:
    """The module's own parameter table (name -> Parameter or None), not its children's."""
    return module._parameters


def own_buffers(module: Any) -> Any:
    """The module's own buffer table (name -> Tensor or None), not its children's."""
    return module._buffers


def spectral_norm_eval_forward(weight: Any, u: Any, v: Any, dim: int, eps: float) -> Any:
    """The modern spectral norm's own ``forward`` in eval mode, on stored state.

    It runs on a stand-in for the parametrization holding ``u``/``v`` (the
    names torch gives them) and ``dim``, with torch's own reshape of the weight
    into the matrix whose sigma it estimates.
    """
    from types import SimpleNamespace

    from .catalogue import MODERN_SPECTRAL_NORM_BUFFERS, SPECTRAL_NORM_MODERN

    parametrization = implementation(SPECTRAL_NORM_MODERN)
    state = SimpleNamespace(dim=dim, eps=eps, training=False, **dict(zip(MODERN_SPECTRAL_NORM_BUFFERS, (u, v))))
    state._reshape_weight_to_matrix = lambda w: parametrization._reshape_weight_to_matrix(state, w)
    return parametrization.forward(state, weight)


def container_attributes(module: Any) -> dict[str, Any]:
    """Every dict- or set-valued attribute of a module (parameters, buffers, children, hooks).

    The transactional fold copies these before it changes anything, so that a
    failure can put every one back exactly, in its order and with its identity.
    """
    return {name: value for name, value in vars(module).items() if isinstance(value, (dict, set))}


def pruned_tensor_names(module: Any) -> set[str]:
    """Names of the tensors torch's pruning recomputes on this module in a forward-pre-hook."""
    method = resolve(PRUNING_METHOD)
    return {getattr(hook, PRUNING_TENSOR_ATTR) for _, hook in forward_pre_hooks(module) if isinstance(hook, method)}


# --------------------------------------------------------------------------
# torch.export internals the exported-program entrance uses
# --------------------------------------------------------------------------


def export_load(data: bytes) -> Any:
    """The program ``torch.export.load`` returns from an archive's bytes (from memory: no temporary file, no name check).

    Through the pt2 loader itself: ``torch.export.load`` wraps it and, when it raises
    ``RuntimeError``, retries the archive as the pre-2.8 layout, whose members it unpickles
    in full; that fallback is never taken here.
    """
    import io

    contents = resolve(PT2_LOAD_API)(io.BytesIO(data))
    programs = contents.exported_programs
    if PT2_LOADED_MODEL not in programs:
        raise RuntimeError(f"the archive holds no program {PT2_LOADED_MODEL!r}")
    return programs[PT2_LOADED_MODEL]


def export_save(program: Any) -> bytes:
    """``torch.export.save`` into memory."""
    import io

    buffer = io.BytesIO()
    import_torch().export.save(program, buffer)
    return buffer.getvalue()


def restricted_load(data: bytes) -> Any:
    """``torch.load(weights_only=True)`` on bytes: torch's restricted unpickler, which runs nothing from the file."""
    import io

    return import_torch().load(io.BytesIO(data), weights_only=True)


def export_signature_types() -> Any:
    """torch.export's signature classes (``InputSpec``, ``InputKind``, ``TensorArgument``, ``ExportGraphSignature``)."""
    from types import SimpleNamespace

    signature = resolve("torch.export.graph_signature")
    return SimpleNamespace(
        InputSpec=signature.InputSpec, InputKind=signature.InputKind, TensorArgument=signature.TensorArgument,
        ExportGraphSignature=signature.ExportGraphSignature,
    )


def rebuilt_exported_program(program: Any, *, graph_signature: Any, state_dict: Any, constants: Any) -> Any:
    """A new ``ExportedProgram`` on ``program``'s (edited) graph module with a new signature and state."""
    exported_program = resolve("torch.export.exported_program.ExportedProgram")
    return exported_program(
        root=program.graph_module, graph=program.graph_module.graph, graph_signature=graph_signature,
        state_dict=state_dict, range_constraints=program.range_constraints,
        module_call_graph=program.module_call_graph, example_inputs=program.example_inputs,
        constants=constants, verifiers=[program.verifier],
    )


def tree_leaves(value: Any) -> list[Any]:
    """The leaves of a pytree (a program's outputs as a flat list)."""
    return list(resolve("torch.utils._pytree.tree_leaves")(value))


def map_node_arguments(arguments: Any, function: Any) -> Any:
    """``torch.fx.node.map_arg``: apply ``function`` to every graph node inside ``arguments``."""
    return resolve("torch.fx.node.map_arg")(arguments, function)
