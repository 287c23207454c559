"""Guards and symbolic shapes that are plain arithmetic but never finish (``9**9**9**9``) are refused
before anything evaluates them (issue 36).  Before, ``--fix`` hung: torch ``exec``s the guards when
running the program and ``sympify``s the shapes while loading.  Each run is a child process with a
time limit, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from exported_helpers import rewrite_model_json

from wnaudit.exported.expression_cost import MAX_RESULT_BITS, affordable
from wnaudit.exported.guards import is_plain_guard
from wnaudit.exported.trust import is_plain_sympy

ROOT = Path(__file__).resolve().parents[2]
TOWER = "9**9**9**9"


def _fix(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WNAUDIT_NO_CACHE": "1"}
    try:
        return subprocess.run([sys.executable, "-m", "wnaudit", "-q", "--fix", str(path)], capture_output=True, text=True, env=env, timeout=90, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("wnaudit --fix hung evaluating an expression from the archive")


def _tower_guard(program: dict[str, Any]) -> None:
    program["guards_code"] = [f"L['x'].size()[0] == {TOWER}"]


def _tower_shape(program: dict[str, Any]) -> None:
    text = json.dumps(program)
    for old in set(re.findall(r'"expr_str": ("(?:[^"\\]|\\.)*")', text)):
        text = text.replace(f'"expr_str": {old}', f'"expr_str": {json.dumps(f"Mul(Integer({TOWER}), Integer(2))")}')
    program.clear()
    program.update(json.loads(text))


@pytest.mark.parametrize("where", ["guard", "shape"])
def test_a_power_tower_is_refused_not_evaluated(where: str, fused_archive: Path, dynamic_archive: Path, tmp_path: Path) -> None:
    source, edit = (fused_archive, _tower_guard) if where == "guard" else (dynamic_archive, _tower_shape)
    target = rewrite_model_json(source, tmp_path / "tower.pt2", edit)
    before = target.read_bytes()
    done = _fix(target)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and str(target) in lines[0] and "--trust-pickle" in lines[0], done.stderr
    assert target.read_bytes() == before


@pytest.mark.parametrize("expression", [
    TOWER, "2**64**2", "(2**64)**64**2", "1 << 10**6", f"{'9' * 30} + 1", "Pow(Integer(9), Integer(99999))",
    "PowByNatural(Symbol('s0'), Integer(1000000))", "Mul(" + ", ".join(["Pow(Integer(2), Integer(64))"] * 300) + ")",
    "1e999999", "Float('1e99999')", "Add(" + ", ".join(["s0"] * 6000) + ")",
])
def test_unbounded_expressions_are_refused(expression: str) -> None:
    assert not affordable(ast.parse(expression, mode="eval").body)


@pytest.mark.parametrize("expression", [
    "Mul(Integer(10), Symbol('s53', positive=True, integer=True))", "Pow(Symbol('s0'), Integer(2))",
    "FloorDiv(Add(Symbol('s0'), Integer(-1)), Integer(2))", "Max(Integer(1), Symbol('s0'))",
    "Add(Pow(Symbol('s0'), Integer(2)), Integer(1))", "Integer(9223372036854775807)",
])
def test_what_torch_writes_is_accepted(expression: str) -> None:
    assert affordable(ast.parse(expression, mode="eval").body) and is_plain_sympy(expression)


def test_guards_of_real_shape_arithmetic_are_accepted_and_towers_not() -> None:
    assert is_plain_guard("1 + (L['x'].size()[2] // 2) <= 2*L['x'].size()[2]")
    assert is_plain_guard("L['x'].size()[2] ** 2 <= 4096")
    assert not is_plain_guard(f"L['x'].size()[2] <= {TOWER}")
    assert not is_plain_guard("L['x'].size()[2] ** L['x'].size()[2] > 0")


def test_a_chain_deeper_than_the_recursion_limit_costs_no_recursion() -> None:
    deep = ast.parse("+".join(["1"] * 1500), mode="eval").body  # 1500 nested BinOps: deeper than sys.getrecursionlimit()
    assert affordable(deep)
    assert MAX_RESULT_BITS >= 1024
