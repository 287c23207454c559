"""Classes gathered from the modules of a package: how rules and providers register without a list.

A new rule or provider is a new module in its package; nothing names it
anywhere else.  The modules are found through the package's ``__path__``
(so a folder appended there counts too), private ones (``_name``) and the
package's own ``skip`` left out.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable, Iterable, TypeVar

T = TypeVar("T", bound=type)


def gathered(
    package: str, path: Iterable[str], base: T, skip: frozenset[str], key: Callable[[T], str],
) -> dict[str, T]:
    """Every concrete subclass of ``base`` (``is_concrete()``) defined in the package's modules, by ``key``.

    ``ValueError`` when two classes share a key.
    """
    found: dict[str, T] = {}
    for module_info in pkgutil.iter_modules(path):
        if module_info.name in skip or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, base) and value.__module__ == module.__name__ and value.is_concrete():  # type: ignore[attr-defined]
                name = key(value)  # type: ignore[arg-type]
                if name in found:
                    raise ValueError(f"{name} is defined twice ({found[name].__name__}, {value.__name__})")
                found[name] = value  # type: ignore[assignment]
    return found
