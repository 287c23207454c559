"""Build the two arms of a benchmark: the model as loaded, and a folded twin.

The twin must be independent of the original, and ``copy.deepcopy`` alone does
not give that: ``register_parametrization`` swaps each parametrized module's
class for a generated ``Parametrized<Class>`` that carries one property per
parametrized tensor, and a deep copy shares that generated class.  Folding the
copy deletes the property from the shared class and the original loses its
``weight`` (``AttributeError`` on the next forward).  So the twin is either
rebuilt (a factory called again, then loaded with the original's state dict),
or deep-copied and given generated classes of its own before it is folded.
Either way :func:`wnaudit.bench.measure` then checks that the original still
carries its live weight norms and computes what it computed before.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Any, Callable

from ..core import torch_api
from ..core.catalogue import Kind
from ..core.module_fold import fold_weight_norm
from ..core.live import find_reparametrizations
from .errors import BenchError

logger = logging.getLogger("wnaudit.bench")

#: Builds a fresh, structurally identical instance of the model (weights may differ).
Rebuild = Callable[[], Any]


@dataclass
class Arms:
    """The model as loaded (``live``) and its folded twin, with what was folded."""

    live: Any
    folded: Any
    folded_names: list[str]


def count_live_weight_norms(module: Any) -> int:
    """How many weight norms (either spelling) are still computed at run time."""
    return sum(1 for live in find_reparametrizations(module) if Kind.WEIGHT_NORM in live.kinds)


def _own_generated_classes(original: Any, duplicate: Any) -> int:
    """Give every parametrized module of ``duplicate`` its own generated class.

    The new class has the same bases and the same namespace (the injected
    properties look the parametrization up on ``self``), so the duplicate
    behaves as before; folding it then edits only its own class.
    """
    parametrize = torch_api.parametrize_module()
    originals = dict(original.named_modules(remove_duplicate=False))
    detached = 0
    for name, module in duplicate.named_modules(remove_duplicate=False):
        shared = type(module)
        if not parametrize.is_parametrized(module) or type(originals.get(name)) is not shared:
            continue
        namespace = {key: value for key, value in vars(shared).items() if key not in ("__dict__", "__weakref__")}
        own = type(shared.__name__, shared.__bases__, namespace)
        own.__qualname__ = shared.__qualname__
        module.__class__ = own
        detached += 1
    return detached


def independent_copy(module: Any) -> Any:
    """A deep copy of ``module`` that can be folded without touching ``module``."""
    duplicate = copy.deepcopy(module)
    detached = _own_generated_classes(module, duplicate)
    logger.debug("deep copy: gave %d parametrized modules their own class", detached)
    return duplicate


def rebuilt_copy(module: Any, rebuild: Rebuild, *, device: Any = None, dtype: Any = None) -> Any:
    """Rebuild the model, move it like ``module`` was moved, and load ``module``'s exact state (strict)."""
    torch = torch_api.import_torch()
    duplicate = rebuild()
    duplicate.to(device=device, dtype=dtype)
    with torch.no_grad():
        duplicate.load_state_dict(module.state_dict(), strict=True)
    return duplicate.train(module.training)


def build_arms(module: Any, rebuild: Rebuild | None = None, *, device: Any = None, dtype: Any = None) -> Arms:
    """Make the folded twin of ``module`` (rebuilt if ``rebuild`` is given, else deep-copied).

    ``device``/``dtype`` are where ``module`` was moved to; a rebuilt twin is
    moved there before loading, so that it folds in the dtype the original computes in.
    """
    if rebuild is None:
        twin = independent_copy(module)
    else:
        twin = rebuilt_copy(module, rebuild, device=device, dtype=dtype)
    if twin is module:
        raise BenchError("the rebuild function returned the same module object; it must build a new one")
    # Nothing to fold is reported by the benchmark itself; the fold would log it again.
    folded_names = fold_weight_norm(twin) if count_live_weight_norms(twin) else []
    return Arms(live=module, folded=twin, folded_names=folded_names)
