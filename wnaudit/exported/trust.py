"""What loading and running an archive with torch would execute, decided from its JSON alone.

``torch.export.load`` (torch 2.13) loads *every* member below ``models/`` as a program, whatever
its suffix (:mod:`.archive` refuses any but ``models/NAME.json``), and for each program runs code
from the file in these places:

- weights or constants stored with ``use_pickle``: ``torch.load(weights_only=False)``;
- legacy ``data/weights/NAME.pt`` / ``data/constants/NAME.pt`` members, preferred to the configs when
  present: ``torch.load(weights_only=True)``, and on failure again with ``weights_only=False``;
- when loading the pt2 layout raises ``RuntimeError`` (a member outside the one top-level folder is
  enough), the pre-2.8 layout's top-level ``serialized_*.pt`` members, unpickled the same way;
- custom objects (torchbind's pickler) and opaque objects (``pickle.loads``);
- sample inputs (of every program, not only the one returned): ``torch.load(weights_only=True)``,
  and on failure again with ``weights_only=False``;
- symbolic shapes: expression strings parsed by ``sympy.sympify``, which evaluates them (accepted
  only when :func:`is_plain_sympy`);
- an AOTInductor package's shared library, loaded (native code) by ``load_pt2``;

and running the program (``ep.module()``) ``exec``s guard code built from the
archive's ``guards_code`` (accepted only when :func:`.guards.is_plain_guard`) and constant inputs, and calls each node's target,
any ``torch.*`` attribute the graph names.  The fix loads and runs the
program only when none of these can happen (sample inputs are first read by
wnaudit with ``weights_only=True`` alone), or with ``--trust-pickle``; and it
loads with the pt2 loader itself (:func:`wnaudit.core.torch_api.export_load`),
never through the fallback to the pre-2.8 layout.  Archives whose members are
not all in one top-level folder, or that name a member twice, are refused
when read (:mod:`.archive`): torch and wnaudit would not read the same members.
Every member must be accounted for (:func:`unknown_members`): what ``torch.export.save`` writes,
the payloads the configs name, ``extra/`` strings; anything else needs ``--trust-pickle``.
"""

from __future__ import annotations

import ast
from typing import Any

from ..core.catalogue import (
    PT2_AOTINDUCTOR_DIR,
    PT2_ATEN_DUNDER_OPS,
    PT2_CONSTANTS_CONFIG,
    PT2_CONSTANTS_DIR,
    PT2_CUSTOM_OBJECT_PREFIX,
    PT2_EXTRA_DIR,
    PT2_LEGACY_SUFFIX,
    PT2_METADATA_DELIMITER,
    PT2_MODEL_JSON_SUFFIX,
    PT2_MODELS_DIR,
    PT2_OPAQUE_OBJECT_PREFIX,
    PT2_PLAIN_MEMBERS,
    PT2_SAFE_TARGET,
    PT2_SAMPLE_INPUTS,
    PT2_SYMBOLIC_TARGETS,
    PT2_SYMPY_NAMES,
    PT2_SYMPY_TOKEN,
    PT2_WEIGHTS_CONFIG,
    PT2_WEIGHTS_DIR,
)
from .archive import ArchiveContents, ModelEntry
from .expression_cost import MAX_NUMBER_BITS, affordable
from .graph import iter_all_nodes, iter_json_objects, json_list, json_object
from .guards import is_plain_guard

TRUST_FLAG = "--trust-pickle"


def is_safe_target(target: str) -> bool:
    """A registered aten/prims overload, ``operator.getitem`` or a pure symbolic-size function: nothing else runs."""
    if target in PT2_SYMBOLIC_TARGETS:
        return True
    match = PT2_SAFE_TARGET.fullmatch(target)
    if match is None:
        return False
    op = match.group("op")
    return op is None or not op.startswith("__") or op in PT2_ATEN_DUNDER_OPS


