"""How construction code passes constants on: the facts the removal-target rules follow (WN109).

``SConv1d(..., norm="weight_norm")`` builds ``NormConv1d(..., norm=norm)``,
which builds ``apply_parametrization_norm(nn.Conv1d(...), norm)``; whether a
removal on the outer module raises depends on where that string leads.  The
analysis keeps, for the attributes a class builds, the functions made only of
tests and returns, and each ``__init__``'s parameters, a small tree of
``model.Value`` instead of the syntax tree: callees resolved to qualified
names, constants as ``repr`` writes them, parameters by name.  Everything
else is "unknown", which the rules read as "the code does not decide".

The syntax is first cut down to a positionless copy (``slim_value``) while
the tree is walked, since names are resolved only once the whole module is
known (``to_value``).
"""

from __future__ import annotations

import ast
from typing import Callable, Mapping

from .model import Param, Signature, Test, Value
from .resolve import Scope

#: The unknown: an expression construction code does not pass on as a constant, parameter or call.
UNKNOWN_NODE = ast.Constant(value=Ellipsis)
UNKNOWN = Value("unknown")
#: Deeper values are unknown: construction code nests a few calls, not hundreds.
_MAX_DEPTH = 24
#: Elements of a list kept for a container (``nn.ModuleList([a, b, ...])``).
_MAX_ELEMENTS = 64
_UNREADABLE = Test("", "?")
_NEGATED = {"==": "!=", "!=": "==", "in": "not in", "not in": "in", "is": "is not", "is not": "is",
            "true": "false", "false": "true"}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}

#: Containers whose elements are the modules put in them (their arguments are kept).
CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})
#: Resolves a callee expression in a scope to the qualified names it may be.
NamesOf = Callable[[ast.expr, Scope], frozenset[str]]


def _literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is not Ellipsis and isinstance(
        node.value, (str, bool, int, float, type(None))
    )


def _callee(node: ast.expr, depth: int) -> ast.expr | None:
    """A callee as a positionless chain of names (``nn.Conv1d``); None for anything else."""
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id)
    if isinstance(node, ast.Attribute) and depth < _MAX_DEPTH:
        value = _callee(node.value, depth + 1)
        return ast.Attribute(value=value, attr=node.attr) if value is not None else None
    return None


def slim_value(node: ast.expr | None, offset: int, depth: int = 0) -> ast.expr:
    """A positionless copy of what a value passes on: constants, names, calls (with their line), lists."""
    if node is None or depth > _MAX_DEPTH:
        return UNKNOWN_NODE
    if _literal(node):
        return ast.Constant(value=node.value)  # type: ignore[attr-defined]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _literal(node.operand):
        value = node.operand.value  # type: ignore[attr-defined]
        return ast.Constant(value=-value) if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN_NODE
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id)
    if isinstance(node, ast.Call):
        return _slim_call(node, offset, depth)
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) <= _MAX_ELEMENTS:
        return ast.List(elts=[slim_value(e, offset, depth + 1) for e in node.elts])
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return ast.List(elts=[slim_value(node.elt, offset, depth + 1)])
    if isinstance(node, ast.IfExp):  # ``weight_norm(conv) if use_weight_norm else conv``: the test is kept to read
        return ast.IfExp(test=node.test, body=slim_value(node.body, offset, depth + 1), orelse=slim_value(node.orelse, offset, depth + 1))
    return UNKNOWN_NODE


def _slim_call(node: ast.Call, offset: int, depth: int) -> ast.expr:
    func = _callee(node.func, depth + 1)
    if func is None:
        return UNKNOWN_NODE
    args = [ast.Starred(value=UNKNOWN_NODE) if isinstance(a, ast.Starred) else slim_value(a, offset, depth + 1) for a in node.args]
    keywords = [ast.keyword(arg=k.arg, value=slim_value(k.value, offset, depth + 1) if k.arg else UNKNOWN_NODE) for k in node.keywords]
    return ast.Call(func=func, args=args, keywords=keywords, lineno=node.lineno + offset)


