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


#: The one install command every "not installed" hint names: it works from any environment, a checkout or
#: not (naming the extra with the project name would ask a package index for a distribution nothing publishes).  numpy: torch
#: warns without it on every load and safetensors' ``save_file`` fails.
TORCH_INSTALL = "python -m pip install torch safetensors numpy"


def missing(what: str, needs: str) -> str:
    """``WHAT is not installed; NEEDS needs it: <command>``: one wording for every entrance."""
    return f"{what} is not installed; {needs} needs it: {TORCH_INSTALL}"


class TorchMissingError(RuntimeError):
    """torch is needed for modules and checkpoints but is not installed."""


def import_torch() -> Any:
    """Import torch, or explain which extra to install."""
    try:
        return importlib.import_module("torch")
    except ImportError as error:  # pragma: no cover - exercised only without torch
        raise TorchMissingError(missing("torch", "reading this checkpoint or module")) from error


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


def reapply_weight_norm(owner: Any, name: str, weight: Any, *, modern: bool, hook_key: int | None) -> None:
    """Set a live weight norm's g and v so that it computes ``weight`` again, as torch does when it applies one:
    ``g = norm_except_dim(weight, 2, dim)``, ``v = weight`` (the modern spelling through its own ``right_inverse``)."""
    torch = import_torch()
    with torch.no_grad():
        if modern:
            setattr(owner, name, weight)
            return
        dim = forward_pre_hook(owner, hook_key).dim
        getattr(owner, name + "_g").copy_(torch.norm_except_dim(weight, 2, dim))
        getattr(owner, name + "_v").copy_(weight)


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


# --------------------------------------------------------------------------
# what the runtime watch (wnaudit.watch) hooks into while a model runs
# --------------------------------------------------------------------------


def dispatch_mode_class() -> Any:
    """``TorchDispatchMode``, the per-thread mode that sees every aten operator a call runs (as FlopCounterMode does)."""
    return resolve("torch.utils._python_dispatch.TorchDispatchMode")


def aten_operators(names: tuple[str, ...]) -> frozenset[Any]:
    """The aten operator packets with these names (``func.overloadpacket`` in a dispatch mode)."""
    aten = import_torch().ops.aten
    return frozenset(getattr(aten, name) for name in names)


def register_global_forward_pre_hook(hook: Any) -> Any:
    """A forward-pre-hook run before every module call in the process; returns its removable handle."""
    return resolve("torch.nn.modules.module.register_module_forward_pre_hook")(hook)


def inference_mode_enabled() -> bool:
    return bool(import_torch().is_inference_mode_enabled())


def parameter_class() -> Any:
    return import_torch().nn.Parameter


def tensor_class() -> Any:
    return import_torch().Tensor


def module_class() -> Any:
    return import_torch().nn.Module


def parametrization_list_class() -> Any:
    """The module torch calls, in the parametrized attribute's getter, to compute a parametrized tensor."""
    from .catalogue import OTHER_PARAMETRIZATION

    return implementation(OTHER_PARAMETRIZATION)


def uncompiled(module: Any) -> Any:
    """The module a ``torch.compile`` wrapper (``OptimizedModule``) holds, or the module itself.

    Read only when dynamo is already loaded: a plain module never needs it imported.
    """
    import sys

    if "torch._dynamo" not in sys.modules:
        return module
    if isinstance(module, resolve("torch._dynamo.eval_frame.OptimizedModule")):
        return module._orig_mod
    return module


def class_before_parametrizations(module: Any) -> Any:
    """The class a module had before torch's parametrize swapped in its ``Parametrized...`` subclass."""
    return parametrize_module().type_before_parametrizations(module)


def is_torch_class(cls: type) -> bool:
    """A class torch itself defines (``nn.Conv1d``, ``nn.Sequential``): its source tells a user nothing about their model."""
    module = getattr(cls, "__module__", "") or ""
    return module == "torch" or module.startswith("torch.")
