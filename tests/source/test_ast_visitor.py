"""The fast visitor base calls the same handlers on the same nodes in the same order as ``ast.NodeVisitor``."""

from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from wnaudit.source.ast_visitor import Visitor, _plan
from wnaudit.source.serving.slim_trees import shift_lines

REPO = Path(__file__).parents[2]
#: Constructs the real sources may lack: match, star handlers, globals, dict unpacking, walrus, async, f-strings.
CORNERS = '''
global g
def f(a, /, b=1, *c, d: int = 2, **e) -> None:
    nonlocal_value = {**e, "k": [x async for x in y if not x]} if (n := -a) else {1, 2}
    print(f"{a!r:>{b}}", a < b <= c, a and b or c, ~a + b @ c)
    match a:
        case {"k": 1, **rest} | [1, *_] if rest: pass
        case Point(x=0, y=_) as p: del p
        case None: ...
    try:
        lambda q=1: q ** 2
    except (ValueError, TypeError) as err:
        raise
    class C(B, metaclass=M):
        x: int = 1
        async def g(self): await self; yield; yield from y
    b += 1; a[1:2, ::3] = b.c = 3
'''
#: Star handlers, where the Python running the tests has them (3.11+; the project supports 3.10).
STAR_HANDLERS = """
try:
    pass
except* (ValueError, TypeError) as err:
    raise
"""
#: Every concrete node type, so a visitor can see them all.
ALL_TYPES = sorted({t.__name__ for t in vars(ast).values() if isinstance(t, type) and issubclass(t, ast.AST)})


def _trees() -> list[ast.AST]:
    paths = sorted((REPO / "examples").rglob("*.py")) + sorted((REPO / "wnaudit").rglob("*.py"))
    assert len(paths) > 50
    corners = [ast.parse(CORNERS)] + ([ast.parse(STAR_HANDLERS)] if sys.version_info >= (3, 11) else [])
    return corners + [ast.parse(path.read_text(encoding="utf-8")) for path in paths]


TREES = _trees()


def _recorder(base: type, names: list[str], prune: tuple[str, ...] = ()) -> Any:
    """A visitor class on ``base`` that records each node its handlers see, and walks on except into ``prune``."""

    def handler(self: Any, node: ast.AST) -> str:
        self.seen.append((type(node).__name__, id(node)))
        if type(node).__name__ not in prune:
            self.generic_visit(node)
        return type(node).__name__

    def init(self: Any) -> None:
        self.seen = []

    return type("Recorder", (base,), {"__init__": init, **{"visit_" + name: handler for name in names}})


#: Handler sets: everything; only leaves (so the leaf skip must not apply); a few, as the hot visitors have.
HANDLER_SETS = {
    "all": (ALL_TYPES, ()),
    "leaves": (["Load", "Store", "Constant", "Add", "Not", "And", "Lt", "MatchSingleton"], ()),
    "store_only": (["Store"], ()),
    "ops_only": (["Eq", "LtE"], ()),
    "hot": (["Name", "Call", "Attribute", "Assign", "FunctionDef", "ClassDef", "Lambda"], ("FunctionDef", "Lambda")),
}


@pytest.mark.parametrize("kind", sorted(HANDLER_SETS))
def test_same_nodes_in_the_same_order(kind: str) -> None:
    names, prune = HANDLER_SETS[kind]
    fast_class = _recorder(Visitor, names, prune)
    slow_class = _recorder(ast.NodeVisitor, names, prune)
    total = 0
    for tree in TREES:
        fast, slow = fast_class(), slow_class()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # NodeVisitor's own shims, not ours
            assert fast.visit(tree) == slow.visit(tree)
        assert fast.seen == slow.seen
        total += len(fast.seen)
    assert total > 50  # the sources have many of each


def test_leaves_are_seen_only_by_their_handlers() -> None:
    """A handler for ``Load`` or ``Constant`` is called on every one (the leaf skip is only for the blind)."""
    tree = ast.parse("x = y + 1 < z")
    seen = _recorder(Visitor, ["Load", "Store", "Constant", "Add", "Lt"])()
    seen.visit(tree)
    assert [name for name, _ in seen.seen] == ["Store", "Load", "Add", "Constant", "Lt", "Load"]


