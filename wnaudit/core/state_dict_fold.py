"""Fold reparametrizations stored unfolded in a state dict, exactly.

A weight-normed layer saved without folding stores ``g`` and ``v`` instead of
its weight.  The fold computes the weight with torch's own kernel,
``torch._weight_norm(v, g, dim)``, the call both weight-norm spellings make in
their forward, so the result equals bit for bit what a module holding that
state computes on the same dtype.  ``dim`` is not stored; it is read off the
shape of ``g`` (``v``'s shape with ones everywhere except at ``dim``; a 0-dim
``g`` means ``dim=None``, stored by torch as -1).  When the shapes fit several
dims that give different bits, the fold refuses rather than guesses.

The shape checks here are torch-free on purpose: the safetensors audit runs
them on header shapes without importing torch.  They also guard the kernel,
which does not check shapes itself and can crash the process on a bad pair.
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any, Mapping, Sequence

from .catalogue import Kind, Style
from .shapes import (
    _SPECTRAL_EPS,
    AmbiguousDimError,
    ShapeMismatchError,
    StoredStateError,
    check_group_shapes,
    foldable_groups,
    key_clashes,
    orphan_error,
    spectral_norm_dims,
    weight_norm_dims,
)
from .stored_keys import StoredGroup, group_stored_keys

logger = logging.getLogger(__name__)



def fold_state_dict(state_dict: Mapping[str, Any], *, spectral_norm: bool = False) -> tuple[dict[str, Any], list[str]]:
    """Fold stored weight-norm pairs (both key spellings) into plain weight entries.

    Returns ``(new_state_dict, folded_keys)``.  Each folded entry takes the
    position of the first stored key of its group; every other entry is the
    very same object as in the input.  ``spectral_norm=True`` also folds
    spectral norm with eval-mode semantics (the stored ``u``/``v`` give sigma,
    no power iteration), as ``module.eval()`` computes it.

    Raises a :class:`StoredStateError` subclass (a ``ValueError``) naming the
    key for an orphaned half, parts whose shapes do not fit, or a spectral-norm
    ``dim`` the shapes cannot decide; nothing is computed in that case.
    """
    groups, orphans = group_stored_keys(list(state_dict.keys()))
    if orphans:
        raise orphan_error(orphans[0])
    return fold_groups(state_dict, foldable_groups(groups, spectral_norm=spectral_norm))


def fold_groups(state_dict: Mapping[str, Any], groups: Sequence[StoredGroup]) -> tuple[dict[str, Any], list[str]]:
    """Fold the given groups of ``state_dict``; shapes are all checked before any compute."""
    clashes = key_clashes(groups, state_dict.keys())
    if clashes:
        raise clashes[0]
    shapes = {key: tuple(state_dict[key].shape) for group in groups for key in group.keys}
    for group in groups:
        check_group_shapes(group, shapes)
        dtypes = {state_dict[key].dtype for key in group.keys}
        if len(dtypes) > 1:
            names = ", ".join(sorted(str(d).replace("torch.", "") for d in dtypes))
            raise StoredStateError(group.keys[0], f"the stored parts of {group.folded_key} have different dtypes ({names})")
    folded_values = {group.keys[0]: (group, fold_group(group, state_dict)) for group in groups}
    skipped = {key for group in groups for key in group.keys[1:]}
    result: dict[str, Any] = {}
    for key, value in state_dict.items():
        if key in skipped:
            continue
        if key in folded_values:
            group, weight = folded_values[key]
            result[group.folded_key] = weight
        else:
            result[key] = value
    return result, [group.folded_key for group in groups]


def fold_group(group: StoredGroup, tensors: Mapping[str, Any]) -> Any:
    """The weight one stored group computes, as a plain tensor (no autograd history)."""
    from . import torch_api

    torch = torch_api.import_torch()
    check_group_shapes(group, {key: tuple(tensors[key].shape) for key in group.keys})
    with torch.inference_mode(False), torch.no_grad():
        if group.spelling.kind is Kind.WEIGHT_NORM:
            weight = _fold_weight_norm(group, tensors)
        elif group.spelling.style is Style.LEGACY:
            weight = _fold_legacy_spectral_norm(group, tensors)
        else:
            weight = _fold_modern_spectral_norm(group, tensors)
    return weight.detach()


def _fold_weight_norm(group: StoredGroup, tensors: Mapping[str, Any]) -> Any:
    import torch

    g, v = tensors[group.key("g")], tensors[group.key("v")]
    dims = weight_norm_dims(g.shape, v.shape)
    if not dims:
        raise ShapeMismatchError(group.key("g"), f"weight-norm g of shape {list(g.shape)} fits no dimension of v of shape {list(v.shape)}")
    if g.device != v.device:
        raise StoredStateError(group.key("g"), f"g is on {g.device} but v is on {v.device}")
    if len(dims) == 1:
        return torch._weight_norm(v, g, dims[0])
    # Several size-1 dims of v (e.g. a Conv1d(1, 1, k)): g fits each of them.
    # torch computes them with different kernels whose last bits can differ,
    # so a guess could differ from the module: fold only if all agree.
    results = [torch._weight_norm(v, g, dim) for dim in dims]
    if all(torch.equal(results[0], other) for other in results[1:]):
        return results[0]
    raise AmbiguousDimError(
        group.key("g"),
        f"g of shape {list(g.shape)} fits dims {dims} of v of shape {list(v.shape)}, which give different "
        "weights; dim is not stored, so fold the live module with wnaudit.fold_weight_norm(model) instead",
    )


def _spectral_dim(group: StoredGroup, weight: Any, u: Any, v: Any, compute: Any) -> Any:
    """Compute with the one ``dim`` the shapes allow, or with any if all give the same bits."""
    import torch

    dims = spectral_norm_dims(weight.shape, u.shape, v.shape)
    if not dims:
        raise ShapeMismatchError(
            group.key("orig"),
            f"spectral-norm estimates u {list(u.shape)} and v {list(v.shape)} fit no dimension of the weight of shape {list(weight.shape)}",
        )
    results = [compute(dim) for dim in dims]
    if all(torch.equal(results[0], other) for other in results[1:]):
        return results[0]
    # e.g. Conv1d(16, 16, k): u/v fit dim 0 and dim 1.  The power iteration
    # leaves v = normalize(W_mat^T u) for the W_mat it ran on, so the stored
    # estimates themselves tell which reshape is the real one.
    consistent = [dim for dim in dims if _power_iteration_residual(weight, u, v, dim) < _CONSISTENCY_TOLERANCE]
    if len(consistent) == 1:
        return results[dims.index(consistent[0])]
    raise AmbiguousDimError(
        group.key("orig"),
        f"spectral-norm dim is ambiguous: u/v fit dims {dims} of the weight of shape {list(weight.shape)}, "
        "which give different weights, and the stored estimates do not decide it "
        "(fold the live module with wnaudit.fold(model, spectral_norm=True) instead)",
    )


#: How far v may be from normalize(W_mat^T u) (or u from normalize(W_mat v)) for the estimates to count as
#: coming from a power iteration on that W_mat (a wrong reshape is off by O(1)).
_CONSISTENCY_TOLERANCE = 1e-2


def _power_iteration_residual(weight: Any, u: Any, v: Any, dim: int) -> float:
    import torch

    normalize = torch.nn.functional.normalize
    matrix = weight.detach().double().movedim(dim, 0).reshape(weight.shape[dim], -1)
    u, v = u.detach().double(), v.detach().double()
    # The modern iteration updates u then v, the legacy one v then u: whichever
    # came last is exactly the normalized product of the matrix with the other.
    v_residual = (normalize(matrix.t() @ u, dim=0) - v).abs().max()
    u_residual = (normalize(matrix @ v, dim=0) - u).abs().max()
    return float(min(v_residual, u_residual))


def _fold_legacy_spectral_norm(group: StoredGroup, tensors: Mapping[str, Any]) -> Any:
    """Run torch's own ``SpectralNorm.compute_weight`` without a power iteration (eval mode)."""
    from . import torch_api
    from .catalogue import LEGACY_SPECTRAL_NORM_SUFFIXES, SPECTRAL_NORM_LEGACY

    hook_class = torch_api.implementation(SPECTRAL_NORM_LEGACY)
    weight, u, v = (tensors[group.key(role)] for role in ("orig", "u", "v"))
    name = "weight"
    # The hook reads NAME_orig, NAME_u, NAME_v off the module it is given.
    holder = SimpleNamespace(**{name + suffix: t for suffix, t in zip(LEGACY_SPECTRAL_NORM_SUFFIXES, (weight, u, v))})

    def compute(dim: int) -> Any:
        hook = hook_class(name=name, n_power_iterations=1, dim=dim, eps=_SPECTRAL_EPS)
        return hook.compute_weight(holder, do_power_iteration=False)

    return _spectral_dim(group, weight, u, v, compute)


