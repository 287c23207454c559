"""Torch-free shape rules for stored reparametrizations.

The safetensors audit and the shape-only zip reader run these on header shapes
without importing torch; the state-dict fold runs them before computing
anything, since torch's kernel does not check shapes itself and can crash the
process on a bad pair.  ``dim`` is not stored: it is read off the shape of
``g`` (``v``'s shape with ones everywhere except at ``dim``; a 0-dim ``g`` means
``dim=None``, stored by torch as -1).
"""


from __future__ import annotations

import logging
from typing import Iterable, Mapping, Sequence

from .catalogue import LEGACY_WEIGHT_NORM_SUFFIXES, SPECTRAL_NORM_LEGACY, WEIGHT_LIKE_NAME, WEIGHT_NORM_LEGACY, Kind, Style
from .stored_keys import OrphanKey, StoredGroup, group_stored_keys

logger = logging.getLogger(__name__)

Shape = Sequence[int]

#: ``dim=None`` as torch stores it in the weight-norm hook and parametrization.
WHOLE_TENSOR_DIM = -1
#: The eps both spectral-norm spellings default to; eval-mode folding never uses it
#: for 2-D and larger weights (no power iteration runs).
_SPECTRAL_EPS = 1e-12


class StoredStateError(ValueError):
    """A stored reparametrization cannot be folded; ``key`` names the offending entry."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


class ShapeMismatchError(StoredStateError):
    """The stored parts of one tensor do not fit together (e.g. ``g`` fits no dim of ``v``)."""


class AmbiguousDimError(StoredStateError):
    """The stored shapes fit several ``dim`` values that give different weights."""


class OrphanKeyError(StoredStateError):
    """One half of a stored pair is present, the other is missing."""


class KeyClashError(StoredStateError):
    """Folding would put two entries under one key (one would be lost silently)."""


class StackedStateError(StoredStateError):
    """Another parametrization stacked on the tensor stored state the fold cannot interpret."""


def stacked_error(group: StoredGroup) -> StackedStateError:
    return StackedStateError(
        group.stacked[0],
        f"state of a parametrization stacked on the {group.spelling.label} of {group.folded_key}; "
        "a state dict does not say what that parametrization computes, so folding the "
        f"{group.spelling.kind.value} alone would drop it. Load the checkpoint into the model "
        "(wnaudit.load_state_dict) or fold the live model with wnaudit.fold(model, other=True)",
    )


def key_clashes(groups: Sequence[StoredGroup], keys: Iterable[str]) -> list[KeyClashError]:
    """Groups whose folded key is already stored, or shared with another group."""
    present = set(keys)
    clashes: list[KeyClashError] = []
    seen: dict[str, StoredGroup] = {}
    for group in groups:
        if group.folded_key in present:
            clashes.append(KeyClashError(group.keys[0], f"folds into {group.folded_key}, which is already stored"))
        elif group.folded_key in seen:
            other = seen[group.folded_key]
            clashes.append(
                KeyClashError(group.keys[0], f"folds into {group.folded_key}, as {other.keys[0]} ({other.spelling.label}) does")
            )
        seen.setdefault(group.folded_key, group)
    return clashes


def orphan_error(orphan: OrphanKey) -> OrphanKeyError:
    missing = ", ".join(orphan.missing)
    return OrphanKeyError(orphan.key, f"{orphan.spelling.label} entry without its sibling(s) {missing}")


# --------------------------------------------------------------------------
# Shape rules (torch-free)
# --------------------------------------------------------------------------


def weight_norm_dims(g_shape: Shape, v_shape: Shape) -> list[int]:
    """Every ``dim`` for which torch's weight norm would store a ``g`` of this shape."""
    g_shape, v_shape = tuple(g_shape), tuple(v_shape)
    if len(g_shape) == 0:
        return [WHOLE_TENSOR_DIM] if len(v_shape) > 0 else []
    if len(g_shape) != len(v_shape):
        return []
    return [
        dim
        for dim in range(len(v_shape))
        if g_shape[dim] == v_shape[dim] and all(size == 1 for i, size in enumerate(g_shape) if i != dim)
    ]


