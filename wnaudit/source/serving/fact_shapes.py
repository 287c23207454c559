"""The code shapes the serving-facts walk and its linking recognise, read off single syntax nodes.

Pure functions of one node (no scope, no resolution): which calls fold, what a
loop over ``model.modules()`` binds, what an ``if`` tests, which parameters
default to false.  The API names come from the core catalogue.
"""

from __future__ import annotations

import ast

from ...core import catalogue

REMOVERS = frozenset(
    api for s in catalogue.SPELLINGS if s.kind is not catalogue.Kind.SPECTRAL_NORM for api in s.remove_apis
)
FOLDS = REMOVERS | frozenset(catalogue.FOLDING_APIS)

#: The legacy weight-norm removers: on a module the modern spelling parametrized they raise ``ValueError``.
LEGACY_REMOVERS = frozenset(
    api for s in catalogue.SPELLINGS if s.kind is catalogue.Kind.WEIGHT_NORM and s.style is catalogue.Style.LEGACY
    for api in s.remove_apis
)
CAPTURES = frozenset(catalogue.INFERENCE_CAPTURES)
CONTEXTS = frozenset(catalogue.INFERENCE_CONTEXTS)
MAX_DEPTH = 16
#: ``for m in model.modules():``: each ``m`` is the model or one of its parts (``named_*`` yield pairs).
_MODULE_ITERATORS = frozenset({"modules", "children", "named_modules", "named_children"})
_ITERATION_WRAPPERS = frozenset({"list", "tuple", "reversed", "enumerate"})
#: Builtins that only look at what they are given: handing a model to them runs none of it.
LOOKERS = frozenset({"isinstance", "hasattr", "print", "len", "type", "id", "repr", "str", "callable"})
HOOK_CLASSES = frozenset(s.implementation for s in catalogue.SPELLINGS if s.kind is not catalogue.Kind.SPECTRAL_NORM)


def exclusion(call: ast.Call) -> tuple[tuple[str, ...], str]:
    """What a fold's ``exclude=`` leaves live: the members a literal names (first components), or, for any other
    value, the keyword as written (the partial fold's evidence); ``((), "")`` when it excludes nothing."""
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg != catalogue.PARTIAL_FOLD_KEYWORD or _empty_literal(value):
            continue
        elements = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else []
        names = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if names and len(names) == len(elements):
            return tuple(sorted({name.split(".")[0] for name in names})), ""
        return (), f"{keyword.arg}={ast.unparse(value)}"
    return (), ""


def _empty_literal(node: ast.expr) -> bool:
    """``exclude=()`` or ``exclude=None`` excludes nothing."""
    return (isinstance(node, (ast.Tuple, ast.List, ast.Set)) and not node.elts) or (isinstance(node, ast.Constant) and node.value is None)


def config_flag(test: ast.expr) -> str:
    """``fold_weight_norm`` of ``cfg.fold_weight_norm``, ``cfg["fold_weight_norm"]``, ``cfg.get("fold_weight_norm")``."""
    if isinstance(test, ast.Attribute):
        return test.attr
    if isinstance(test, ast.Subscript) and isinstance(test.slice, ast.Constant) and isinstance(test.slice.value, str):
        return test.slice.value
    if (
        isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "get" and test.args
        and isinstance(test.args[0], ast.Constant) and isinstance(test.args[0].value, str)
    ):
        return test.args[0].value
    return ""


