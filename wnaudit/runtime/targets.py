"""Name what the watch saw: which module's tensor a computation belongs to, relative to a root module.

A :class:`RootIndex` is built once per root module from the core's view of its live reparametrizations
(``core.live``), keyed by object identity: the stored tensors (``original*``, ``NAME_g``/``NAME_v``,
``NAME_orig``), the parametrization lists torch calls, the modules carrying legacy hooks and every parameter.
Nothing is evaluated: building an index reads stored tensors only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from ..core import torch_api
from ..core.catalogue import Kind
from ..core.live import find_reparametrizations, parametrization_list, stored_tensors


@dataclass(eq=False)
class Target:
    """One tensor the watch reports: a reparametrized weight (WN206) or a normalized parameter (WN207)."""

    key: Hashable
    object: str
    owner: Any  # the module holding the tensor
    root_label: str
    label: str
    kind: Kind | None = None  # None: no catalogue spelling (a kernel called by hand, a hand-written norm)
    #: The nearest module class at or above ``owner`` that torch does not define (the model's own code), if any.
    enclosing: type | None = None

    @property
    def module_class(self) -> type:
        return torch_api.class_before_parametrizations(self.owner)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class ParameterName:
    """A parameter found in a root: its qualified name and the module that holds it."""

    name: str
    owner: Any


class RootIndex:
    """Identity maps from what the watch sees to the named tensors of one root module."""

    def __init__(self, root: Any):
        self.root = root
        self.label = f"<{torch_api.class_before_parametrizations(root).__name__}>"
        self._by_tensor: dict[int, tuple[Any, Target]] = {}
        self._by_plist: dict[int, tuple[Any, Target]] = {}
        self._legacy: dict[int, tuple[Any, list[Target]]] = {}
        self._parameters: dict[int, tuple[Any, ParameterName]] = {}
        self._enclosing = _enclosing_user_classes(root)
        for live in find_reparametrizations(root):
            target = Target((id(live.owner), live.tensor_name), live.qualified_name, live.owner, self.label,
                            live.spelling.label, live.spelling.kind, self.enclosing_class(live.owner))
            for tensor in stored_tensors(live):
                self._by_tensor.setdefault(id(tensor), (tensor, target))
            plist = parametrization_list(live)
            if plist is None:
                self._legacy.setdefault(id(live.owner), (live.owner, []))[1].append(target)
            else:
                self._by_plist[id(plist)] = (plist, target)
        for owner_name, owner in root.named_modules():
            for name, parameter in torch_api.own_parameters(owner).items():
                if parameter is not None and id(parameter) not in self._parameters:
                    qualified = f"{owner_name}.{name}" if owner_name else name
                    self._parameters[id(parameter)] = (parameter, ParameterName(qualified, owner))

    def by_stored_tensor(self, tensor: Any) -> Target | None:
        return _same(self._by_tensor.get(id(tensor)), tensor)

    def by_parametrization_list(self, plist: Any) -> Target | None:
        return _same(self._by_plist.get(id(plist)), plist)

    def by_legacy_owner(self, module: Any) -> list[Target] | None:
        return _same(self._legacy.get(id(module)), module)

    def parameter(self, tensor: Any) -> ParameterName | None:
        return _same(self._parameters.get(id(tensor)), tensor)

    def enclosing_class(self, module: Any) -> type | None:
        """The nearest class at or above ``module`` in this root that torch does not define."""
        return _same(self._enclosing.get(id(module)), module)  # type: ignore[no-any-return]


def _enclosing_user_classes(root: Any) -> dict[int, tuple[Any, type | None]]:
    """For each submodule: the nearest class at or above it that is the project's own, not torch's
    (a weight-normed ``nn.Conv1d`` is found in the model class that built it)."""
    by_name: dict[str, type | None] = {}
    found: dict[int, tuple[Any, type | None]] = {}
    for name, module in root.named_modules(remove_duplicate=False):
        cls = torch_api.class_before_parametrizations(module)
        parent = by_name.get(name.rpartition(".")[0]) if name else None
        by_name[name] = parent if torch_api.is_torch_class(cls) else cls
        found.setdefault(id(module), (module, by_name[name]))
    return found


def _same(entry: tuple[Any, Any] | None, obj: Any) -> Any:
    """The entry's value when it was recorded for this very object (an id can be reused once an object dies)."""
    return entry[1] if entry is not None and entry[0] is obj else None


@functools.lru_cache(maxsize=256)
def class_location(cls: type) -> str:
    """``file:line`` where a class is defined, for the message (``<unknown>`` for classes without source)."""
    try:
        path = inspect.getsourcefile(cls) or inspect.getfile(cls)
        line = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return "<unknown>"
    return f"{path}:{line}"
