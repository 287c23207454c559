""""How to add a source rule" (docs/architecture.md) is true as written (issue 38, item 4).

The test follows the recipe literally in a copy of the checkout: one rule
module with no fix, one provider module for the new fact it reads, one page,
the reference regenerated; no list anywhere is edited.  The copy's wnaudit
must then gather the rule, run it, report it (without a fix), and the
copy's own rule and page tests must accept it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CODE = "WN198"

#: Step 3: the new fact, in a provider module of its own.
PROVIDER = '''
"""The file's ``assert`` statements, with their tests as written."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..model import Site
from .base import Provider, Sites


@dataclass(frozen=True)
class Assertion:
    site: Site
    test: str


class Assertions(Provider[list[Assertion]]):
    name = "assertions"
    fact_type = list[Assertion]
    data_classes = (Assertion,)

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.found: list[Assertion] = []

    def walk(self, tree: ast.Module, sites: Sites) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                self.found.append(Assertion(sites.site(node, self.module), ast.unparse(node.test)))

    def fact(self) -> list[Assertion]:
        return sorted(self.found, key=lambda a: a.site.key)
'''

#: Step 1: the rule, in a new family module; no fix, so ``applicability = None``.
RULE = '''
"""Asserting a legacy weight-norm attribute: WN198 (a throwaway rule of the recipe test)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ...common.findings import Severity
from ..model import FileSummary
from ..providers.assertions import Assertions
from .base import Candidate, Invalid, Rule, Valid

if TYPE_CHECKING:
    from ..context import Context


class AssertsLegacyWeightNormAttribute(Rule):
    code = "WN198"
    title = "assertion on a legacy weight-norm attribute"
    severity = Severity.WARNING
    applicability = None
    PROVIDERS = (Assertions,)
    VALID = (Valid("import torch\\n\\nconv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))\\n"),)
    INVALID = (
        Invalid(
            "import torch\\n\\nconv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))\\n"
            "assert hasattr(conv, 'weight_g')\\n"
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        for assertion in context.fact(summary, Assertions):
            if "weight_g" in assertion.test:
                yield Candidate(self.code, assertion.site, "the assertion reads a legacy weight-norm attribute", None)
'''

#: Step 4: the page, in ruff's shape.
PAGE = '''
# WN198: assertion on a legacy weight-norm attribute

## What it does
Finds `assert` statements that read `weight_g`, an attribute only the legacy weight norm has.

## Why is this bad?
Once the norm is a parametrization the attribute is gone, and the assertion fails.

## Example
```python
import torch

conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))
assert hasattr(conv, "weight_g")
```

## Use instead
```python
import torch

conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))
```

## Fix safety
No automatic fix: what the assertion should check instead is the author's choice.
'''

BAD = 'import torch\n\nconv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))\nassert hasattr(conv, "weight_g")\n'


def _checkout_copy(root: Path) -> Path:
    """A copy of this checkout's package, pages, docs, tests and settings (no caches)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for folder in ("wnaudit", "rules", "docs", "tests"):
        shutil.copytree(REPO / folder, root / folder, ignore=ignore)
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _changed(copy: Path) -> set[str]:
    """The files of the copy that differ from this checkout's, or that it lacks."""
    changed = set()
    for path in copy.rglob("*"):
        relative = path.relative_to(copy)
        if path.is_file() and relative.parts[0] != "tests" and "__pycache__" not in relative.parts:
            original = REPO / relative
            if not original.is_file() or original.read_bytes() != path.read_bytes():
                changed.add(relative.as_posix())
    return changed


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "WNAUDIT_NO_CACHE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_a_rule_with_no_fix_and_its_own_provider_needs_no_list_edit(tmp_path: Path):
    copy = _checkout_copy(tmp_path / "checkout")
    (copy / "wnaudit" / "source" / "providers" / "assertions.py").write_text(textwrap.dedent(PROVIDER).lstrip())
    (copy / "wnaudit" / "source" / "rules" / "legacy_assertions.py").write_text(textwrap.dedent(RULE).lstrip())
    (copy / "rules" / f"{CODE}.md").write_text(PAGE.lstrip())
    generated = _run(copy, "docs/generate_rules_reference.py")
    assert generated.returncode == 0, generated.stderr
    assert _changed(copy) == {  # the recipe's files, and the reference it regenerates: no list was edited
        "wnaudit/source/providers/assertions.py", "wnaudit/source/rules/legacy_assertions.py", f"rules/{CODE}.md",
        "docs/rules.md",
    }

    imported = _run(copy, "-c", "from wnaudit.source import AssertsLegacyWeightNormAttribute as R; print(R.code)")
    assert imported.stdout.split() == [CODE], imported.stderr
    (copy / "example.py").write_text(BAD)
    linted = _run(copy, "-m", "wnaudit", "--no-cache", "--output-format", "json", "example.py")
    assert linted.returncode == 1, linted.stderr
    report = json.loads(linted.stdout)
    assert report["errors"] == []
    assert [(f["code"], f["line"], f["fixable"], f["fix"]) for f in report["findings"]] == [(CODE, 4, False, None)]

    tests = _run(
        copy, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
        "tests/source/test_source_rules.py", "tests/source/test_source_rule_discovery.py",
        "tests/ecosystem/test_rule_pages_complete.py", "tests/report/test_report_fix_applicability.py",
        "tests/ecosystem/test_docs_recipes.py::test_rules_reference_is_generated_and_current",
        "-k", f"{CODE} or discovery or registry or every or generated",
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
    passed = {line.split("::")[-1] for line in tests.stdout.splitlines() if line.startswith("PASSED ")}
    assert {
        f"test_rule_is_registered_with_title_and_fix_safety[{CODE}]", f"test_valid_examples_are_clean[{CODE}-]",
        f"test_invalid_examples_trigger_once_and_fix_to_the_expected_code[{CODE}-]",
        f"test_rule_page_has_ruff_shape[{CODE}]", f"test_rule_page_examples_execute[{CODE}]",
        f"test_page_has_the_five_sections_in_order[{CODE}]",
        f"test_rule_page_fix_safety_agrees_with_the_declared_applicability[{CODE}]",
        f"test_source_rules_needing_review_are_the_documented_ones[{CODE}]",
        "test_every_family_module_contributes_its_rules", "test_every_registered_code_has_a_page_and_every_page_a_code",
        "test_rules_reference_is_generated_and_current",
    } <= passed, sorted(passed)