def test_deprecated_constant_handlers_still_called() -> None:
    tree = ast.parse("x = 1 + 'a'")
    fast, slow = _recorder(Visitor, ["Num"])(), _recorder(ast.NodeVisitor, ["Num"])()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        fast.visit(tree)
        slow.visit(tree)
    assert fast.seen == slow.seen and len(fast.seen) == 1


def test_overriding_the_walk_is_refused() -> None:
    with pytest.raises(TypeError, match="generic_visit"):
        type("Bad", (Visitor,), {"generic_visit": lambda self, node: None})


class _Custom(ast.AST):
    """A node type without an ASDL signature: its fields are checked value by value, as ``ast`` does."""

    _fields = ("items", "one", "name")


def test_node_without_a_signature_walked_as_ast_does() -> None:
    inner = ast.parse("a + 1").body[0]
    tree = ast.Module(body=[ast.Expr(value=_Custom(items=[inner, "text", None], one=inner, name="n"))], type_ignores=[])
    fast, slow = _recorder(Visitor, ["Name", "Constant"])(), _recorder(ast.NodeVisitor, ["Name", "Constant"])()
    fast.visit(tree)
    slow.visit(tree)
    assert fast.seen == slow.seen and len(fast.seen) == 4


def test_shift_lines_as_ast_increment_lineno_does() -> None:
    """The serving facts' pieces move as ``ast.increment_lineno`` moves them, ``TypeIgnore`` (a field) included."""
    ignored = "x = 1  # type: ignore[misc]\n"
    pairs = [(ast.parse(ignored, type_comments=True), ast.parse(ignored, type_comments=True)), *zip(_trees(), _trees())]
    for tree, twin in pairs:
        ast.increment_lineno(tree, 7)
        shift_lines(twin, 7)
        assert ast.dump(tree, include_attributes=True) == ast.dump(twin, include_attributes=True)
    assert pairs[0][1].type_ignores[0].lineno == 8


def test_scalar_fields_are_not_walked() -> None:
    """Names, strings and constants never hold nodes: the walks do not even read them."""
    assert _plan(ast.Constant) == ()
    type_params = ["type_params"] if sys.version_info >= (3, 12) else []  # PEP 695, 3.12+
    assert [field for field, _ in _plan(ast.FunctionDef)] == ["args", "body", "decorator_list", "returns", *type_params]
    assert [field for field, _ in _plan(ast.Global)] == []


def _deepest(visitor_class: Any, element: str) -> int:
    """The longest ``element + element + ...`` the visitor walks under a recursion limit of 2000."""

    def walks(n: int) -> bool:
        tree = ast.parse("x = " + "+".join([element] * n))
        try:
            visitor_class().visit(tree)
        except RecursionError:
            return False
        return True

    low, high = 1, 2000  # walks(low), not walks(high)
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(2000)
    try:
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if walks(middle) else (low, middle)
    finally:
        sys.setrecursionlimit(previous)
    return low


@pytest.mark.parametrize(("names", "element"), [([], "1"), (["Call"], "f(a)"), (["Constant"], "1"), (["BinOp"], "1")])
def test_too_deep_where_node_visitor_is(names: list[str], element: str) -> None:
    """A tree too deep for ``ast.NodeVisitor``'s recursion is too deep here (frames counted as it would have used them).

    Within a few levels: the interpreter also counts calls through C below, which frames do not show.
    """
    slow = _deepest(_recorder(ast.NodeVisitor, names), element)
    fast = _deepest(_recorder(Visitor, names), element)
    assert 300 < slow < 1990 and abs(fast - slow) <= 8, (slow, fast)


def test_a_handler_that_raises_leaves_the_frame_count_as_it_was() -> None:
    class Raises(Visitor):
        def visit_Name(self, node: ast.Name) -> None:
            raise ValueError(node.id)

    visitor = Raises()
    with pytest.raises(ValueError, match="deep"):
        visitor.visit(ast.parse("[[[[deep]]]]"))
    assert visitor._saved_frames == 0
