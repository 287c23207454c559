"""Recognise training state in a checkpoint: what a fold in place would silently break.

An optimizer's state dict refers to parameters by position (``param_groups``'
``params`` lists, ``state`` keyed by index), a scheduler's carries the
optimizer's learning rates; both were built for the unfolded ``g``/``v``
parameters.  After a fold there is one tensor where there were two, so
resuming from the folded file misaligns or fails.  Such a checkpoint is folded
only into a separate inference copy (``-o``), or in place when the user asks
for it explicitly (:data:`IN_PLACE_FLAG`).

The training state need not sit in the same file: a Hugging Face Trainer
``checkpoint-500/`` keeps ``model.safetensors`` beside ``optimizer.pt``,
``scheduler.pt`` and ``trainer_state.json``; ``accelerate``'s ``save_state``
writes ``optimizer.bin``/``scheduler.bin`` beside the model; DeepSpeed keeps
``*_optim_states.pt`` in ``global_stepN/``.  :func:`training_directory` finds
such state by what the directory holds, whatever it is called.
"""

from __future__ import annotations

import collections
import logging
import os
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..common.options import RunOptions
from .errors import CheckpointError

logger = logging.getLogger(__name__)

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


#: Files of optimizer / scheduler state that trainers write beside the model
#: (HF Trainer, accelerate ``save_state``, DeepSpeed ZeRO, hand-written loops).
_STATE_FILE = re.compile(
    r"(?:optimizer|optim|scheduler|lr_scheduler)(?:_\d+)?\.(?:pt|pth|bin|safetensors)"
    r"|.*_optim_states\.pt"
    r"|trainer_state\.json",
    re.IGNORECASE,
)
#: DeepSpeed's per-step folder, and the ``latest`` file naming it.
_DEEPSPEED_STEP = re.compile(r"global_step\d+")


def training_directory(checkpoint: Path) -> str | None:
    """What makes the checkpoint's directory a training checkpoint (``"optimizer.pt beside it"``), or None."""
    directory = Path(os.path.realpath(checkpoint)).parent
    names = _listing(directory)
    found = sorted(name for name in names if _STATE_FILE.fullmatch(name) and (directory / name).is_file())
    if found:
        return f"training state beside it: {', '.join(found[:3])}{', ...' if len(found) > 3 else ''}"
    for name in sorted(names):
        if _DEEPSPEED_STEP.fullmatch(name) and (directory / name).is_dir():
            states = sorted(n for n in _listing(directory / name) if n.endswith("_optim_states.pt"))
            if states:
                return f"DeepSpeed optimizer state in {name}/ beside it"
    return None


def _listing(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def check_training(path: Path, obj: Any, options: RunOptions, *, copy_supported: bool = True) -> None:
    """Refuse to fold a training checkpoint in place (its own state or its directory's); warn a copy is for inference.

    ``obj``: the loaded checkpoint (None when only a header was read).
    ``copy_supported``: whether ``-o`` can write a copy of this input.
    """
    what = (training_state(obj) if obj is not None else None) or training_directory(path)
    if what is None:
        return
    if options.output is None and not options.fix_training_in_place:
        copy = "write a folded inference copy with --fix -o OUT" if copy_supported else "fold a copy of it without the training state"
        raise CheckpointError(
            f"a training checkpoint ({what}, which refers to the unfolded parameters): folding it in place "
            f"would break resuming training; {copy} (or fold in place anyway with {IN_PLACE_FLAG})"
        )
    where = options.output if options.output is not None else path
    logger.warning(
        "%s: the folded checkpoint is for inference only: its %s still refers to the unfolded parameters, "
        "so it cannot resume training%s",
        where, what, f" (resume from {path})" if options.output is not None else "",
    )
