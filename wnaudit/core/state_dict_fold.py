"""Fold reparametrizations stored unfolded in a state dict, exactly.

A weight-normed layer saved without folding stores ``g`` and ``v`` instead of
its weight.  The fold computes the weight with torch's own kernel,
``torch._weight_norm(v, g, dim)``, the call both weight-norm spellings make in
their forward, so the result equals bit for bit what a module holding that
state computes on the same dtype.  ``dim`` is not stored; it is read off the
shape of ``g`` (``v``'s shape with ones everywhere except at ``dim``; a 0-dim
``g`` means ``dim=None``, stored by torch as -1).  When the shapes fit several
dims that give different bits, the fold refuses rather than guesses.

What a state dict cannot tell, and what the fold does about it:

* the ``dim`` itself: ``dim=-2`` on a 2-D weight stores the same shapes as
  ``dim=0`` but torch computes it by another kernel (the fused one only runs
  for ``0`` and ``ndim - 1``), so the last bits differ.  The fold uses the
  positive dim read off ``g`` unless told the module's own (``dims=``, or the
  record a fold leaves on the module, which the loaders read);
* the dtype the module computes in: a module casts ``g`` and ``v`` to its own
  dtype when it loads them and computes there, so the loaders cast first;
* a stateless parametrization stacked on weight norm leaves no key at all
  (only stateful ones do, and those are refused): the loaders, which see the
  model, get it right; ``fold_state_dict`` alone cannot know.

The shape checks here are torch-free on purpose: the safetensors audit runs
them on header shapes without importing torch.  They also guard the kernel,
which does not check shapes itself and can crash the process on a bad pair.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Iterator, Mapping, Sequence

from . import torch_api
from .catalogue import LEGACY_SPECTRAL_NORM_SUFFIXES, SPECTRAL_NORM_LEGACY, Kind, Style
from .shapes import (
    _SPECTRAL_EPS,
    WHOLE_TENSOR_DIM,
    AmbiguousDimError,
    ShapeMismatchError,
    StackedStateError,
    StoredStateError,
    check_group_shapes,
    foldable_groups,
    group_stored_tensors,
    key_clashes,
    orphan_error,
    spectral_norm_dims,
    stacked_error,
    weight_norm_dims,
)
from .stored_keys import StoredGroup

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FoldTarget:
    """What the module that will hold a folded tensor says about it.

    ``dim`` is the dim as the module stores it (``-1`` for ``dim=None``; None:
    read it off the shapes); ``style`` is the spectral-norm spelling to compute
    as (None: the stored one); ``dtype``/``device``: cast the stored parts there
    first, as loading them into the module would.
    """

    dim: int | None = None
    style: Style | None = None
    dtype: Any = None
    device: Any = None


def fold_state_dict(
    state_dict: Mapping[str, Any],
    *,
    spectral_norm: bool = False,
    dims: Mapping[str, int | None] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Fold stored weight-norm pairs (both key spellings) into plain weight entries.

    Returns ``(new_state_dict, folded_keys)``.  Each folded entry takes the
    position of the first stored key of its group; every other entry is the
    very same object as in the input.  ``spectral_norm=True`` also folds
    spectral norm with eval-mode semantics (the stored ``u``/``v`` give sigma,
    no power iteration), as ``module.eval()`` computes it.

    ``dims`` maps a folded key to the ``dim`` its module was built with (as
    given to ``weight_norm``/``spectral_norm``; None is ``dim=None``), for what
    the shapes cannot tell: a negative dim such as ``-2`` takes another torch
    kernel than the positive one with the same shapes, and square spectral-norm
    weights fit two dims.  Without it the dim is read off the shapes.

    Raises a :class:`StoredStateError` subclass (a ``ValueError``) naming the
    key for an orphaned half, parts whose shapes do not fit, a ``dim`` the
    shapes cannot decide, or the state of a parametrization stacked on the
    weight norm; nothing is computed in that case.
    """
    shapes = {key: tuple(value.shape) for key, value in state_dict.items() if hasattr(value, "shape")}
    groups, orphans = group_stored_tensors(list(state_dict.keys()), shapes)
    if orphans:
        raise orphan_error(orphans[0])
    foldable = foldable_groups(groups, spectral_norm=spectral_norm)
    unknown = sorted(set(dims or {}) - {group.folded_key for group in foldable})
    if unknown:
        raise ValueError(f"dims names {unknown[0]}, which this state dict does not store as a tensor to fold")
    targets = {key: FoldTarget(dim=WHOLE_TENSOR_DIM if dim is None else int(dim)) for key, dim in (dims or {}).items()}
    return fold_groups(state_dict, foldable, targets=targets)


