"""What loading and running an archive with torch would execute, decided from its JSON alone.

``torch.export.load`` (torch 2.13) runs code from the file in these places:

- weights or constants stored with ``use_pickle``: ``torch.load(weights_only=False)``;
- custom objects (torchbind's pickler) and opaque objects (``pickle.loads``);
- sample inputs: ``torch.load(weights_only=True)``, and on failure again with ``weights_only=False``;
- symbolic shapes: expression strings parsed by ``sympy.sympify``, which evaluates them;
- an AOTInductor package's shared library, loaded (native code) by ``load_pt2``;

and running the program (``ep.module()``) ``exec``s guard code built from the
archive's ``guards_code`` and constant inputs, and calls each node's target,
any ``torch.*`` attribute the graph names.  The fix loads and runs the
program only when none of these can happen (sample inputs are first read by
wnaudit with ``weights_only=True`` alone), or with ``--trust-pickle``.
"""

from __future__ import annotations

from typing import Any

from ..core.catalogue import (
    PT2_AOTINDUCTOR_DIR,
    PT2_CUSTOM_OBJECT_PREFIX,
    PT2_OPAQUE_OBJECT_PREFIX,
)
from .archive import ArchiveContents, ModelEntry
from .graph import iter_all_nodes

TRUST_FLAG = "--trust-pickle"
#: Node targets a program may call without running code from the file: registered operators.
SAFE_TARGET_PREFIXES = ("torch.ops.aten.", "torch.ops.prims.", "_operator.getitem")


def code_run_on_load(contents: ArchiveContents) -> list[str]:
    """Why loading and running this archive with torch would run code from it (empty: it would not)."""
    reasons: list[str] = []
    if any(member.startswith(PT2_AOTINDUCTOR_DIR) for member in contents.members):
        reasons.append("it holds an AOTInductor shared library, which loading runs")
    for entry in contents.models:
        reasons.extend(_model_reasons(entry))
    return list(dict.fromkeys(reasons))


def _model_reasons(entry: ModelEntry) -> list[str]:
    reasons = []
    for config, what in ((entry.weights_config, "weight"), (entry.constants_config, "constant")):
        for fqn, payload in config.items():
            if not isinstance(payload, dict) or payload.get("use_pickle"):
                reasons.append(f"{what} {fqn} is pickled")
            elif str(payload.get("path_name", "")).startswith((PT2_CUSTOM_OBJECT_PREFIX, PT2_OPAQUE_OBJECT_PREFIX)):
                reasons.append(f"{what} {fqn} is a pickled object")
    program = entry.program
    if program.get("guards_code"):
        reasons.append("it carries guard code, which running it executes")
    if program.get("range_constraints") or _has_symbolic_expressions(program):
        reasons.append("it has symbolic shapes, whose expressions loading evaluates")
    for node in iter_all_nodes(program.get("graph_module", {})):
        target = str(node.get("target"))
        if not target.startswith(SAFE_TARGET_PREFIXES):
            reasons.append(f"node {node.get('name')} calls {target}, not a registered aten operator")
    if not _user_inputs_are_tensors(program):
        reasons.append("it takes non-tensor inputs, which become code in its input guards")
    return reasons


def _has_symbolic_expressions(value: Any) -> bool:
    if isinstance(value, dict):
        return "as_expr" in value or any(_has_symbolic_expressions(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_symbolic_expressions(item) for item in value)
    return False


def _user_inputs_are_tensors(program: dict[str, Any]) -> bool:
    specs = program.get("graph_module", {}).get("signature", {}).get("input_specs", [])
    for spec in specs:
        if not isinstance(spec, dict) or "constant_input" in spec or "custom_obj" in spec:
            return False
        user = spec.get("user_input")
        if isinstance(user, dict) and "as_tensor" not in user.get("arg", {}):
            return False
    return True