def member_name(node: ast.expr) -> str | None:
    """``dec`` of ``model.dec`` and of ``model["dec"]`` (None: not a named member)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def config_path(node: ast.expr) -> str:
    """``model.generator`` of ``cfg.model.generator`` / ``cfg["model"]["generator"]``: where in a config it reads."""
    parts: list[str] = []
    while (name := member_name(node)) is not None:
        parts.append(name)
        node = node.value  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def entry_as_mapping(target: ast.Subscript, value: ast.expr) -> ast.Dict:
    """``models["hift"] = HiFT()`` read as one more value of ``models``, a mapping holding that entry (models
    kept in dicts); a key not written is ``"*"``, as for a mapping built whole."""
    return ast.copy_location(ast.Dict(keys=[target.slice], values=[value]), target)


def mapping_entries(node: ast.Call | ast.Dict | ast.DictComp, depth: int = 0) -> list[tuple[str, ast.expr]]:
    """(key, value) of each entry a mapping is built with; ``"*"`` where the key is not a written string."""
    if depth > 4:
        return []
    if isinstance(node, ast.DictComp):
        return [("*", node.value)]
    if isinstance(node, ast.Dict):
        out: list[tuple[str, ast.expr]] = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                out.extend(mapping_entries(value, depth + 1) if isinstance(value, (ast.Dict, ast.DictComp)) else [])
            else:
                out.append((key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else "*", value))
        return out
    found = [e for a in node.args[:1] if isinstance(a, (ast.Dict, ast.DictComp)) for e in mapping_entries(a, depth + 1)]
    for keyword in node.keywords:
        if keyword.arg is not None:
            found.append((keyword.arg, keyword.value))
        elif isinstance(keyword.value, (ast.Dict, ast.DictComp)):
            found.extend(mapping_entries(keyword.value, depth + 1))
    return found


def module_loop(node: ast.For | ast.AsyncFor) -> tuple[ast.expr | None, ast.expr | None]:
    """``for m in model.modules():`` -> (``m``, ``model``); ``named_modules()`` and ``enumerate`` bind the second name.

    ``list(...)``, ``tuple(...)`` and ``reversed(...)`` around the iterator change nothing.
    """
    call = node.iter
    pairs = 0
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in _ITERATION_WRAPPERS and call.args:
        pairs += call.func.id == "enumerate"
        call = call.args[0]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _MODULE_ITERATORS):
        return None, None
    target: ast.expr | None = node.target
    for _ in range(pairs + call.func.attr.startswith("named_")):
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
    return (target, call.func.value) if isinstance(target, ast.Name) else (None, None)


def named_loop_variable(node: ast.For | ast.AsyncFor) -> str:
    """``name`` of ``for name, child in model.named_children():`` ("": not such a loop)."""
    iterator, target = node.iter, node.target
    if not (isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Attribute) and iterator.func.attr.startswith("named_")):
        return ""
    if not (isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name)):
        return ""
    return target.elts[0].id


def _calls_in(statements: list[ast.stmt], test: str) -> dict[int, str]:
    return {id(call): test for part in statements for call in ast.walk(part) if isinstance(call, ast.Call)}


def skipping_calls(node: ast.For | ast.AsyncFor) -> dict[int, str]:
    """The calls of ``for name, child in model.named_children():`` that a test on ``name`` keeps from some parts.

    ``if name != "f0_predictor": fold(child)`` guards them; ``if name == "f0_predictor": continue`` skips every call
    after it in the loop body.  Each call's id -> the test as written.
    """
    name = named_loop_variable(node)
    found: dict[int, str] = {}
    skipped = ""
    for position, statement in enumerate(node.body if name else ()):
        if not isinstance(statement, ast.If) or not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement.test)):
            continue
        test = ast.unparse(statement.test)
        found.update(_calls_in(statement.body, test))
        found.update(_calls_in(statement.orelse, f"not ({test})"))
        if not skipped and any(isinstance(n, ast.Continue) for n in statement.body):
            skipped = f"not ({test})"
            found.update(_calls_in(node.body[position + 1 :], skipped))
    return found


def is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def trains(node: ast.Call, names: frozenset[str]) -> bool:
    """Optimizers, ``backward()``, ``train()`` / ``train(True)``: the function trains."""
    if any(n.startswith(catalogue.TRAINING_API_PREFIXES) for n in names):
        return True
    func = node.func
    if not isinstance(func, ast.Attribute):
        return False
    return func.attr in catalogue.TRAINING_METHODS or (func.attr == "train" and (not node.args or is_true(node.args[0])))


def is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and any(
        isinstance(b, ast.Constant) and b.value == "__main__" for b in sides
    )


def false_defaults(args: ast.arguments) -> set[str]:
    """Parameters whose default is ``False``, ``None`` or ``0``."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return {a.arg for a, d in pairs if isinstance(d, ast.Constant) and not d.value}


def is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True
