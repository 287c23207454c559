"""What one watch saw, tallied per tensor: the events of its dispatch modes and module-call hooks.

A catalogued reparametrization is counted from two kinds of evidence: torch's weight-norm kernel seen by the
dispatch mode (the tensor ``v`` it is given names it) and the call of the parametrization list or of a module
carrying a legacy hook (which covers spectral norm, other parametrizations and weight norms over a ``dim``
whose kernel decomposes into plain operators).  Both count the same computations, so a tensor's count is the
larger of the two, never their sum.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from ..common.findings import CodeInfo, Finding, finding
from ..core import torch_api
from ..core.catalogue import RUNTIME_WEIGHT_NORM_OPS
from ..core.live import has_legacy_hook
from .codes import WN206, WN207
from .flow import ParameterFlow, WeightUse
from .messages import HAND_CALLED_LABEL, normalization_message, reparametrized_message
from .roots import Resolver
from .targets import ParameterName, RootIndex, Target

_KERNEL, _MODULE = 0, 1


@dataclass(frozen=True)
class Computation:
    """One tensor the watch saw computed: its finding, and how many of its computations were for serving."""

    finding: Finding
    calls: int
    #: Computations while the module holding the tensor was in eval mode, or under ``inference_mode``.
    serving_calls: int

    @property
    def code(self) -> str:
        return self.finding.code

    @property
    def object(self) -> str | None:
        return self.finding.object


@dataclass
class _Tally:
    target: Target
    info: CodeInfo
    #: [calls, serving calls] per kind of evidence (kernel, module call).
    counts: list[list[int]] = field(default_factory=lambda: [[0, 0], [0, 0]])

    def computation(self) -> Computation:
        calls = max(self.counts[_KERNEL][0], self.counts[_MODULE][0])
        serving = max(self.counts[_KERNEL][1], self.counts[_MODULE][1])
        if self.info is WN207:
            message = normalization_message(self.target, calls, serving)
        else:
            message = reparametrized_message(self.target, calls, serving)
        fixable = self.info is WN206 and self.target.kind is not None
        found = finding(self.info, self.target.root_label, message, fixable=fixable, object=self.target.object)
        return Computation(found, calls, serving)


@functools.lru_cache(maxsize=1)
def _fold_code() -> Any:
    from ..core.module_fold import apply_plan

    return apply_plan.__code__


def _inside_a_fold() -> bool:
    """Whether the current thread is inside ``wnaudit``'s fold (every fold of a live module computes in ``apply_plan``)."""
    code = _fold_code()
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