def to_value(node: ast.expr, scope: Scope, names_of: NamesOf, params: frozenset[str]) -> Value:
    """The ``Value`` of a slim expression: callees resolved in ``scope``, ``params`` named as parameters."""
    if node is UNKNOWN_NODE:
        return UNKNOWN
    if isinstance(node, ast.Constant):
        return Value("const", literal=repr(node.value))
    if isinstance(node, ast.Name):
        return Value("param", names=(node.id,)) if node.id in params else UNKNOWN
    if isinstance(node, ast.List):
        return Value("list", args=tuple(to_value(e, scope, names_of, params) for e in node.elts))
    if isinstance(node, ast.IfExp):
        branches = (to_value(node.body, scope, names_of, params), to_value(node.orelse, scope, names_of, params))
        return Value("if", args=branches, when=tests_of(node.test, params, True))
    if isinstance(node, ast.Call):
        names = names_of(node.func, scope)
        if not names:
            return Value("unknown", line=getattr(node, "lineno", 0))
        star = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if all(name.partition(".")[0] == "torch" for name in names) and not names & CONTAINERS:
            # A torch layer or norm applier: what it is matters, not what it is given (keeps the summaries small).
            return Value("call", names=tuple(sorted(names)), star=star, line=getattr(node, "lineno", 0))
        return Value(
            "call",
            names=tuple(sorted(names)),
            args=tuple(to_value(a, scope, names_of, params) for a in node.args if not isinstance(a, ast.Starred)),
            keywords=tuple((k.arg, to_value(k.value, scope, names_of, params)) for k in node.keywords if k.arg),
            star=star,
            line=getattr(node, "lineno", 0),
        )
    return UNKNOWN


# -- tests ---------------------------------------------------------------------------
def tests_of(node: ast.expr, params: frozenset[str], holds: bool) -> tuple[Test, ...]:
    """What must hold of the parameters for ``node`` to be ``holds`` (true or false); ``?`` where unreadable."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return tests_of(node.operand, params, not holds)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And if holds else ast.Or):
        return tuple(t for value in node.values for t in tests_of(value, params, holds))
    if _read_name(node, params):
        return (Test(_read_name(node, params), "true" if holds else "false"),)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        found = _comparison(node.left, node.ops[0], node.comparators[0], params)
        if found is not None:
            return (found if holds else Test(found.param, _NEGATED[found.op], found.literals),)
    return (_UNREADABLE,)


def _comparison(left: ast.expr, op: ast.cmpop, right: ast.expr, params: frozenset[str]) -> Test | None:
    name = _COMPARE.get(type(op))
    if name is None:
        return None
    if name in ("in", "not in"):
        if _read_name(left, params) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            if all(_literal(e) for e in right.elts):
                return Test(_read_name(left, params), name, tuple(repr(e.value) for e in right.elts))  # type: ignore[attr-defined]
        return None
    if isinstance(right, (ast.Name, ast.Attribute)) and _literal(left) and name in ("==", "!="):
        left, right = right, left
    if _read_name(left, params) and _literal(right):
        return Test(_read_name(left, params), name, (repr(right.value),))  # type: ignore[attr-defined]
    return None


def _read_name(node: ast.expr, params: frozenset[str]) -> str:
    """The parameter ``node`` reads, or the dotted constant (``Config.up_type``) a caller put among ``params``."""
    if isinstance(node, ast.Name):
        return node.id if node.id in params else ""
    dotted = dotted_name(node)
    return dotted if dotted is not None and "." in dotted and dotted in params else ""


def dotted_name(node: ast.expr) -> str | None:
    """``Config.up_type`` as written (a chain of attributes on a name), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def passes(tests: tuple[Test, ...], env: Mapping[str, object]) -> bool | None:
    """Whether every test holds for the constants in ``env``: None when one is unknown."""
    result: bool | None = True
    for test in tests:
        verdict = _passes(test, env)
        if verdict is False:
            return False
        if verdict is None:
            result = None
    return result


