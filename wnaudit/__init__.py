"""wnaudit: find weight-norm reparametrizations left alive at inference time, and fold them.

The module and checkpoint entry points need torch (``python -m pip install torch safetensors numpy``);
they import it lazily so that the source lint never does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .common.lazy import lazy_getattr
from .common.findings import Finding, InputError, Severity

__version__ = "0.1.0"

__all__ = [
    "ExcludeError",
    "Finding",
    "FoldError",
    "InputError",
    "Severity",
    "__version__",
    "assert_folded",
    "audit_module",
    "fold",
    "fold_state_dict",
    "fold_weight_norm",
    "load_state_dict",
    "load_unfolded_state_dict",
    "watch",
]

_LAZY = {
    "fold_weight_norm": ("wnaudit.core.module_fold", "fold_weight_norm"),
    "fold": ("wnaudit.core.module_fold", "fold"),
    "FoldError": ("wnaudit.core.module_fold", "FoldError"),
    "ExcludeError": ("wnaudit.core.exclusion", "ExcludeError"),
    "audit_module": ("wnaudit.module.inspector", "audit_module"),
    "assert_folded": ("wnaudit.module.inspector", "assert_folded"),
    "fold_state_dict": ("wnaudit.core.state_dict_fold", "fold_state_dict"),
    "load_unfolded_state_dict": ("wnaudit.core.state_dict_fold", "load_unfolded_state_dict"),
    "load_state_dict": ("wnaudit.core.load", "load_state_dict"),
    "watch": ("wnaudit.runtime.watch", "watch"),
}

if TYPE_CHECKING:  # pragma: no cover
    from .core.exclusion import ExcludeError
    from .core.module_fold import FoldError, fold, fold_weight_norm
    from .module.inspector import assert_folded, audit_module
    from .core.load import load_state_dict
    from .core.state_dict_fold import fold_state_dict, load_unfolded_state_dict
    from .runtime.watch import watch


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