class Recorder:
    """Turns events into tallies; shared by the threads a watch is entered in (one lock)."""

    def __init__(self, model: Any | None):
        self._resolver = Resolver(model)
        self._lock = threading.Lock()
        self._tallies: dict[Hashable, _Tally] = {}
        self._kernel_targets: dict[int, tuple[Any, Target | None]] = {}
        self._call_targets: dict[int, tuple[Any, list[Target]]] = {}
        self._use_targets: dict[tuple[int, ...], tuple[tuple[Any, ...], Target | None]] = {}
        self._kernels = torch_api.aten_operators(RUNTIME_WEIGHT_NORM_OPS)
        self._plist_type = torch_api.parametrization_list_class()
        #: Set when the watch stopped recording after an internal error (its findings are then incomplete).
        self.failed = False

    # -- events ---------------------------------------------------------------------------------------------
    def operator(self, flow: ParameterFlow, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        """An aten operator ran on the watched thread (its results are left untouched)."""
        packet = func.overloadpacket
        if packet in self._kernels:
            with self._lock:
                target = self._kernel_target(flow, args[0])
                if target is not None:
                    self._count(target, WN206, _KERNEL)
            return  # a kernel's result is WN206's, never followed into WN207
        use = flow.observe(packet, args, kwargs, out)
        if use is not None:
            with self._lock:
                target = self._use_target(use)
                if target is not None:
                    self._count(target, WN207, _KERNEL)

    def module_call(self, module: Any) -> None:
        """A module is about to run on the watched thread: a parametrization list, or a module with a legacy hook."""
        if isinstance(module, self._plist_type):
            with self._lock:
                target = self._resolver.find(lambda index: index.by_parametrization_list(module))
                if target is not None:
                    self._count(target, WN206, _MODULE)
        elif has_legacy_hook(module):
            with self._lock:
                for target in self._legacy_targets(module):
                    self._count(target, WN206, _MODULE)

    def release(self) -> None:
        """Forget the indexes and caches (they hold the model's tensors); what was counted stays."""
        with self._lock:
            self._resolver = Resolver(self._resolver.model)
            self._kernel_targets.clear()
            self._call_targets.clear()
            self._use_targets.clear()

    def computations(self) -> list[Computation]:
        with self._lock:
            return [tally.computation() for tally in self._tallies.values()]

    # -- naming what was seen ------------------------------------------------------------------------------
    def _count(self, target: Target, info: CodeInfo, evidence: int) -> None:
        if _inside_a_fold():
            return  # wnaudit's own fold computes each weight once more, to fold it: that is the cure, not the bug
        tally = self._tallies.get(target.key)
        if tally is None:
            tally = self._tallies[target.key] = _Tally(target, info)
        serving = not target.owner.training or torch_api.inference_mode_enabled()
        counts = tally.counts[evidence]
        counts[0] += 1
        counts[1] += serving

    def _kernel_target(self, flow: ParameterFlow, v: Any) -> Target | None:
        made_from = flow.made_from(v)
        if not made_from:
            return None  # v depends on more than parameters (or is not followed): precision first
        v = made_from[0]  # a parameter itself (the catalogue's v), or the one a hand-called kernel's v is made from
        entry = self._kernel_targets.get(id(v))
        if entry is not None and entry[0] is v:
            return entry[1]
        target = self._resolver.find(lambda index: index.by_stored_tensor(v)) or self._hand_called(v)
        self._kernel_targets[id(v)] = (v, target)
        return target

    def _hand_called(self, v: Any) -> Target | None:
        """torch's kernel called on a parameter by the model's own code: named after ``v``'s parameter."""
        found = self._named_parameter(v)
        if found is None:
            return None  # not a parameter of any module being called: nothing to name, nothing shown
        index, parameter = found
        return Target(("kernel", id(v)), parameter.name, parameter.owner, index.label, HAND_CALLED_LABEL,
                      enclosing=index.enclosing_class(parameter.owner))

    def _is_stored(self, tensor: Any) -> bool:
        return self._resolver.find(lambda index: index.by_stored_tensor(tensor)) is not None

    def _named_parameter(self, tensor: Any) -> tuple[RootIndex, ParameterName] | None:
        def query(index: RootIndex) -> tuple[RootIndex, ParameterName] | None:
            parameter = index.parameter(tensor)
            return None if parameter is None else (index, parameter)

        return self._resolver.find(query)

    def _legacy_targets(self, module: Any) -> list[Target]:
        entry = self._call_targets.get(id(module))
        if entry is not None and entry[0] is module:
            return entry[1]
        targets = self._resolver.find(lambda index: index.by_legacy_owner(module)) or []
        self._call_targets[id(module)] = (module, targets)
        return targets

    def _use_target(self, use: WeightUse) -> Target | None:
        key = tuple(id(parameter) for parameter in use.sources)
        entry = self._use_targets.get(key)
        if entry is not None and all(a is b for a, b in zip(entry[0], use.sources)):
            return entry[1]
        target = None
        # A norm inside a catalogued reparametrization (a weight norm over a dim its kernel does not fuse) is WN206's.
        if not any(self._is_stored(parameter) for parameter in use.sources):
            found = self._named_parameter(use.normed[0])
            if found is not None:
                index, parameter = found
                label = f"{use.norm_op} -> {use.consumer}"
                target = Target(("norm", key), parameter.name, parameter.owner, index.label, label,
                                enclosing=index.enclosing_class(parameter.owner))
        self._use_targets[key] = (use.sources, target)
        return target
