"""Guards and arguments: which constructions select a norm (WN110's ``serving/selection.py`` reads them).

Read off the syntax tree of the caller: the tests that hold where a line
runs, what a call passes for a parameter (constants, the caller's own
parameters, module-level constant dicts), a parameter's default.
"""

from __future__ import annotations

import ast

from ..model import Test
from .conditions import dotted_name, is_literal, tests_of
from .signatures import parameter_names, signature_of
from .values import UNKNOWN_NODE

#: An argument as read where a call passes it: a constant (``("const", repr)``), a parameter of the calling
#: function (``("param", name)``), or the parameter's default (``("default", "")``); None: unknown.
Source = tuple[str, str]
#: Locals followed at most through assignments (``block_norm = "none" if i else norm``).
_MAX_LOCALS = 8


def guard_tests(body: list[ast.stmt], line: int, params: frozenset[str]) -> tuple[Test, ...]:
    """The tests on ``params`` that hold where ``line`` runs in ``body`` (``if norm == "weight_norm":``, early returns)."""
    tests: list[Test] = []
    for statement in body:
        if statement.lineno > line:
            break
        end = statement.end_lineno or statement.lineno
        if line > end:
            if isinstance(statement, ast.If) and not statement.orelse and _always_ends(statement.body):
                tests.extend(tests_of(statement.test, params, False))  # ``if norm != "weight_norm": return module``
            continue
        if isinstance(statement, ast.If):
            for branch, holds in ((statement.body, True), (statement.orelse, False)):
                if branch and branch[0].lineno <= line <= (branch[-1].end_lineno or branch[-1].lineno):
                    return (*tests, *tests_of(statement.test, params, holds), *guard_tests(branch, line, params))
        for block in _blocks(statement):
            if block and block[0].lineno <= line <= (block[-1].end_lineno or block[-1].lineno):
                return (*tests, *guard_tests(block, line, params))
        break
    return tuple(tests)


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in a compound statement other than ``if`` (a test there is not read)."""
    if isinstance(statement, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
        return [statement.body, statement.orelse] if not isinstance(statement, (ast.With, ast.AsyncWith)) else [statement.body]
    if isinstance(statement, ast.Try):
        return [statement.body, statement.orelse, statement.finalbody, *(h.body for h in statement.handlers)]
    return []


def _always_ends(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def choice_tests(function: ast.FunctionDef | ast.AsyncFunctionDef, line: int, params: frozenset[str]) -> tuple[Test, ...]:
    """``norm_f(conv)`` at ``line`` where ``norm_f = weight_norm if flag else spectral_norm``: what the flag must be."""
    names = {
        node.func.id for node in ast.walk(function)
        if isinstance(node, ast.Call) and node.lineno == line and isinstance(node.func, ast.Name)
    }
    out: list[Test] = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        if node.targets[0].id not in names or not isinstance(node.value, ast.IfExp):
            continue
        body, orelse = _weight_norm_name(node.value.body), _weight_norm_name(node.value.orelse)
        if body != orelse:
            out.extend(tests_of(node.value.test, params, body))
    return tuple(out)


def _weight_norm_name(node: ast.expr) -> bool:
    last = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return last == "weight_norm"


def parameter_defaults(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> tuple[list[str], dict[str, Source | None]]:
    """The positional parameter names (``self`` dropped for a method) and each parameter's default, when constant."""
    signature, raw = signature_of(function, method, 0)
    positional = [p.name for p in signature.params if p.positional]
    defaults: dict[str, Source | None] = {}
    for param, default in zip(signature.params, raw):
        if default is not None:
            defaults[param.name] = ("const", repr(default.value)) if isinstance(default, ast.Constant) and default is not UNKNOWN_NODE else None
    return positional, defaults


