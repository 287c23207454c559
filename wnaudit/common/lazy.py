"""Module attributes imported on first use.

``import wnaudit`` must stay torch-free (the source lint and the pre-commit
hook run without torch), yet ``wnaudit.fold_weight_norm`` should just work:
the torch-backed names are resolved when first touched.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_getattr(package: str, table: dict[str, tuple[str, str]], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``table`` (name -> (module, attribute)) lazily."""

    def __getattr__(name: str) -> Any:
        if name in table:
            module_name, attr = table[name]
            value = getattr(importlib.import_module(module_name), attr)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