def fold_groups(
    state_dict: Mapping[str, Any],
    groups: Sequence[StoredGroup],
    *,
    targets: Mapping[str, FoldTarget] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Fold the given groups of ``state_dict``; everything is checked before any compute."""
    targets = targets or {}
    clashes = key_clashes(groups, state_dict.keys())
    if clashes:
        raise clashes[0]
    shapes = {key: tuple(state_dict[key].shape) for group in groups for key in group.keys}
    for key in shapes:
        missing = torch_api.storage_missing(state_dict[key])
        if missing is not None:
            raise StoredStateError(key, f"{missing}; there is nothing to fold")
    for group in groups:
        if group.stacked:
            raise stacked_error(group)
        check_group_shapes(group, shapes)
        target = targets.get(group.folded_key, FoldTarget())
        dtypes = {state_dict[key].dtype for key in group.keys}
        if len(dtypes) > 1 and target.dtype is None:
            names = ", ".join(sorted(str(d).replace("torch.", "") for d in dtypes))
            raise StoredStateError(group.keys[0], f"the stored parts of {group.folded_key} have different dtypes ({names})")
    folded_values = {group.keys[0]: (group, fold_group(group, state_dict, targets.get(group.folded_key))) for group in groups}
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


def fold_group(group: StoredGroup, tensors: Mapping[str, Any], target: FoldTarget | None = None) -> Any:
    """The weight one stored group computes, as a plain tensor (no autograd history)."""
    torch = torch_api.import_torch()
    target = target or FoldTarget()
    check_group_shapes(group, {key: tuple(tensors[key].shape) for key in group.keys})
    with torch.inference_mode(False), torch.no_grad():
        parts = {role: _placed(tensors[key], target) for role, key in group.parts}
        if group.spelling.kind is Kind.WEIGHT_NORM:
            weight = _fold_weight_norm(group, parts, target)
        elif (target.style or group.spelling.style) is Style.LEGACY:
            weight = _fold_legacy_spectral_norm(group, parts, target)
        else:
            weight = _fold_modern_spectral_norm(group, parts, target)
    return weight.detach()


def _placed(tensor: Any, target: FoldTarget) -> Any:
    """The stored part as the module holds it once loaded (``copy_`` casts the same way)."""
    if target.dtype is None and target.device is None:
        return tensor
    return tensor.to(device=target.device, dtype=target.dtype)


def _given_dim(group: StoredGroup, role: str, dim: int, fitting: Sequence[int], ndim: int, what: str) -> int:
    """Check that the module's own dim fits the stored shapes, and return it as the module stores it."""
    position = dim if dim == WHOLE_TENSOR_DIM and what == "weight norm" else dim % ndim if ndim else dim
    if position not in fitting:
        raise ShapeMismatchError(group.key(role), f"the stored shapes do not fit the {what} dim {dim} the module uses (they fit {list(fitting)})")
    return dim


#: Below this many elements a first-dim weight norm runs on one thread (torch's own grain size).
SERIAL_FOLD_ELEMENTS = 32768


def _kernel(v: Any, g: Any, dim: int) -> Any:
    """torch's weight-norm kernel; a small first-dim fold on one thread.

    The first-dim kernel hands each row to one thread whole, so its bits do
    not depend on the thread count; for a small tensor, waking the thread
    pool costs far more than the arithmetic (a checkpoint of 25,000 small
    pairs spent most of its fold in it on a busy machine).  Other dims (the
    last-dim kernel sums rows per thread) keep torch's thread count.
    """
    if dim != 0 or v.numel() >= SERIAL_FOLD_ELEMENTS:
        return torch_api.weight_norm_kernel(v, g, dim)
    with _one_thread():
        return torch_api.weight_norm_kernel(v, g, dim)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    torch = torch_api.import_torch()
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _fold_weight_norm(group: StoredGroup, parts: Mapping[str, Any], target: FoldTarget) -> Any:
    torch = torch_api.import_torch()
    g, v = parts["g"], parts["v"]
    dims = weight_norm_dims(g.shape, v.shape)
    if not dims:
        raise ShapeMismatchError(group.key("g"), f"weight-norm g of shape {list(g.shape)} fits no dimension of v of shape {list(v.shape)}")
    if g.device != v.device:
        raise StoredStateError(group.key("g"), f"g is on {g.device} but v is on {v.device}")
    if target.dim is not None:
        # The dim as the module has it: dim=-2 runs another kernel than dim=0.
        return _kernel(v, g, _given_dim(group, "g", target.dim, dims, v.dim(), "weight norm"))
    if len(dims) == 1:
        return _kernel(v, g, dims[0])
    # Several size-1 dims of v (e.g. a Conv1d(1, 1, k)): g fits each of them.
    # torch computes them with different kernels whose last bits can differ,
    # so a guess could differ from the module: fold only if all agree.
    results = [_kernel(v, g, dim) for dim in dims]
    if all(torch.equal(results[0], other) for other in results[1:]):
        return results[0]
    raise AmbiguousDimError(
        group.key("g"),
        f"g of shape {list(g.shape)} fits dims {dims} of v of shape {list(v.shape)}, which give different "
        "weights; dim is not stored, so pass it (fold_state_dict(..., dims=...)), load into the model "
        "(wnaudit.load_state_dict) or fold the live module with wnaudit.fold_weight_norm(model)",
    )


def _spectral_dim(group: StoredGroup, weight: Any, u: Any, v: Any, compute: Any, target: FoldTarget) -> Any:
    """Compute with the one ``dim`` the shapes allow, the module's own, or any if all give the same bits."""
    torch = torch_api.import_torch()
    dims = spectral_norm_dims(weight.shape, u.shape, v.shape)
    if not dims:
        raise ShapeMismatchError(
            group.key("orig"),
            f"spectral-norm estimates u {list(u.shape)} and v {list(v.shape)} fit no dimension of the weight of shape {list(weight.shape)}",
        )
    if target.dim is not None:
        return compute(_given_dim(group, "orig", target.dim, dims, weight.dim(), "spectral norm"))
    results = [compute(dim) for dim in dims]
    if all(torch.equal(results[0], other) for other in results[1:]):
        return results[0]
    # e.g. Conv1d(16, 16, k): u/v fit dim 0 and dim 1.  The power iteration
    # leaves v = normalize(W_mat^T u) for the W_mat it ran on, so estimates that
    # came from one really decide which reshape is the real one.  Estimates that
    # never ran on this weight (legacy spectral norm's random start, a weight
    # changed afterwards) decide nothing, and short vectors agree by chance
    # (two-element ones within 1e-2 in about one seed of a hundred): refuse then.
    decided = _decided_by_estimates(weight, u, v, dims)
    if decided is not None:
        return results[dims.index(decided)]
    raise AmbiguousDimError(
        group.key("orig"),
        f"spectral-norm dim is ambiguous: u/v fit dims {dims} of the weight of shape {list(weight.shape)}, "
        "which give different weights, and the stored estimates do not decide it; pass the dim "
        "(fold_state_dict(..., dims=...)), load into the model (wnaudit.load_state_dict) or fold the "
        "live module with wnaudit.fold(model, spectral_norm=True)",
    )


#: How far v may be from normalize(W_mat^T u) (or u from normalize(W_mat v)) for the estimates to count as
#: coming from a power iteration on that W_mat (a wrong reshape is off by O(1); training moves the weight
#: a little after the last iteration).
_CONSISTENCY_TOLERANCE = 1e-2
#: A wrong reshape must be off by at least this much for the estimates to decide.
_INCONSISTENCY_FLOOR = 0.25
#: Shortest u and v for which a chance agreement within the tolerance is negligible (about 1e-2 ** (n - 1)).
_MIN_DECIDING_LENGTH = 8


def _decided_by_estimates(weight: Any, u: Any, v: Any, dims: Sequence[int]) -> int | None:
    if min(u.numel(), v.numel()) < _MIN_DECIDING_LENGTH:
        return None
    residuals = {dim: _power_iteration_residual(weight, u, v, dim) for dim in dims}
    consistent = [dim for dim, residual in residuals.items() if residual < _CONSISTENCY_TOLERANCE]
    if len(consistent) != 1:
        return None
    if any(residual < _INCONSISTENCY_FLOOR for dim, residual in residuals.items() if dim != consistent[0]):
        return None
    return consistent[0]


def _power_iteration_residual(weight: Any, u: Any, v: Any, dim: int) -> float:
    torch = torch_api.import_torch()
    normalize = torch.nn.functional.normalize
    matrix = weight.detach().double().movedim(dim, 0).reshape(weight.shape[dim], -1)
    u, v = u.detach().double(), v.detach().double()
    # The modern iteration updates u then v, the legacy one v then u: whichever
    # came last is exactly the normalized product of the matrix with the other.
    v_residual = (normalize(matrix.t() @ u, dim=0) - v).abs().max()
    u_residual = (normalize(matrix @ v, dim=0) - u).abs().max()
    return float(min(v_residual, u_residual))


def _fold_legacy_spectral_norm(group: StoredGroup, parts: Mapping[str, Any], target: FoldTarget) -> Any:
    """Run torch's own ``SpectralNorm.compute_weight`` without a power iteration (eval mode)."""
    hook_class = torch_api.implementation(SPECTRAL_NORM_LEGACY)
    weight, u, v = (parts[role] for role in ("orig", "u", "v"))
    name = "weight"
    # The hook reads NAME_orig, NAME_u, NAME_v off the module it is given.
    holder = SimpleNamespace(**{name + suffix: t for suffix, t in zip(LEGACY_SPECTRAL_NORM_SUFFIXES, (weight, u, v))})

    def compute(dim: int) -> Any:
        hook = hook_class(name=name, n_power_iterations=1, dim=dim, eps=_SPECTRAL_EPS)
        return hook.compute_weight(holder, do_power_iteration=False)

    return _spectral_dim(group, weight, u, v, compute, target)


def _fold_modern_spectral_norm(group: StoredGroup, parts: Mapping[str, Any], target: FoldTarget) -> Any:
    """Run torch's own ``_SpectralNorm.forward`` in eval mode on the stored state."""
    weight, u, v = (parts[role] for role in ("orig", "u", "v"))

    def compute(dim: int) -> Any:
        return torch_api.spectral_norm_eval_forward(weight, u, v, dim, _SPECTRAL_EPS)

    return _spectral_dim(group, weight, u, v, compute, target)


# --------------------------------------------------------------------------
# Loading an unfolded checkpoint into a folded module
# --------------------------------------------------------------------------


def target_in(module: Any, key: str, tensor: Any, group: StoredGroup) -> FoldTarget:
    """How ``module`` would have computed the tensor it now holds, folded, under ``key``.

    The dtype and device are those of the folded tensor; the dim and spelling
    come from the record the fold left on the owner (absent: read off shapes).
    """
    from .module_fold import fold_record

    owner_path, _, name = key.rpartition(".")
    try:
        owner = module.get_submodule(owner_path) if owner_path else module
    except AttributeError:
        owner = None
    record = fold_record(owner, name) if owner is not None else None
    placement = FoldTarget(dtype=tensor.dtype, device=tensor.device)
    if record is None:
        return placement
    kind, style, dim, stacked = record
    if stacked:
        raise StackedStateError(
            group.keys[0],
            f"the model's {key} was folded from {kind} stacked with another parametrization, which the stored "
            f"{group.spelling.kind.value} alone does not give; load the checkpoint into the model before "
            "folding it (wnaudit.load_state_dict on the model as built), then it folds the whole chain",
        )
    if kind != group.spelling.kind.value:
        raise StoredStateError(group.keys[0], f"stored as {group.spelling.kind.value}, but the model's {key} was folded from {kind}")
    return FoldTarget(dim=dim, style=Style(style), dtype=tensor.dtype, device=tensor.device)


def groups_for_folded_entries(
    module: Any, state_dict: Mapping[str, Any], expected: Mapping[str, Any]
) -> tuple[list[StoredGroup], dict[str, FoldTarget]]:
    """The stored groups whose folded key the module holds as a plain tensor, and how to fold each."""
    shapes = {key: tuple(value.shape) for key, value in state_dict.items() if hasattr(value, "shape")}
    groups, orphans = group_stored_tensors(list(state_dict.keys()), shapes)
    if orphans:
        raise orphan_error(orphans[0])
    wanted = [
        group
        for group in groups
        if group.spelling.kind in (Kind.WEIGHT_NORM, Kind.SPECTRAL_NORM)
        and group.folded_key in expected
        and not any(key in expected for key in group.keys)
    ]
    targets = {group.folded_key: target_in(module, group.folded_key, expected[group.folded_key], group) for group in wanted}
    return wanted, targets


def load_unfolded_state_dict(module: Any, state_dict: Mapping[str, Any], strict: bool = True) -> Any:
    """Load a checkpoint saved *before* folding into a module folded *already*.

    Every stored group whose folded key the module expects (and whose stored
    keys it does not) is folded as the live module would have computed it
    after loading: the parts cast to the module's dtype and device first, the
    dim and spelling the module had (recorded by the fold).  Everything else is
    passed through to ``module.load_state_dict(..., strict=strict)``, whose
    result is returned.  :func:`wnaudit.load_state_dict` is the general form.
    """
    expected = module.state_dict()
    wanted, targets = groups_for_folded_entries(module, state_dict, expected)
    folded, _ = fold_groups(state_dict, wanted, targets=targets)
    return module.load_state_dict(folded, strict=strict)
