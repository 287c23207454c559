"""Fuzzing the source rules: generated Python and mutated real-looking model files.

Properties, for every input:
* ``lint_source`` returns findings or raises ``SourceError`` (its one-line error
  for content that is not Python) -- nothing else;
* if the input compiles, ``fix_source`` output compiles too;
* the fix is idempotent: ``fix(fix(x)) == fix(x)``;
* after the fix, no fixable finding is left;
* a file without fixable findings is left byte-identical.
"""

from __future__ import annotations

import sys
import warnings

import hypothesmith
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wnaudit.source import SourceError, fix_source, lint_source

from .fuzzing import example_sources, fuzz_settings, mutated_examples

PATH = "fuzzed/model.py"


def _compiles(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # generated code calls literals
            compile(source, PATH, "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def check_properties(source: str) -> None:
    try:
        findings = lint_source(source, PATH)
    except SourceError:
        return
    fixed, applied = fix_source(source, PATH)
    assert isinstance(fixed, str)
    fixable = [f for f in findings if f.fixable]
    if not fixable:
        assert fixed == source, "a file without fixable findings was changed"
    if _compiles(source):
        assert _compiles(fixed), f"the fix broke the file:\n{fixed}"
    refixed, again = fix_source(fixed, PATH)
    assert refixed == fixed, "the fix is not idempotent"
    assert again == []
    left = [f for f in lint_source(fixed, PATH) if f.fixable]
    assert left == [], f"fixable findings remain after the fix: {left}"


SOURCES = example_sources()


def test_the_examples_are_there_to_mutate() -> None:
    assert any("remove_weight_norm" in source for source in SOURCES)


def test_the_properties_hold_on_each_example_file() -> None:
    for source in SOURCES:
        check_properties(source)


@fuzz_settings(40)
@given(mutated_examples(SOURCES))
def test_mutated_example_files(source: str) -> None:
    check_properties(source)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles calls of literals
@fuzz_settings(30, long_share=0.2)
@given(hypothesmith.from_grammar())
def test_grammar_generated_source(source: str) -> None:
    check_properties(source)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles calls of literals
@fuzz_settings(5, long_share=0.05)
@given(hypothesmith.from_node())
def test_libcst_generated_modules(source: str) -> None:
    check_properties(source)


@fuzz_settings(40)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    try:
        lint_source(data, PATH)
    except SourceError:
        pass


def test_source_lint_never_imports_torch() -> None:
    """Fuzzing must not hide an import of torch on the lint path."""
    import subprocess

    code = (
        "import sys; from wnaudit.source import lint_source, fix_source\n"
        "src = open(sys.argv[1]).read()\n"
        "lint_source(src, 'x.py'); fix_source(src, 'x.py')\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    example = sorted(p for p in __import__("pathlib").Path(__file__).resolve().parents[2].joinpath("examples").rglob("*.py"))[0]
    completed = subprocess.run([sys.executable, "-c", code, str(example)], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr


def test_fix_is_idempotent_when_it_has_to_add_import_torch() -> None:
    """Found by test_mutated_example_files: a use of ``torch`` before any import of it.

    The first fix inserts ``import torch`` for its rewritten call, which gives
    the earlier, unbound ``torch.nn.utils.weight_norm`` a meaning, so a second
    fix rewrites that one too.
    """
    source = "x = torch.nn.utils.weight_norm(a)\nfrom torch.nn.utils import weight_norm\ny = weight_norm(b)\n"
    check_properties(source)
