"""Find weight-norm computations in a serialized exported program (the ``models/NAME.json`` graph).

Two shapes are recognised on stored tensors (parameters, buffers, lifted
constants): the aten weight-norm call (``_weight_norm`` /
``_weight_norm_interface``, what ``torch.export.export`` records), and the
pattern ``run_decompositions`` leaves of it, ``mul(v, div(g, norm(v)))``.
Torch-free: it reads the JSON only.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..core.catalogue import (
    EXPORTED_DIV_OPS,
    EXPORTED_MUL_OPS,
    EXPORTED_NORM_OPS,
    EXPORTED_WEIGHT_NORM_OPS,
    Kind,
)
from ..core.stored_keys import group_stored_keys

#: Input-spec kinds of the serialized signature that hold a stored tensor, with the field naming it.
STORED_SPEC_FIELDS = {"parameter": "parameter_name", "buffer": "buffer_name", "tensor_constant": "tensor_constant_name"}


class SiteShape(enum.Enum):
    FUSED = "aten weight-norm call"
    DECOMPOSED = "decomposed norm/div/mul"


@dataclass(frozen=True)
class StoredTensor:
    """A graph input that the archive stores: its graph name, its kind and its name in the user's model."""

    graph_name: str
    kind: str
    fqn: str


@dataclass(frozen=True)
class WeightNormSite:
    """One weight norm the program computes on every call.

    ``nodes`` are the serialized nodes' names, producer first; ``output`` is
    the graph value holding the effective weight; ``folded_name`` the name the
    tensor has once folded (``generator.ups.0.weight``).
    """

    shape: SiteShape
    g: StoredTensor
    v: StoredTensor
    output: str
    nodes: tuple[str, ...]
    folded_name: str
    operator: str


def stored_inputs(program: dict[str, Any]) -> dict[str, StoredTensor]:
    """Graph input name -> the stored tensor it is bound to, from the serialized signature."""
    specs = json_list(json_object(json_object(program, "graph_module"), "signature"), "input_specs")
    stored: dict[str, StoredTensor] = {}
    for spec in specs:
        for kind, name_field in STORED_SPEC_FIELDS.items():
            body = spec.get(kind) if isinstance(spec, dict) else None
            if isinstance(body, dict):
                graph_name = json_object(body, "arg").get("name")
                fqn = body.get(name_field)
                if isinstance(graph_name, str) and isinstance(fqn, str):
                    stored[graph_name] = StoredTensor(graph_name, kind, fqn)
    return stored


def json_object(value: Any, key: str) -> dict[str, Any]:
    """``value[key]`` when both are JSON objects, else an empty one: a malformed member reads as absent."""
    item = value.get(key) if isinstance(value, dict) else None
    return item if isinstance(item, dict) else {}


def json_list(value: Any, key: str) -> list[Any]:
    """``value[key]`` when it is a JSON array, else an empty one."""
    item = value.get(key) if isinstance(value, dict) else None
    return item if isinstance(item, list) else []


def _tensor_name(argument: Any) -> str | None:
    if isinstance(argument, dict):
        tensor = argument.get("as_tensor")
        if isinstance(tensor, dict) and isinstance(tensor.get("name"), str):
            return str(tensor["name"])
    return None


def _tensor_inputs(node: dict[str, Any]) -> list[str | None]:
    return [_tensor_name(item.get("arg")) for item in json_list(node, "inputs") if isinstance(item, dict)]


def _named_input(node: dict[str, Any], name: str, position: int) -> Any:
    inputs = [item for item in json_list(node, "inputs") if isinstance(item, dict)]
    for item in inputs:
        if item.get("name") == name:
            return item.get("arg")
    return inputs[position].get("arg") if position < len(inputs) else None


