"""Resolve the catalogue's qualified names to torch objects.

Kept apart so that importing the catalogue never imports torch, and so that the
torch-side code asks for classes by the catalogue's names instead of importing
torch internals by hand.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from .catalogue import PARAMETRIZE_CACHE_FLAG, PARAMETRIZE_MODULE, SPECTRAL_NORM_STATE_HOOKS, Spelling


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


def implementation(spelling: Spelling) -> type:
    """The hook or parametrization class torch uses for a spelling."""
    return resolve(spelling.implementation)


def parametrize_module() -> Any:
    return resolve(PARAMETRIZE_MODULE)


def parametrize_cache_active() -> bool:
    """True inside ``torch.nn.utils.parametrize.cached()``."""
    return bool(getattr(parametrize_module(), PARAMETRIZE_CACHE_FLAG, 0))


def spectral_norm_state_hook_classes() -> tuple[type, ...]:
    return tuple(resolve(name) for name in SPECTRAL_NORM_STATE_HOOKS)
