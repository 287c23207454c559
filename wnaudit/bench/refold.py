"""Bench a checkpoint that ``wnaudit --fix`` folded, on a model that still applies weight norm.

The folded file holds ``conv.weight`` where the model expects ``g`` and ``v``.
What the bench compares is the cost of the live norm, so the model's weight
norms are applied again to the folded weights (``g = ||w||``, ``v = w``: the
live model computes the stored weight, up to rounding) and the timing goes on.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..core import torch_api
from ..core.catalogue import Kind, Style
from ..core.live import find_reparametrizations

#: Said in the report when a folded checkpoint was benched this way.
REFOLD_NOTE = "folded by wnaudit: weight norm re-applied to its folded weights, so the cost of the live norm is what is compared"


def load_folded(module: Any, state: Mapping[str, Any]) -> bool:
    """Load a folded ``state`` into the weight-normed ``module``; False (nothing changed) when it is not one."""
    sites = {live.qualified_name: live for live in find_reparametrizations(module) if live.spelling.kind is Kind.WEIGHT_NORM and not live.stacked}
    model_keys = set(module.state_dict())
    unexpected = set(state) - model_keys
    missing = model_keys - set(state)
    owners = tuple(f"{sites[key].owner_name}." if sites[key].owner_name else "" for key in unexpected if key in sites)
    if not unexpected or not unexpected <= set(sites) or not all(key.startswith(owners) for key in missing):
        return False
    for key in unexpected:
        live = sites[key]
        torch_api.reapply_weight_norm(live.owner, live.tensor_name, state[key], modern=live.spelling.style is Style.MODERN, hook_key=live.hook_key)
    merged = dict(module.state_dict())
    merged.update((key, value) for key, value in state.items() if key not in unexpected)
    module.load_state_dict(merged, strict=True)
    return True