def _output_names(node: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for output in json_list(node, "outputs"):
        single = _tensor_name(output)
        if single is not None:
            names.append(single)
        elif isinstance(output, dict) and isinstance(output.get("as_tensors"), list):
            names.extend(name for name in (_tensor_name({"as_tensor": t}) for t in output["as_tensors"]) if name)
    return names


def folded_name(g: StoredTensor, v: StoredTensor) -> str:
    """The name the folded tensor takes: the catalogue's grouping of the two stored names, else v's name."""
    groups, _ = group_stored_keys([g.fqn, v.fqn])
    for group in groups:
        if group.spelling.kind is Kind.WEIGHT_NORM and set(group.keys) == {g.fqn, v.fqn}:
            return group.folded_key
    return v.fqn


def graph_nodes(program: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = json_list(json_object(json_object(program, "graph_module"), "graph"), "nodes")
    return [node for node in nodes if isinstance(node, dict)]


def find_weight_norms(program: dict[str, Any]) -> list[WeightNormSite]:
    """Every weight norm the program's top-level graph computes on stored tensors, in graph order."""
    stored = stored_inputs(program)
    nodes = graph_nodes(program)
    producer = {name: node for node in nodes for name in _output_names(node)}
    sites: list[WeightNormSite] = []
    for node in nodes:
        site = _fused_site(node, stored) or _decomposed_site(node, stored, producer)
        if site is not None:
            sites.append(site)
    return sites


def _fused_site(node: dict[str, Any], stored: dict[str, StoredTensor]) -> WeightNormSite | None:
    target = node.get("target")
    if target not in EXPORTED_WEIGHT_NORM_OPS:
        return None
    v = stored.get(_tensor_name(_named_input(node, "v", 0)) or "")
    g = stored.get(_tensor_name(_named_input(node, "g", 1)) or "")
    outputs = _output_names(node)
    if v is None or g is None or not outputs:
        return None
    operator = str(target).split(".")[-2]
    return WeightNormSite(SiteShape.FUSED, g, v, outputs[0], (str(node.get("name", outputs[0])),), folded_name(g, v), operator)


def _decomposed_site(
    node: dict[str, Any], stored: dict[str, StoredTensor], producer: dict[str, dict[str, Any]]
) -> WeightNormSite | None:
    if node.get("target") not in EXPORTED_MUL_OPS:
        return None
    outputs = _output_names(node)
    operands = _tensor_inputs(node)
    if len(operands) != 2 or not outputs:
        return None
    for v_name, scale_name in (operands, operands[::-1]):
        v = stored.get(v_name or "")
        div = producer.get(scale_name or "")
        if v is None or div is None or div.get("target") not in EXPORTED_DIV_OPS:
            continue
        div_operands = _tensor_inputs(div)
        if len(div_operands) != 2:
            continue
        g = stored.get(div_operands[0] or "")
        norm = producer.get(div_operands[1] or "")
        if g is None or norm is None or norm.get("target") not in EXPORTED_NORM_OPS:
            continue
        if _tensor_inputs(norm)[:1] != [v_name] or not _is_two_norm(norm):
            continue
        names = tuple(str(n.get("name", "")) for n in (norm, div, node))
        return WeightNormSite(SiteShape.DECOMPOSED, g, v, outputs[0], names, folded_name(g, v), "norm/div/mul")
    return None


def _is_two_norm(norm: dict[str, Any]) -> bool:
    """The norm's order is 2 (the default when it is not given)."""
    order = _named_input(norm, "ord", 1) if "linalg" in str(norm.get("target")) else _named_input(norm, "p", 1)
    if not isinstance(order, dict) or "as_none" in order:
        return True
    value = order.get("as_float", order.get("as_int", order.get("as_scalar")))
    if isinstance(value, dict):
        value = value.get("as_float", value.get("as_int"))
    return value == 2


def iter_json_objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object anywhere in ``value``, in document order.

    Iterative, so that no nesting depth a JSON member can hold exhausts the stack.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def iter_all_nodes(value: Any) -> Iterator[dict[str, Any]]:
    """Every serialized node anywhere in the program, subgraphs included (for the trust screen)."""
    for item in iter_json_objects(value):
        if isinstance(item.get("target"), str) and isinstance(item.get("inputs"), list):
            yield item
