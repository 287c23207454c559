"""Fold the weight norms of a loaded ``ExportedProgram``: each becomes one stored tensor.

For every site the audit found, the nodes that compute the effective weight
are evaluated once on the stored tensors, with the very aten operators the
graph calls (``aten._weight_norm``, torch's own kernel, for the call; the
same norm/div/mul for the decomposed form), so the stored value is what the
program computed, bit for bit.  Its uses are redirected to a new input bound
to the folded name (``generator.ups.0.weight``), of the kind ``v`` had; the
computing nodes, and ``g`` and ``v`` once nothing else uses them, are removed
from the graph, the signature and the state dict.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core import torch_api
from .errors import ExportedProgramError
from .graph import WeightNormSite

logger = logging.getLogger(__name__)


@dataclass
class _State:
    """The program's stored tensors by graph input name, and where each lives."""

    values: dict[str, Any]
    kinds: dict[str, Any]
    targets: dict[str, str]


def _stored_state(program: Any) -> _State:
    signature = program.graph_signature
    state = _State({}, {}, {})
    for spec in signature.input_specs:
        name, target = getattr(spec.arg, "name", None), spec.target
        if name is None or target is None:
            continue
        if target in program.state_dict:
            state.values[name] = program.state_dict[target]
        elif target in program.constants:
            state.values[name] = program.constants[target]
        else:
            continue
        state.kinds[name], state.targets[name] = spec.kind, target
    return state


def _evaluate(node: Any, state: _State, cache: dict[str, Any]) -> Any:
    """The value of ``node`` computed from stored tensors alone (it must not depend on a user input)."""
    if node.name in cache:
        return cache[node.name]
    if node.op == "placeholder":
        if node.name not in state.values:
            raise ExportedProgramError(f"not fixed: weight norm at {node.name} depends on a program input, not on stored tensors")
        value = state.values[node.name]
    elif node.op == "call_function":
        args = torch_api.map_node_arguments(node.args, lambda arg: _evaluate(arg, state, cache))
        kwargs = torch_api.map_node_arguments(node.kwargs, lambda arg: _evaluate(arg, state, cache))
        value = node.target(*args, **kwargs)
    else:
        raise ExportedProgramError(f"not fixed: cannot evaluate node {node.name} ({node.op}) ahead of time")
    cache[node.name] = value
    return value


def fold_program(program: Any, sites: Sequence[WeightNormSite]) -> tuple[Any, list[str]]:
    """A new program with every site folded, and the folded names in site order."""
    torch = torch_api.import_torch()
    types = torch_api.export_signature_types()
    graph = program.graph_module.graph
    nodes = {node.name: node for node in graph.nodes}
    state = _stored_state(program)
    state_dict, constants = dict(program.state_dict), dict(program.constants)
    specs = list(program.graph_signature.input_specs)
    taken = set(state_dict) | set(constants)
    folded: list[str] = []
    computed: set[str] = set()
    for site in sites:
        output = nodes.get(site.output)
        v_input = nodes.get(site.v.graph_name)
        if output is None or v_input is None or site.v.graph_name not in state.kinds:
            raise ExportedProgramError(f"not fixed: the loaded program has no node {site.output} for {site.folded_name}")
        if site.folded_name in taken:
            raise ExportedProgramError(f"not fixed: {site.folded_name} already names a stored tensor of the program")
        evaluated: dict[str, Any] = {}
        with torch.no_grad():
            value = _evaluate(output, state, evaluated).detach().clone()
        computed.update(evaluated)
        kind = state.kinds[site.v.graph_name]
        with graph.inserting_before(v_input):
            replacement = graph.placeholder(_fresh_name(site.folded_name, nodes))
        replacement.meta = {key: output.meta[key] for key in ("val", "tensor_meta") if key in output.meta}
        nodes[replacement.name] = replacement
        output.replace_all_uses_with(replacement)
        spec = types.InputSpec(
            kind=kind, arg=types.TensorArgument(name=replacement.name), target=site.folded_name,
            persistent=True if kind == types.InputKind.BUFFER else None,
        )
        specs.insert(next(i for i, s in enumerate(specs) if getattr(s.arg, "name", None) == v_input.name), spec)
        _store(value, kind, site, types, state_dict, constants, requires_grad=bool(getattr(state.values[v_input.name], "requires_grad", False)))
        taken.add(site.folded_name)
        folded.append(site.folded_name)
    dropped = _erase_unused(graph, computed)
    specs = [s for s in specs if getattr(s.arg, "name", None) not in dropped]
    for name in dropped:
        state_dict.pop(state.targets[name], None)
        constants.pop(state.targets[name], None)
    graph.lint()
    program.graph_module.recompile()
    signature = types.ExportGraphSignature(input_specs=specs, output_specs=list(program.graph_signature.output_specs))
    rebuilt = torch_api.rebuilt_exported_program(program, graph_signature=signature, state_dict=state_dict, constants=constants)
    logger.debug("folded %d weight norms; dropped inputs %s", len(folded), sorted(dropped))
    return rebuilt, folded


def _store(value: Any, kind: Any, site: WeightNormSite, types: Any, state_dict: dict[str, Any], constants: dict[str, Any], *, requires_grad: bool) -> None:
    torch = torch_api.import_torch()
    if kind == types.InputKind.PARAMETER:
        state_dict[site.folded_name] = torch.nn.Parameter(value, requires_grad=requires_grad)
    elif kind == types.InputKind.BUFFER:
        state_dict[site.folded_name] = value
    else:
        constants[site.folded_name] = value


def _fresh_name(folded_name: str, nodes: dict[str, Any]) -> str:
    base = "p_" + "".join(ch if ch.isalnum() else "_" for ch in folded_name)
    name, counter = base, 1
    while name in nodes:
        name, counter = f"{base}_{counter}", counter + 1
    return name


def _erase_unused(graph: Any, computed: set[str]) -> set[str]:
    """Remove the nodes a fold made unused (weight-norm nodes, then g and v); return the inputs removed.

    Only nodes of the folded computations are candidates, with the unused
    outputs they feed (the norms ``_weight_norm_interface`` also returns):
    anything else the program holds, used or not, stays as it was.
    """
    dropped: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in reversed(list(graph.nodes)):
            if node.users or not (node.name in computed or _reads_only(node, computed)):
                continue
            if node.op == "call_function" and not node.is_impure():
                graph.erase_node(node)
                changed = True
            elif node.op == "placeholder":
                graph.erase_node(node)
                dropped.add(node.name)
                changed = True
    return dropped


def _reads_only(node: Any, computed: set[str]) -> bool:
    """An unused node that reads nothing but folded computations (``getitem(_weight_norm_interface, 1)``)."""
    inputs = node.all_input_nodes
    return node.op == "call_function" and bool(inputs) and all(item.name in computed for item in inputs)