def _passes(test: Test, env: Mapping[str, object]) -> bool | None:
    arg = env.get(test.param) if test.param else None
    if not isinstance(arg, str):
        return None  # a module, or unknown
    try:
        value = ast.literal_eval(arg)
        literals = [ast.literal_eval(literal) for literal in test.literals]
    except (ValueError, SyntaxError):
        return None
    if test.op in ("true", "false"):
        return bool(value) is (test.op == "true")
    if test.op in ("==", "in"):
        return value in literals
    if test.op in ("!=", "not in"):
        return value not in literals
    if test.op in ("is", "is not") and len(literals) == 1 and literals[0] in (None, True, False):
        return (value is literals[0]) is (test.op == "is")
    return None


# -- signatures and helpers ------------------------------------------------------------
def signature_of(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, offset: int) -> tuple[Signature, list[ast.expr | None]]:
    """The parameters (``self`` dropped for a method) and their defaults as slim values (resolved later)."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    params: list[Param] = []
    raw: list[ast.expr | None] = []
    for index, (arg, default) in enumerate(zip(positional, defaults)):
        if method and index == 0:
            continue
        params.append(Param(arg.arg, None, True, index >= len(arguments.posonlyargs)))
        raw.append(slim_value(default, offset) if default is not None else None)
    for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        params.append(Param(arg.arg, None, False, True))
        raw.append(slim_value(kw_default, offset) if kw_default is not None else None)
    return Signature(tuple(params), arguments.vararg is not None, arguments.kwarg is not None), raw


def with_defaults(signature: Signature, raw: list[ast.expr | None], scope: Scope, names_of: NamesOf) -> Signature:
    """The signature with its defaults resolved (defaults see no parameters)."""
    params = tuple(
        Param(p.name, to_value(d, scope, names_of, frozenset()) if d is not None else None, p.positional, p.keyword)
        for p, d in zip(signature.params, raw)
    )
    return Signature(params, signature.varargs, signature.varkw)


def parameter_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    arguments = node.args
    named = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return frozenset(a.arg for a in named)


#: Statements a helper may hold besides tests and returns: they neither bind nor change anything.
_INERT = (ast.Pass, ast.Assert)


def helper_returns(node: ast.FunctionDef | ast.AsyncFunctionDef, offset: int) -> list[tuple[tuple[Test, ...], ast.expr]] | None:
    """The returns of a function made only of tests and returns, each with the tests that lead to it; else None."""
    params = parameter_names(node)
    out: list[tuple[tuple[Test, ...], ast.expr]] = []
    if _block_returns(node.body, (), params, offset, out) is None or not out:
        return None
    return out


def _block_returns(
    body: list[ast.stmt], when: tuple[Test, ...], params: frozenset[str], offset: int,
    out: list[tuple[tuple[Test, ...], ast.expr]],
) -> bool | None:
    """Collect the block's returns; True when it always ends (return or raise), None when it holds other code."""
    for statement in body:
        if isinstance(statement, _INERT) or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
            continue
        if isinstance(statement, ast.Return):
            out.append((when, slim_value(statement.value, offset) if statement.value is not None else ast.Constant(value=None)))
            return True
        if isinstance(statement, ast.Raise):
            return True
        if not isinstance(statement, ast.If):
            return None
        then = _block_returns(statement.body, when + tests_of(statement.test, params, True), params, offset, out)
        orelse = _block_returns(statement.orelse, when + tests_of(statement.test, params, False), params, offset, out)
        if then is None or orelse is None:
            return None
        if then and orelse:
            return True
        if then:
            when = when + tests_of(statement.test, params, False)
        elif orelse:
            when = when + tests_of(statement.test, params, True)
    return False


# -- guards and arguments: which constructions select a norm (WN110) --------------------------
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
        if isinstance(value, ast.Dict) or (value is not None and _literal(value)):
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
            return [("const", repr(value.value))] if _literal(value) else None  # type: ignore[attr-defined]
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
    return [("const", repr(constant.value))] if constant is not None and _literal(constant) else None  # type: ignore[attr-defined]


def expression_sources(node: ast.expr, function: ast.AST | None, constants: dict[str, ast.expr], depth: int) -> list[Source] | None:
    """The constants and caller parameters an argument expression may be (``"none" if i else norm``); None: unknown."""
    if depth > _MAX_LOCALS:
        return None
    if _literal(node):
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