def module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound once to a dict literal (``_seanet_kwargs = {...}``) or a constant, a name of one followed."""
    bound: dict[str, list[ast.expr]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(statement.value)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
            bound.setdefault(statement.target.id, []).append(statement.value)
    out: dict[str, ast.expr] = {}
    for name, values in bound.items():
        value = values[0] if len(values) == 1 else None
        for _ in range(_MAX_LOCALS):
            if isinstance(value, ast.Name) and len(bound.get(value.id, ())) == 1:
                value = bound[value.id][0]
        if isinstance(value, ast.Dict) or (value is not None and is_literal(value)):
            out[name] = value
    return out


def argument_sources(
    call: ast.Call, param: str, position: int | None, function: ast.AST | None, constants: dict[str, ast.expr],
) -> list[Source] | None:
    """What a call passes for ``param`` (at ``position`` among the positional ones): the sources, None: unknown."""
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            if position is None:
                continue  # a keyword-only parameter: ``*args`` cannot carry it
            return None  # ``*args`` may carry it
        if index == position:
            return expression_sources(arg, function, constants, 0)
    for keyword in call.keywords:
        if keyword.arg == param:
            return expression_sources(keyword.value, function, constants, 0)
    for keyword in call.keywords:
        if keyword.arg is None:
            return _unpacked(keyword.value, param, function, constants)
    return [("default", "")]


def _unpacked(node: ast.expr, param: str, function: ast.AST | None, constants: dict[str, ast.expr]) -> list[Source] | None:
    """``**CONFIG`` or ``**CONFIG["seanet"]`` of a constant module-level dict: what it gives ``param``."""
    found = _constant_dict(node, function, constants, 0)
    if found is None:
        return None
    for key, value in zip(found.keys, found.values):
        if key is None or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None  # a ``**`` inside the dict, or a computed key
        if key.value == param:
            return [("const", repr(value.value))] if is_literal(value) else None  # type: ignore[attr-defined]
    return [("default", "")]


def _constant_dict(node: ast.expr, function: ast.AST | None, constants: dict[str, ast.expr], depth: int) -> ast.Dict | None:
    if depth > _MAX_LOCALS:
        return None
    if isinstance(node, ast.Dict):
        return node
    if isinstance(node, ast.Name):
        if function is not None and _binds(function, node.id):
            return None  # a parameter or local of the calling function: not the module's constant
        found = constants.get(node.id)
        return found if isinstance(found, ast.Dict) else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        outer = _constant_dict(node.value, function, constants, depth + 1)
        if outer is None:
            return None
        for key, value in zip(outer.keys, outer.values):
            if isinstance(key, ast.Constant) and key.value == node.slice.value:
                return _constant_dict(value, None, constants, depth + 1)
    return None


def _binds(function: ast.AST, name: str) -> bool:
    """``name`` is a parameter of ``function`` or assigned in it."""
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in parameter_names(function):
        return True
    return bool(_assigned(function, name))


def reassigned(function: ast.AST, name: str) -> bool:
    """The function binds ``name`` again (a parameter overwritten before it is tested)."""
    return _assigned(function, name) != []


def _assigned(function: ast.AST, name: str) -> list[ast.expr] | None:
    """The values ``name`` is assigned in ``function`` (None: bound some other way: a loop, a ``with``, an augmented assignment)."""
    values: list[ast.expr] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    values.append(node.value)
                elif not isinstance(target, ast.Name) and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                    return None
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.withitem, ast.NamedExpr, ast.comprehension)):
            bound: ast.expr | None = getattr(node, "target", None) or getattr(node, "optional_vars", None)
            if bound is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(bound)):
                if isinstance(node, ast.AnnAssign) and node.value is not None:
                    values.append(node.value)
                else:
                    return None
    return values


def _module_constant(name: str, constants: dict[str, ast.expr]) -> list[Source] | None:
    constant = constants.get(name)
    return [("const", repr(constant.value))] if constant is not None and is_literal(constant) else None  # type: ignore[attr-defined]


def expression_sources(node: ast.expr, function: ast.AST | None, constants: dict[str, ast.expr], depth: int) -> list[Source] | None:
    """The constants and caller parameters an argument expression may be (``"none" if i else norm``); None: unknown."""
    if depth > _MAX_LOCALS:
        return None
    if is_literal(node):
        return [("const", repr(node.value))]  # type: ignore[attr-defined]
    if isinstance(node, ast.IfExp):
        body = expression_sources(node.body, function, constants, depth + 1)
        orelse = expression_sources(node.orelse, function, constants, depth + 1)
        return body + orelse if body is not None and orelse is not None else None
    if isinstance(node, ast.Attribute) and (dotted := dotted_name(node)) in constants and not (
        isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and _binds(function, dotted.partition(".")[0])
    ):
        return _module_constant(dotted, constants)  # ``Config.out_channels``: a configuration class's constant
    if isinstance(node, ast.Name) and function is None:
        return _module_constant(node.id, constants)  # module-level code
    if isinstance(node, ast.Name) and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        assigned = _assigned(function, node.id)
        if assigned is None:
            return None
        out: list[Source] = [("param", node.id)] if node.id in parameter_names(function) else []
        if not out and not assigned:
            return _module_constant(node.id, constants)  # a global (a closure's name is no module constant)
        for value in assigned:
            found = expression_sources(value, function, constants, depth + 1)
            if found is None:
                return None
            out.extend(found)
        return out
    return None
