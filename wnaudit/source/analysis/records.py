"""A call as the analysis keeps it once its piece's tree is freed, and what is read off its arguments."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..model import Site, Test
from ..resolve import Scope


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A call, kept without its syntax tree: what the rules need about it."""

    func: ast.expr
    scope: Scope
    unit: str
    function: int
    caught: frozenset[str] | None  # what the innermost enclosing try catches; None: no try
    ifs: tuple[ast.expr, ...]
    site: Site
    star_args: bool
    missing_tensor_name: bool
    leave_parametrized_false: bool
    #: The first argument is ``self.<attr>`` in a method of the top-level class ``unit``: attr ("" otherwise).
    self_attr: str
    #: The first argument is itself a call (``weight_norm(nn.Conv1d(...))``): a module built right there.
    first_is_call: bool
    #: ``self_attr`` names the container the first argument is an element of (``for l in self.ups``).
    element: bool
    #: The method of ``unit`` the call is in, and the tests on ``__init__``'s parameters that hold there
    #: (kept only for calls on ``self.<attr>``).
    method: str
    when: tuple[Test, ...]
    #: ``return applier(module)`` where ``module`` is a parameter of the enclosing top-level function: a helper
    #: that norms what its callers give it (``apply_parametrization_norm``), not a module that already exists.
    returns_parameter: bool


def capitalised(func: ast.expr) -> bool:
    """A callee whose last name is capitalised, as class names are: its calls may build a class of the file."""
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name[:1].isupper()


def first_argument(call: ast.Call) -> ast.expr | None:
    """The module a norm applier or remover is given: the first positional argument or ``module=``."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    for keyword in call.keywords:
        if keyword.arg == "module":
            return keyword.value
    return None


def has_star(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def tensor_name_missing(call: ast.Call) -> bool:
    if has_star(call):
        return False
    return len(call.args) < 2 and not any(k.arg == "tensor_name" for k in call.keywords)


def leaves_unparametrized(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg == "leave_parametrized":
            return isinstance(keyword.value, ast.Constant) and keyword.value.value is False
    return len(call.args) >= 3 and isinstance(call.args[2], ast.Constant) and call.args[2].value is False
