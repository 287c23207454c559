"""The syntax check of files only parsed for their verdict (issue 14/16): cheaper, and the same verdicts as ``ast.parse``.

``check_syntax`` lets the bytecode compiler accept a file quietly and falls back
to building the tree for anything else; ``parse_syntax`` is the tree-building
reference.  Verdicts must agree on every input, including what only the
compiler rejects, what only it warns about, and nesting near the recursion limit.
"""

from __future__ import annotations

import ast
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wnaudit.source.pipeline import analyse  # check_syntax and the compile it calls live here (issue 21)
from wnaudit.source.engine import check_syntax, parse_syntax
from wnaudit.source.reading import SourceError

COMPILER_ONLY = [  # the parser accepts these; the compiler rejects or warns
    "return 1", "yield 1", "await x", "break", "continue", "class A:\n  return", "def f(a, a): pass",
    "def f():\n  nonlocal x", "from __future__ import braces", "from __future__ import nope", "x = 1\nglobal x",
    "def f():\n  x = 1\n  global x", "x = 1 is 1", "assert (1, 2)", "f(a=1, a=2)", "(yield)", "lambda: (yield)",
    "def f():\n  x = [await i for i in y]", "x = [i async for i in y]",
]
INVALID = ["def f(:", "print 1", "0777", "1__0", "'\\N{nope}'", "a, *b, *c = d", "del f()", "f(**a, *b)", "x = (", "\tif x:\n  pass"]
WARNS_IN_PARSER = ["s = '\\d'", "x = b'\\q'"]

NESTING = {
    "unary": lambda n: "x = " + "-" * n + "1",
    "plus": lambda n: "x = " + "+".join(["1"] * n),
    "attr": lambda n: "x = a" + ".b" * n,
    "call": lambda n: "x = f" + "()" * n,
    "subscript": lambda n: "x = a" + "[0]" * n,
    "lambda": lambda n: "x = " + "lambda: " * n + "1",
    "not": lambda n: "x = " + "not " * n + "1",
    "power": lambda n: "x = " + "**".join(["2"] * n),
    "ifexp": lambda n: "x = " + "1 if 1 else " * n + "1",
    "keyword": lambda n: "x = " + "f(a=" * n + "1" + ")" * n,
    "dict": lambda n: "x = " + "{1: " * n + "1" + "}" * n,
    "comprehension": lambda n: "x = " + "[y for y in " * n + "z" + "]" * n,
    "slice": lambda n: "x = " + "a[1:" * n + "2" + "]" * n,
    "starred": lambda n: "x = " + "[*" * n + "a" + "]" * n,
    "walrus": lambda n: "x = " + "(y := " * n + "1" + ")" * n,
}


def _verdict(check: object, text: str) -> str:
    try:
        check(text, "m.py")  # type: ignore[operator]
    except SourceError as error:
        return str(error)
    return "ok"


@pytest.mark.parametrize("text", COMPILER_ONLY + INVALID + WARNS_IN_PARSER + ["x = 1\n", "def f():\n    return 1\n"])
def test_same_verdict_as_building_the_tree(text: str) -> None:
    assert _verdict(check_syntax, text) == _verdict(parse_syntax, text)


def test_what_only_the_compiler_rejects_is_valid() -> None:
    assert all(_verdict(check_syntax, text) == "ok" for text in COMPILER_ONLY)


@pytest.mark.parametrize("text", WARNS_IN_PARSER + ["x = 1 is 1"])
def test_warnings_as_errors_give_the_same_verdict(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _verdict(check_syntax, text) == _verdict(parse_syntax, text)


def test_the_compiler_alone_emits_no_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_syntax("x = 1 is 1\n", "m.py")  # a compiler-only SyntaxWarning: not the parse's to report
    assert caught == []


@pytest.mark.parametrize("shape", sorted(NESTING))
def test_deep_nesting_gets_the_tree_parses_verdict(shape: str) -> None:
    """Building the tree fails a level or so before compiling does: near that depth the verdicts must still agree."""
    for depth in (*range(1, 60, 11), *range(2800, 3100, 13), 2984, 2985, 2986, 2987, 2988, 6000):
        text = NESTING[shape](depth)
        assert _verdict(check_syntax, text) == _verdict(parse_syntax, text), depth


def test_valid_source_builds_no_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    trees: list[int] = []

    def counting(source: str, filename: str, mode: str, flags: int = 0, **kwargs: object) -> object:
        if flags & ast.PyCF_ONLY_AST:
            trees.append(flags)
        return compile(source, filename, mode, flags, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(analyse, "compile", counting, raising=False)
    check_syntax("import os\n\n\ndef f(x):\n    return os.path.join(x, 'y')\n", "m.py")
    assert trees == []
    with pytest.raises(SourceError):
        check_syntax("def f(:\n", "m.py")
    assert len(trees) == 1  # an error: the verdict is the tree-building parse's


_TOKENS = st.sampled_from([
    "x", "=", "1", "(", ")", "[", "]", ":", "\n", "    ", "def", "f", "return", "yield", "await", "async", "lambda",
    "is", "not", "global", "nonlocal", ",", "*", "**", "'\\d'", "if", "else", "for", "in", "class", "from", "import",
    "__future__", "annotations", "braces", ";", "@", ".", "del", "break",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=25).map(" ".join))
def test_verdicts_agree_on_token_soup(text: str) -> None:
    assert _verdict(check_syntax, text) == _verdict(parse_syntax, text)


@pytest.mark.parametrize("shape", sorted(set(NESTING) - {"lambda", "comprehension"}))  # those two: a code object per level, slow
def test_what_compiles_quietly_builds_a_tree_at_the_same_stack_depth(shape: str) -> None:
    """The compiler's accept must imply the tree parse's, even called as deep: the margin on the recursion limit."""
    low, high = 1, 4000  # the deepest nesting the compiler accepts, here
    while low < high - 1:
        middle = (low + high) // 2
        low, high = (middle, high) if analyse.compiles_quietly(NESTING[shape](middle), "m.py") else (low, middle)
    assert low >= 50, f"the compiler accepts {shape} nested only {low} deep: compiles_quietly refuses plain code"
    accepted = 0
    for depth in range(max(1, low - 25), low + 3):
        text = NESTING[shape](depth)
        if analyse.compiles_quietly(text, "m.py"):
            parse_syntax(text, "m.py")  # called from here, as deep as the compiler was: must not raise
            accepted += 1
    assert accepted >= 20  # the depths just below the compiler's limit were all tried