def code_run_on_load(contents: ArchiveContents) -> list[str]:
    """Why loading and running this archive with torch would run code from it (empty: it would not)."""
    reasons: list[str] = []
    if any(member.startswith(PT2_AOTINDUCTOR_DIR) for member in contents.members):
        reasons.append("it holds an AOTInductor shared library, which loading runs")
    for member in contents.members:
        if _is_legacy_payload(member):
            reasons.append(f"it holds {member}, a pickled legacy payload that loading unpickles")
    for entry in contents.models:
        reasons.extend(_model_reasons(entry))
    unknown = next(iter(unknown_members(contents)), None)
    if unknown is not None:
        reasons.append(f"it holds {unknown}, a member wnaudit does not know how torch reads")
    return list(dict.fromkeys(reasons))


def unknown_members(contents: ArchiveContents) -> list[str]:
    """Members the screen has not accounted for: what torch.export.save writes, each payload a config names,
    and ``extra/`` strings.  Anything else is refused rather than guessed at (it may be what a newer or
    older loader reads and evaluates)."""
    known = set(PT2_PLAIN_MEMBERS)
    for entry in contents.models:
        known.update({
            f"{PT2_MODELS_DIR}{entry.name}{PT2_MODEL_JSON_SUFFIX}", PT2_SAMPLE_INPUTS.format(entry.name),
            PT2_WEIGHTS_CONFIG.format(entry.name), PT2_CONSTANTS_CONFIG.format(entry.name),
        })
        for config, folder in ((entry.weights_config, PT2_WEIGHTS_DIR), (entry.constants_config, PT2_CONSTANTS_DIR)):
            known.update(f"{folder}{payload['path_name']}" for payload in config.values() if isinstance(payload, dict) and "path_name" in payload)
    return [member for member in contents.members if member not in known and not _has_reason_of_its_own(member)]


def _has_reason_of_its_own(member: str) -> bool:
    """Read as strings (``extra/``), or screened by a reason of their own (AOTInductor, legacy pickles)."""
    return member.startswith((PT2_EXTRA_DIR, PT2_AOTINDUCTOR_DIR)) or _is_legacy_payload(member)


def _is_legacy_payload(member: str) -> bool:
    return member.startswith((PT2_WEIGHTS_DIR, PT2_CONSTANTS_DIR)) and member.endswith(PT2_LEGACY_SUFFIX)


def _model_reasons(entry: ModelEntry) -> list[str]:
    return [*_payload_reasons(entry), *_code_reasons(entry.program), *_graph_reasons(entry.program)]


def _payload_reasons(entry: ModelEntry) -> list[str]:
    """Weights and constants that loading would unpickle."""
    reasons = []
    for config, what in ((entry.weights_config, "weight"), (entry.constants_config, "constant")):
        for fqn, payload in config.items():
            if not isinstance(payload, dict) or payload.get("use_pickle"):
                reasons.append(f"{what} {fqn} is pickled")
            elif str(payload.get("path_name", "")).startswith((PT2_CUSTOM_OBJECT_PREFIX, PT2_OPAQUE_OBJECT_PREFIX)):
                reasons.append(f"{what} {fqn} is a pickled object")
    return reasons


def _code_reasons(program: dict[str, Any]) -> list[str]:
    """Strings that loading evaluates (symbolic shapes) or running executes (guards, non-tensor inputs)."""
    reasons = []
    guards = program.get("guards_code") or []
    unsafe_guard = next((guard for guard in guards if not is_plain_guard(guard)), None) if isinstance(guards, list) else guards
    if unsafe_guard is not None:
        reasons.append(f"it carries guard code {str(unsafe_guard)[:80]!r}, not plain size arithmetic, which running it executes")
    unsafe = next(iter(_unsafe_expressions(program)), None)
    if unsafe is not None:
        reasons.append(f"its symbolic shape {unsafe[:80]!r} is not a plain sympy expression, and loading evaluates it")
    if not _ranges_are_numbers(program):
        reasons.append(f"its range constraints are not numbers of at most {MAX_NUMBER_BITS} bits, and loading hands them to sympy")
    if not _user_inputs_are_tensors(program):
        reasons.append("it takes non-tensor inputs, which become code in its input guards")
    return reasons