def _fold_modern_spectral_norm(group: StoredGroup, tensors: Mapping[str, Any]) -> Any:
    """Run torch's own ``_SpectralNorm.forward`` in eval mode on the stored state."""
    from . import torch_api
    from .catalogue import MODERN_SPECTRAL_NORM_BUFFERS, SPECTRAL_NORM_MODERN

    parametrization: Any = torch_api.implementation(SPECTRAL_NORM_MODERN)
    weight, u, v = (tensors[group.key(role)] for role in ("orig", "u", "v"))
    buffers = dict(zip(MODERN_SPECTRAL_NORM_BUFFERS, (u, v)))

    def compute(dim: int) -> Any:
        state = SimpleNamespace(dim=dim, eps=_SPECTRAL_EPS, training=False, **buffers)
        state._reshape_weight_to_matrix = lambda w: parametrization._reshape_weight_to_matrix(state, w)
        return parametrization.forward(state, weight)

    return _spectral_dim(group, weight, u, v, compute)


# --------------------------------------------------------------------------
# Loading an unfolded checkpoint into a folded module
# --------------------------------------------------------------------------


def load_unfolded_state_dict(module: Any, state_dict: Mapping[str, Any], strict: bool = True) -> Any:
    """Load a checkpoint saved *before* folding into a module folded *already*.

    Serving code folds at build time, then meets checkpoints that still store
    ``g``/``v`` (or spectral-norm ``orig``/``u``/``v``).  Every stored group
    whose folded key the module expects (and whose stored keys it does not)
    is folded, exactly as the live module would have computed it; everything
    else is passed through to ``module.load_state_dict(..., strict=strict)``,
    whose result is returned.
    """
    expected = set(module.state_dict().keys())
    groups, orphans = group_stored_keys(list(state_dict.keys()))
    if orphans:
        raise orphan_error(orphans[0])
    wanted = [
        group
        for group in groups
        if group.spelling.kind in (Kind.WEIGHT_NORM, Kind.SPECTRAL_NORM)
        and group.folded_key in expected
        and not any(key in expected for key in group.keys)
    ]
    folded, _ = fold_groups(state_dict, wanted)
    return module.load_state_dict(folded, strict=strict)
