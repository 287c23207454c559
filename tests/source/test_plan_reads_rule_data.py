"""The plan stage names no rule: what a rule's fix needs of the plan is data on its class (issue 38, item 2).

WN103's migration re-runs the rules on the post-fix view and settles the
removals in other files first; both are declared on the rule class
(``RERUN_AFTER_FIX``, ``SETTLE_FIXES``), and the plan reads them for any rule.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from pathlib import Path

import pytest

from tests.source.test_source_fix_migration import MODEL, SWALLOWING
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.pipeline import plan
from wnaudit.source.rules import RULES
from wnaudit.source.rules.application import DeprecatedLegacyWeightNorm


def _model_alone(root: Path) -> Path:
    """A project whose helper is outside the run: the migration's settle step withholds its fix."""
    (root / "voc").mkdir()
    (root / "voc" / "__init__.py").write_text("")
    (root / "voc" / "model.py").write_text(textwrap.dedent(MODEL).lstrip())
    (root / "voc" / "utils.py").write_text(textwrap.dedent(SWALLOWING).lstrip())
    return root / "voc" / "model.py"


def test_the_plan_stage_names_no_rule_code():
    assert not re.findall(r"[\"']WN\d{3}[\"']", inspect.getsource(plan))


def test_every_declared_settle_step_loads_and_reruns_are_declared_on_classes():
    assert [r.code for r in RULES if r.RERUN_AFTER_FIX] == ["WN103"]
    for rule in RULES:
        if rule.SETTLE_FIXES:
            assert callable(plan._settle_step(rule.SETTLE_FIXES))


def test_the_plan_runs_the_settle_step_the_rule_declares(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    model = _model_alone(tmp_path)
    declared = lint_files([model], RunOptions(unsafe_fixes=True)).findings
    assert [(f.code, f.fixable) for f in declared] == [("WN103", False)] * 2
    assert "may receive the migrated module" in declared[0].message
    monkeypatch.setattr(DeprecatedLegacyWeightNorm, "SETTLE_FIXES", "")
    undeclared = lint_files([model], RunOptions(unsafe_fixes=True)).findings
    assert [(f.code, f.fixable) for f in undeclared] == [("WN103", True)] * 2


def test_the_plan_reruns_the_rules_only_for_a_rule_that_declares_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """With the rerun declared, the removal the migration breaks is fixed along in the same file."""
    source = (
        "import torch.nn as nn\nfrom torch.nn.utils import weight_norm, remove_weight_norm\n\n"
        "conv = weight_norm(nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n"
    )
    fixed = {}
    for declared in (True, False):
        monkeypatch.setattr(DeprecatedLegacyWeightNorm, "RERUN_AFTER_FIX", declared)
        path = tmp_path / f"m{int(declared)}.py"
        path.write_text(source)
        lint_files([path], RunOptions(fix=True, unsafe_fixes=True))
        fixed[declared] = path.read_text()
    assert "\nremove_weight_norm(conv)" not in fixed[True] and "remove_parametrizations(conv" in fixed[True]
    assert "\nremove_weight_norm(conv)" in fixed[False]  # undeclared: the migration breaks the removal
