"""WN207's evidence: which tensors a call computes from parameters alone, and which of them went through a norm.

Precision first: a tensor counts as derived from parameters only when every tensor input of every operator
that made it was a parameter, such a derived tensor, or a constant made inside the call (an operator with no
tensor input).  Anything touched by the call's inputs, a buffer or a tensor made before the watch is not
followed, and an operator that writes into a followed tensor with such an input stops following it.
Tensors are followed by identity through weak references, so the watch keeps none of them alive.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..core import torch_api
from ..core.catalogue import RUNTIME_NORM_OPS, RUNTIME_WEIGHT_CONSUMERS


@dataclass(frozen=True)
class Derivation:
    """How a followed tensor was made: the parameters it comes from and those a norm was taken over."""

    sources: frozenset[int] = frozenset()
    normed: frozenset[int] = frozenset()
    norm_op: str = ""


CONSTANT = Derivation()


@dataclass(frozen=True)
class WeightUse:
    """A normalized parameter fed as the weight of a convolution or linear layer (WN207's event)."""

    normed: tuple[Any, ...]  # the parameters the norm was taken over
    sources: tuple[Any, ...]  # every parameter the weight comes from
    norm_op: str
    consumer: str


class ParameterFlow:
    """Follows the tensors one thread computes from parameters alone, operator by operator."""

    def __init__(self) -> None:
        self._derived: dict[int, tuple[weakref.ref[Any], Derivation]] = {}
        self._parameters: dict[int, Any] = {}
        self._parameter_type = torch_api.parameter_class()
        self._parameter_types: dict[type, bool] = {}
        self._tensor_type = torch_api.tensor_class()
        self._norm_ops = {op: str(op).split(".")[-1] for op in torch_api.aten_operators(RUNTIME_NORM_OPS)}
        self._consumers = {
            op: (position, str(op).split(".")[-1]) for op, position in
            ((op, RUNTIME_WEIGHT_CONSUMERS[str(op).split(".")[-1]])
             for op in torch_api.aten_operators(tuple(RUNTIME_WEIGHT_CONSUMERS)))
        }

    def observe(self, packet: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> WeightUse | None:
        """Record what an operator made; return the weight use it is, if it consumes a normalized parameter."""
        use = self._weight_use(packet, args) if packet in self._consumers else None
        derived = self._combine(packet, args, kwargs)
        for tensor in self._tensors(out):
            if self._is_parameter(tensor):
                continue  # an in-place update of a parameter: it stays a source
            if derived is None:
                self._derived.pop(id(tensor), None)
            else:
                self._follow(tensor, derived)
        return use

    def _weight_use(self, packet: Any, args: tuple[Any, ...]) -> WeightUse | None:
        consumer = self._consumers.get(packet)
        if consumer is None or len(args) <= consumer[0]:
            return None
        derivation = self.derivation(args[consumer[0]])
        if derivation is None or not derivation.normed:
            return None
        params = self._parameters
        return WeightUse(
            tuple(params[i] for i in sorted(derivation.normed, key=lambda i: _order(params, i))),
            tuple(params[i] for i in derivation.sources), derivation.norm_op, consumer[1],
        )

    def _combine(self, packet: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Derivation | None:
        """The derivation of what an operator makes from these inputs: None as soon as one input is not followed."""
        merged: Derivation | None = CONSTANT
        for tensor in self._tensors(args):
            merged = _merge(merged, self.derivation(tensor))
            if merged is None:
                return None
        for tensor in self._tensors(tuple(kwargs.values())) if kwargs else ():
            merged = _merge(merged, self.derivation(tensor))
            if merged is None:
                return None
        if merged is not None and merged.sources and packet in self._norm_ops:
            merged = Derivation(merged.sources, merged.normed | merged.sources, self._norm_ops[packet])
        return merged

    def derivation(self, value: Any) -> Derivation | None:
        """How ``value`` was made from parameters alone, or None when it was not (or is not a tensor)."""
        if self._is_parameter(value):
            self._parameters.setdefault(id(value), value)
            return Derivation(frozenset({id(value)}))
        entry = self._derived.get(id(value))
        return entry[1] if entry is not None and entry[0]() is value else None

    def made_from(self, value: Any) -> tuple[Any, ...]:
        """The parameters ``value`` is (or is computed from, alone), in the order first seen; () when not followed."""
        derivation = self.derivation(value)
        if derivation is None:
            return ()
        params = self._parameters
        return tuple(params[i] for i in sorted(derivation.sources, key=lambda i: _order(params, i)))

    def _is_parameter(self, value: Any) -> bool:
        """``isinstance(value, nn.Parameter)`` answered once per type (torch's check runs in Python on every call)."""
        cls = type(value)
        known = self._parameter_types.get(cls)
        if known is None:
            known = self._parameter_types[cls] = issubclass(cls, self._parameter_type)
        return known

    def _follow(self, tensor: Any, derivation: Derivation) -> None:
        key = id(tensor)
        derived = self._derived

        def forget(ref: weakref.ref[Any], key: int = key) -> None:
            entry = derived.get(key)
            if entry is not None and entry[0] is ref:
                del derived[key]

        entry = derived.get(key)
        if entry is not None and entry[0]() is tensor:
            derived[key] = (entry[0], derivation)
        else:
            derived[key] = (weakref.ref(tensor, forget), derivation)

    def _tensors(self, value: Any) -> Iterator[Any]:
        """The tensors among an operator's arguments or results (one level of lists and tuples, as aten passes them)."""
        tensor_type = self._tensor_type
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, tensor_type):
                yield item
            elif isinstance(item, (tuple, list)):
                yield from (inner for inner in item if isinstance(inner, tensor_type))


def _merge(merged: Derivation | None, derivation: Derivation | None) -> Derivation | None:
    if merged is None or derivation is None:
        return None
    if merged is CONSTANT:
        return derivation
    if derivation is CONSTANT:
        return merged
    return Derivation(merged.sources | derivation.sources, merged.normed | derivation.normed,
                      merged.norm_op or derivation.norm_op)


def _order(parameters: dict[int, Any], key: int) -> int:
    return list(parameters).index(key)
