"""One load contract for serving code: any checkpoint, any model, a folded model at the end.

``load_state_dict(model, state_dict)`` accepts a checkpoint saved folded or
unfolded (either weight-norm key spelling) into a model that is folded or
still parametrized, and leaves the model folded.  Every weight ends up
bit-identical to "load into the parametrized model as torch would, then fold":

* a live layer and an unfolded entry: torch's own ``load_state_dict`` copies
  ``g``/``v`` in (keys of the other spelling renamed first), then the module
  fold computes the weight with the module's own dim, dtype and device;
* a live layer and a folded entry: the layer is folded first (transactionally),
  then the stored weight is copied in, as into any folded model;
* a folded layer and an unfolded entry: the stored parts are cast to the
  layer's dtype and device first, then folded with the dim and spelling the
  layer was folded from (the record the fold left), as the module would have;
* a folded layer and a folded entry: torch copies it in.

Submodules named in ``exclude`` stay parametrized: torch loads their entries
as it would (a legacy-spelled pair renamed onto a modern layer first, as
torch's own compatibility hook does) and nothing folds them.

Refusals (a stacked chain, an ambiguous dim, a broken pair, an ``exclude``
naming no submodule) are raised before anything in the model changes.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping

from .catalogue import LEGACY_WEIGHT_NORM_SUFFIXES, ORIGINAL, PARAMETRIZATIONS_ATTR, WEIGHT_NORM_G_INDEX, WEIGHT_NORM_V_INDEX, Kind, Style
from .exclusion import Exclusion
from .live import LiveReparametrization, find_reparametrizations
from .module_fold import apply_plan, plan_fold, wanted_kinds
from .shapes import group_stored_tensors, orphan_error
from .state_dict_fold import fold_groups, groups_for_folded_entries
from .stored_keys import StoredGroup

logger = logging.getLogger("wnaudit.fold")


def load_state_dict(
    module: Any,
    state_dict: Mapping[str, Any],
    strict: bool = True,
    *,
    spectral_norm: bool = False,
    other: bool = False,
    exclude: str | Iterable[str] = (),
) -> Any:
    """Load a folded or unfolded checkpoint into ``module`` and leave it folded.

    Weight norm is always folded; ``spectral_norm`` and ``other`` fold those
    kinds too, as :func:`wnaudit.fold` does.  The submodules named in
    ``exclude`` stay parametrized.  Returns what torch's
    ``module.load_state_dict(..., strict=strict)`` returns (missing and
    unexpected keys, named as the model held them when loading).
    """
    wanted = wanted_kinds(weight_norm=True, spectral_norm=spectral_norm, other=other)
    exclusion = Exclusion.of(module, exclude)
    plan = plan_fold(module, wanted, exclusion)
    # Every live layer, excluded or not, loads a pair of either spelling.
    live = {item.qualified_name: item for item in find_reparametrizations(module) if item.kinds & wanted}
    expected = module.state_dict()
    _refuse_folded_entries_for_excluded(live, {item.qualified_name for item in plan}, state_dict, expected, exclusion)
    # Live layers whose checkpoint entry is already folded: fold them first,
    # so that the plain stored weight has a plain parameter to go into.
    early = [item for item in plan if item.qualified_name in state_dict and item.qualified_name not in expected]
    respelled = _respelled(state_dict, live, expected)
    # Stored groups for layers folded already: computed (and refused) before any change.
    groups, targets = groups_for_folded_entries(module, respelled, expected)
    folded, _ = fold_groups(respelled, groups, targets=targets)
    if early:
        apply_plan(early)
    result = module.load_state_dict(folded, strict=strict)
    apply_plan(plan_fold(module, wanted, exclusion))
    return result


def _refuse_folded_entries_for_excluded(
    live: Mapping[str, LiveReparametrization],
    planned: set[str],
    state_dict: Mapping[str, Any],
    expected: Mapping[str, Any],
    exclusion: Exclusion,
) -> None:
    """An excluded layer stays parametrized, which needs its stored pair: say so before changing anything,
    instead of torch's list of missing keys after the rest of the model was already folded."""
    stuck = sorted(name for name in live if name not in planned and name in state_dict and name not in expected)
    if stuck:
        shown = ", ".join(stuck[:3]) + (f" and {len(stuck) - 3} more" if len(stuck) > 3 else "")
        raise ValueError(
            f"exclude={list(exclusion.names)!r} keeps {shown} parametrized, but the checkpoint stores "
            f"{'it' if len(stuck) == 1 else 'them'} folded (the weight-norm pair is gone): load it without "
            "exclude= (the model is then folded whole), or load the unfolded checkpoint"
        )


def _respelled(state_dict: Mapping[str, Any], live: Mapping[str, LiveReparametrization], expected: Mapping[str, Any]) -> dict[str, Any]:
    """Rename stored weight-norm keys of the other spelling to those the live layer loads."""
    shapes = {key: tuple(value.shape) for key, value in state_dict.items() if hasattr(value, "shape")}
    groups, orphans = group_stored_tensors(list(state_dict.keys()), shapes)
    if orphans:
        raise orphan_error(orphans[0])
    renames: dict[str, str] = {}
    for group in groups:
        item = live.get(group.folded_key)
        if item is None or group.spelling.kind is not Kind.WEIGHT_NORM or item.spelling.kind is not Kind.WEIGHT_NORM:
            continue
        if any(key in expected for key in group.keys):
            continue
        for role, key in group.parts:
            renames[key] = _live_key(group, item, role)
    return {renames.get(key, key): value for key, value in state_dict.items()}


def _live_key(group: StoredGroup, item: LiveReparametrization, role: str) -> str:
    prefix = group.folded_key[: len(group.folded_key) - len(item.tensor_name)]
    if item.spelling.style is Style.LEGACY:
        return prefix + item.tensor_name + dict(zip(("g", "v"), LEGACY_WEIGHT_NORM_SUFFIXES))[role]
    index = WEIGHT_NORM_G_INDEX if role == "g" else WEIGHT_NORM_V_INDEX
    return f"{prefix}{PARAMETRIZATIONS_ATTR}.{item.tensor_name}.{ORIGINAL}{index}"
