"""The text of the watch's findings: how often, which spelling, which class (and where it is defined), what to do."""

from __future__ import annotations

from ..core import torch_api
from ..core.catalogue import FOLD_CALLS, HAND_CALLED_WEIGHT_NORM
from .targets import Target, class_location

#: The label of a weight norm computed by code that calls torch's kernel itself.
HAND_CALLED_LABEL = f"weight norm ({HAND_CALLED_WEIGHT_NORM} called by hand)"
_HAND_CALLED_HINT = "compute the weight once at load (the kernel's result) and keep it as the layer's parameter"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _where(target: Target) -> str:
    """The holding module's class, and where to look: torch's own source for a plain ``nn.Conv1d`` helps nobody,
    so a torch class is named with the nearest enclosing class of the model's own code, and that one's location."""
    cls = target.module_class
    enclosing = target.enclosing
    if enclosing is not None and enclosing is not cls and torch_api.is_torch_class(cls):
        return f"in {cls.__name__} of {enclosing.__name__} (defined at {class_location(enclosing)})"
    return f"in {cls.__name__} (defined at {class_location(cls)})"


def _modes(calls: int, serving: int) -> str:
    if serving == calls:
        return "in eval mode or under inference_mode"
    if serving == 0:
        return "all in training mode"
    return f"{serving} of them in eval mode or under inference_mode"


def reparametrized_message(target: Target, calls: int, serving: int) -> str:
    """WN206: a weight of the catalogue (or torch's kernel called by hand) computed during the watched calls."""
    hint = FOLD_CALLS[target.kind] if target.kind is not None else None
    action = f"fold it once at load with {hint}" if hint else _HAND_CALLED_HINT
    return (
        f"{target.label} of {target.object} computed {_times(calls)} during the watched calls "
        f"({_modes(calls, serving)}) {_where(target)}; {action}"
    )


def normalization_message(target: Target, calls: int, serving: int) -> str:
    """WN207: a parameter normalized by hand, from parameters alone, on every call."""
    return (
        f"{target.object} is normalized by hand ({target.label}) and used as a layer's weight "
        f"{_times(calls)} during the watched calls ({_modes(calls, serving)}) {_where(target)}: it depends on "
        "parameters alone, so compute the normalized weight once at load for serving instead of on every call"
    )
