"""Recognise training state in a checkpoint: what a fold in place would silently break.

An optimizer's state dict refers to parameters by position (``param_groups``'
``params`` lists, ``state`` keyed by index), a scheduler's carries the
optimizer's learning rates; both were built for the unfolded ``g``/``v``
parameters.  After a fold there is one tensor where there were two, so
resuming from the folded file misaligns or fails.  Such a checkpoint is folded
only into a separate inference copy (``-o``), or in place when the user asks
for it explicitly (:data:`IN_PLACE_FLAG`).
"""

from __future__ import annotations

import collections
from typing import Any, Iterator, Mapping

#: The command-line flag that allows folding a training checkpoint in place.
IN_PLACE_FLAG = "--fix-training-in-place"

#: Keys under which trainers store optimizer or scheduler state (Lightning,
#: Hugging Face Trainer, hand-written loops).  Structure is checked too, so
#: ``optim_g`` of a GAN vocoder is recognised by what it holds.
TRAINING_STATE_KEYS = frozenset(
    {
        "optimizer_states", "optimizer", "optimizers", "optimizer_state_dict", "optim", "opt",
        "lr_schedulers", "lr_scheduler", "scheduler", "schedulers", "scheduler_state_dict",
    }
)
_OPTIMIZER_STATE = frozenset({"state", "param_groups"})
_SCHEDULER_STATE = frozenset({"base_lrs", "last_epoch"})


def training_state(obj: Any) -> str | None:
    """A short description of the first training state found (``"optimizer state at optim_g"``), or None."""
    for location, mapping in _mappings(obj):
        keys = {key for key in mapping if isinstance(key, str)}
        where = ".".join(location) or "the top level"
        if _OPTIMIZER_STATE <= keys:
            return f"optimizer state at {where}"
        if _SCHEDULER_STATE <= keys:
            return f"scheduler state at {where}"
        for key in sorted(keys & TRAINING_STATE_KEYS):
            if _holds_something(mapping[key]):
                return f"training state under {'.'.join((*location, key))!r}"
    return None


def _holds_something(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, (Mapping, list, tuple)):
        return len(value) > 0
    return True


def _mappings(obj: Any) -> Iterator[tuple[tuple[str, ...], Mapping[Any, Any]]]:
    """Every mapping in the nesting, outermost first (iterative: pickles can nest deeply)."""
    stack: collections.deque[tuple[tuple[str, ...], Any]] = collections.deque([((), obj)])
    seen: set[int] = set()
    while stack:
        location, value = stack.popleft()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, Mapping):
            yield location, value
            stack.extend(((*location, str(k)), v) for k, v in value.items() if isinstance(v, (Mapping, list, tuple)))
        elif isinstance(value, (list, tuple)):
            stack.extend(((*location, str(i)), v) for i, v in enumerate(value) if isinstance(v, (Mapping, list, tuple)))