def spectral_norm_dims(weight_shape: Shape, u_shape: Shape, v_shape: Shape) -> list[int]:
    """Every ``dim`` for which spectral norm's ``u``/``v`` estimates have these shapes.

    ``u`` has the length of ``weight.shape[dim]``, ``v`` that of the other dims
    flattened (see ``reshape_weight_to_matrix``).
    """
    weight_shape = tuple(weight_shape)
    if len(weight_shape) < 2 or len(tuple(u_shape)) != 1 or len(tuple(v_shape)) != 1:
        return []
    numel = 1
    for size in weight_shape:
        numel *= size
    (u_len,), (v_len,) = tuple(u_shape), tuple(v_shape)
    return [
        dim
        for dim, size in enumerate(weight_shape)
        if size == u_len and size > 0 and numel // size == v_len
    ]


def check_group_shapes(group: StoredGroup, shapes: Mapping[str, Shape]) -> None:
    """Raise :class:`ShapeMismatchError` if the stored parts cannot be folded together.

    Empty tensors are refused too: torch's weight-norm kernel divides by zero
    on an empty dimension and kills the process with SIGFPE.
    """
    for key in group.keys:
        if any(size == 0 for size in shapes[key]):
            raise ShapeMismatchError(key, f"{group.spelling.label} part of shape {list(shapes[key])} is empty; it cannot be folded")
    if group.spelling.kind is Kind.WEIGHT_NORM:
        g_key, v_key = group.key("g"), group.key("v")
        if not weight_norm_dims(shapes[g_key], shapes[v_key]):
            raise ShapeMismatchError(
                g_key,
                f"weight-norm g of shape {list(shapes[g_key])} fits no dimension of v "
                f"{v_key} of shape {list(shapes[v_key])}",
            )
    elif group.spelling.kind is Kind.SPECTRAL_NORM:
        orig, u, v = (group.key(role) for role in ("orig", "u", "v"))
        if not spectral_norm_dims(shapes[orig], shapes[u], shapes[v]):
            raise ShapeMismatchError(
                orig,
                f"spectral-norm estimates u {list(shapes[u])} and v {list(shapes[v])} fit no "
                f"dimension of the weight of shape {list(shapes[orig])}",
            )


def group_stored_tensors(
    keys: Sequence[str], shapes: Mapping[str, Shape]
) -> tuple[list[StoredGroup], list[OrphanKey]]:
    """:func:`group_stored_keys`, then shapes decide the legacy pairs under ordinary names.

    ``gain_g`` beside ``gain_v`` is a legacy weight-norm pair only if the shapes
    fit one; under a name that is not weight-like, parts that do not fit are
    somebody's ordinary tensors and stay entries of their own.  (Under
    ``weight`` they are a broken pair, and the fold says so.)
    """
    groups, orphans = group_stored_keys(list(keys))
    kept = []
    for group in groups:
        halves = _weight_norm_v_among_spectral(group, shapes)
        if halves:
            orphans.extend(halves)
            continue
        if group.spelling.style is Style.LEGACY and not WEIGHT_LIKE_NAME.match(group.folded_key.rpartition(".")[2]):
            try:
                check_group_shapes(group, shapes)
            except ShapeMismatchError:
                logger.debug("%s: shapes fit no %s; kept as ordinary entries", group.folded_key, group.spelling.label)
                continue
        kept.append(group)
    return kept, orphans


def _weight_norm_v_among_spectral(group: StoredGroup, shapes: Mapping[str, Shape]) -> list[OrphanKey]:
    """``x.weight_v`` beside ``x.weight_u`` and ``x.weight_orig``, shaped like a weight, not a 1-D estimate.

    Legacy spectral norm's ``v`` is always 1-D; a ``_v`` with the weight's
    own rank is weight norm's ``v`` without its ``g``.  Then no triple is
    stored: the ``_v`` and the ``_orig`` are halves without their others
    (WN304), not a broken file.
    """
    if group.spelling is not SPECTRAL_NORM_LEGACY:
        return []
    v_key, orig_key = group.key("v"), group.key("orig")
    if v_key not in shapes or len(shapes[v_key]) <= 1:
        return []
    g_key = group.folded_key + LEGACY_WEIGHT_NORM_SUFFIXES[0]
    return [OrphanKey(orig_key, SPECTRAL_NORM_LEGACY, (v_key,)), OrphanKey(v_key, WEIGHT_NORM_LEGACY, (g_key,))]


def foldable_groups(groups: Iterable[StoredGroup], *, spectral_norm: bool) -> list[StoredGroup]:
    """The groups a fold handles: weight norm always, spectral norm on request."""
    kinds = {Kind.WEIGHT_NORM} | ({Kind.SPECTRAL_NORM} if spectral_norm else set())
    return [group for group in groups if group.spelling.kind in kinds]


