"""Each rule's own VALID/INVALID examples, and its rules/WNxxx.md page, are tests."""

from __future__ import annotations

import ast
import re
import warnings

import pytest

from wnaudit.common.findings import Applicability
from wnaudit.report.codes import code_registry
from wnaudit.report.rule_pages import page_sections, page_title
from wnaudit.source import all_rules, fix_source, lint_source
from wnaudit.source.rules import Invalid, Valid

RULES = all_rules()


@pytest.fixture(autouse=True)
def _own_project(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each example is a project of its own: this checkout around it imports wnaudit, which would choose WN110's fix."""
    monkeypatch.chdir(tmp_path)


def codes(source: str, path: str = "example.py") -> list[str]:
    return [f.code for f in lint_source(source, path)]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_registered_with_title_and_fix_safety(rule):
    assert code_registry()[rule.code].title == rule.title
    assert code_registry()[rule.code].applicability is rule.applicability
    assert rule.applicability is None or isinstance(rule.applicability, Applicability)
    assert rule.VALID and rule.INVALID
    if rule.applicability is None:  # a fix is optional: a rule without one fixes none of its examples
        assert all(example.expected_replacement is None for example in rule.INVALID)


#: What a page's "Fix safety" begins with, by the rule's applicability (``None``: the rule has no fix).
FIX_SAFETY = {Applicability.SAFE: "safe", Applicability.UNSAFE: "needs review", None: "no automatic fix"}


@pytest.mark.parametrize(
    "rule, example", [(r, e) for r in RULES for e in r.VALID], ids=lambda x: getattr(x, "code", "")
)
def test_valid_examples_are_clean(rule, example: Valid):
    assert rule.code not in codes(example.source)


@pytest.mark.parametrize(
    "rule, example", [(r, e) for r in RULES for e in r.INVALID], ids=lambda x: getattr(x, "code", "")
)
def test_invalid_examples_trigger_once_and_fix_to_the_expected_code(rule, example: Invalid):
    source = example.source
    assert codes(source).count(rule.code) == 1
    fixed, done = fix_source(source, "example.py")
    if example.expected_replacement is None:  # the rule offers no fix for this example
        assert fixed == source and done == []
        return
    assert fixed == example.expected_replacement
    assert [f.code for f in done] == [rule.code]
    assert rule.code not in codes(fixed)
    assert codes(fixed) == []
    again, nothing = fix_source(fixed, "example.py")
    assert again == fixed and nothing == []


def test_every_example_is_declared_as_valid_or_invalid():
    """VALID holds Valid examples and INVALID Invalid ones (a bare string would be run as neither)."""
    for rule in RULES:
        assert all(type(example) is Valid for example in rule.VALID), rule.code
        assert all(type(example) is Invalid for example in rule.INVALID), rule.code


def _blocks(code: str) -> tuple[str, str]:
    sections = page_sections(code)
    pattern = re.compile(r"```python\n(.*?)```", re.S)
    return pattern.findall(sections["Example"])[0], pattern.findall(sections["Use instead"])[0]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_page_has_ruff_shape(rule):
    assert page_title(rule.code) == f"{rule.code}: {rule.title}"
    sections = page_sections(rule.code)
    assert list(sections) == ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety"]
    assert sections["Fix safety"].lower().startswith(FIX_SAFETY[rule.applicability])


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_page_examples_execute(rule):
    """Example -> exactly this code; Use instead -> clean and it runs; --fix(Example) == Use instead for a rule
    with a fix, and leaves the Example as it is for one without (a fix is optional)."""
    bad, good = _blocks(rule.code)
    assert codes(bad) == [rule.code] * codes(bad).count(rule.code) and rule.code in codes(bad)
    assert codes(good) == []
    fixed, _ = fix_source(bad, "example.py")
    expected = bad if rule.applicability is None else good
    assert ast.dump(ast.parse(fixed)) == ast.dump(ast.parse(expected))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(good, f"{rule.code}-use-instead", "exec"), {"__name__": "page_example"})


@pytest.mark.parametrize("code", ["WN101", "WN102", "WN104", "WN105", "WN107"])
def test_rule_page_bad_examples_really_fail_under_torch(code):
    bad, _ = _blocks(code)
    with warnings.catch_warnings(), pytest.raises((ValueError, TypeError)):
        warnings.simplefilter("ignore")
        exec(compile(bad, f"{code}-example", "exec"), {"__name__": "page_example"})


def test_wn106_bad_example_silently_folds_nothing():
    bad, good = _blocks("WN106")
    for source, folded in ((bad, False), (good, True)):
        namespace: dict = {"__name__": "page_example"}
        exec(compile(source, "WN106", "exec"), namespace)
        conv = namespace["model"][0]
        assert hasattr(conv, "parametrizations") is not folded


@pytest.mark.parametrize(
    "caught, flagged",
    [("KeyError", False), ("ValueError", False), ("Exception", False), ("TypeError", True), ("AttributeError", True)],
)
def test_wn107_is_not_reported_where_a_handler_expects_the_failure(caught, flagged):
    """A handler that already catches the failure (ValueError, KeyError or broader) keeps WN107 quiet; others do not."""
    source = (
        "import torch\nfrom torch.nn.utils import weight_norm\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))  # noqa: WN103\n"
        f"try:\n    torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')\nexcept {caught}:\n    pass\n"
    )
    assert codes(source) == (["WN107"] if flagged else [])


def test_wn108_bad_example_raises_attribute_error_and_fixed_one_folds():
    bad, good = _blocks("WN108")
    with warnings.catch_warnings(), pytest.raises(AttributeError):
        warnings.simplefilter("ignore")
        exec(compile(bad, "WN108-example", "exec"), {"__name__": "page_example"})
    scope: dict = {"__name__": "page_example"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(good, "WN108-use-instead", "exec"), scope)
    assert not hasattr(scope["conv"], "parametrizations")


def test_wn108_through_an_imported_name_drops_the_broken_import():
    source = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm, remove_parametrizations\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_parametrizations(conv, 'weight')\n"
    )
    assert codes(source) == ["WN108"]
    fixed, done = fix_source(source, "m.py")
    assert [f.code for f in done] == ["WN108"] and codes(fixed) == []
    assert "parametrizations import weight_norm\n" in fixed
    assert "torch.nn.utils.parametrize.remove_parametrizations(conv, 'weight')" in fixed