def _ranges_are_numbers(program: dict[str, Any]) -> bool:
    """Every dynamic dimension's bounds are integers (or absent), as ``torch.export.save`` writes them."""
    for bounds in json_object(program, "range_constraints").values():
        if not isinstance(bounds, dict):
            return False
        for value in bounds.values():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                return False
            if isinstance(value, int) and value.bit_length() > MAX_NUMBER_BITS:
                return False
    return True


def _graph_reasons(program: dict[str, Any]) -> list[str]:
    """Node targets and operator arguments that name anything but registered operators and pure size functions."""
    reasons = []
    for node in iter_all_nodes(program.get("graph_module", {})):
        target = str(node.get("target"))
        if not is_safe_target(target):
            reasons.append(f"node {node.get('name')} calls {target}, not a registered aten operator")
        walked = _dunder_in_source_fns(node)
        if walked is not None:
            reasons.append(f"node {node.get('name')} records source function {walked[:80]!r}, which loading resolves by getattr through a dunder")
    for operator in _operator_arguments(program.get("graph_module", {})):
        if not is_safe_target(operator):
            reasons.append(f"an argument names {operator}, not a registered aten operator")
    return reasons


def _dunder_in_source_fns(node: dict[str, Any]) -> str | None:
    """A ``source_fn_stack`` entry whose target walks a dunder (``torch.__class__…``): loading ``getattr``s along
    every ``torch.…`` name recorded there, so only plain names are accepted."""
    metadata = node.get("metadata")
    stack = metadata.get("source_fn_stack") if isinstance(metadata, dict) else None
    if not isinstance(stack, str):
        return None
    return next((entry for entry in stack.split(PT2_METADATA_DELIMITER) if "__" in entry.partition(",")[2]), None)


def _operator_arguments(value: Any) -> list[str]:
    """Every operator named as an argument (``{"as_operator": ...}``), which loading resolves like a target."""
    return [str(item["as_operator"]) for item in iter_json_objects(value) if "as_operator" in item]


def _unsafe_expressions(value: Any) -> list[str]:
    """The symbolic-shape expressions (``as_expr``) that are not plain sympy: loading ``sympify``s (evaluates) each."""
    unsafe: list[str] = []
    for item in iter_json_objects(value):
        if "as_expr" not in item:
            continue
        body = item["as_expr"]
        expression = body.get("expr_str") if isinstance(body, dict) else None
        if not isinstance(expression, str) or not is_plain_sympy(expression):
            unsafe.append(str(expression if expression is not None else body))
    return unsafe


def is_plain_sympy(expression: str) -> bool:
    """Only sympy constructors and torch's shape functions called on literals: evaluating it runs nothing else.

    No attribute access, subscript, string other than a symbol name or a number, nor any other name can
    appear, so ``sympy.sympify`` can do no more than build the expression.
    """
    position, end = 0, len(expression.rstrip())
    while position < end:
        match = PT2_SYMPY_TOKEN.match(expression, position)
        if match is None or match.end() == position:
            return False
        if match.group("name") is not None and match.group("name") not in PT2_SYMPY_NAMES:
            return False
        position = match.end()
    return _affordable_python(expression)


def _affordable_python(expression: str) -> bool:
    """The expression as the Python sympify evaluates it, its cost bounded (:mod:`.expression_cost`);
    text that is not Python is refused, not guessed at."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return affordable(tree.body)


def _user_inputs_are_tensors(program: dict[str, Any]) -> bool:
    specs = json_list(json_object(json_object(program, "graph_module"), "signature"), "input_specs")
    for spec in specs:
        if not isinstance(spec, dict) or "constant_input" in spec or "custom_obj" in spec:
            return False
        user = spec.get("user_input")
        if isinstance(user, dict) and "as_tensor" not in json_object(user, "arg"):
            return False
    return True
