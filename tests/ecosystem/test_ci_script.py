"""CI runs the README's commands verbatim: command 1 in a fresh venv plus the porting scenario, then the tests and mypy.

Checked statically (the script itself installs packages and runs the whole suite):
each step is in ``.ci/run``, exactly as README writes it, in the order a new user
takes them, and the scenario's checks really call what they claim to check.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / ".ci" / "run"
PORTING_CHECK = ROOT / ".ci" / "porting_check.py"


def _readme_quick_start() -> list[str]:
    block = re.search(r"```(?:bash|sh|console)?\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert block, "README has no shell block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]


def _readme_command(marker: str) -> str:
    commands = [line for line in _readme_quick_start() if marker in line]
    assert len(commands) == 1, commands
    return commands[0]


def _readme_test_command() -> str:
    return _readme_command("pytest")


def _readme_install_command() -> str:
    return _readme_command("wnaudit examples/")


def _ci_lines() -> list[str]:
    return [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]


def _first(lines: list[str], pattern: str, after: int = -1) -> int:
    for number, line in enumerate(lines):
        if number > after and re.search(pattern, line) and not line.startswith("#"):
            return number
    raise AssertionError(f"no line matching {pattern!r} after line {after + 1} of .ci/run")


def test_ci_runs_the_readme_command_then_mypy():
    lines = _ci_lines()
    tests_at = lines.index(_readme_test_command())
    assert "python -m mypy wnaudit" in lines[tests_at + 1:]


def test_readme_command_one_runs_verbatim_in_a_fresh_venv_and_must_exit_1():
    lines = _ci_lines()
    command = _readme_install_command()
    assert command == 'python -m pip install ".[torch]" "torch==2.13.0" && wnaudit examples/'
    at = lines.index(command)
    venv = _first(lines, r"python3 -m venv ")
    activate = _first(lines, r"^\. .*/bin/activate", venv)
    assert venv < activate < at, "command 1 runs in its own fresh venv"
    assert lines[venv].split()[-1].strip('"') in lines[activate], "and that venv is the one activated"
    assert ".ci-venv" not in lines[venv], "not the test venv, which gets the test extra"
    assert lines[at - 1] == "set +e" and lines[at + 1] == "status=$?", "its exit status is kept, not aborted on"
    assert '"$status" -ne 1' in lines[_first(lines, r"^if ", at)], "findings in examples/: exactly 1 expected"
    assert _first(lines, r"pip install") == at, "nothing is installed in it before command 1"


def test_the_porting_scenario_uses_what_command_one_installed_before_the_test_venv():
    lines = _ci_lines()
    installed = lines.index(_readme_install_command())
    copied = _first(lines, r"^cp -R examples ", installed)
    copy = lines[copied].split()[-1]
    fixed = _first(lines, r"^wnaudit --fix --unsafe-fixes ", copied)
    assert lines[fixed].split("#")[0].split()[-1] == copy, "the fix runs on the copy, never on examples/"
    checked = _first(lines, r"\.ci/porting_check\.py", fixed)
    assert "set +e" not in lines[copied:checked], "a failing fix or check fails CI"
    assert _first(lines, r"^pip |pip install", installed + 1) > checked, "no other install before the scenario"
    assert _first(lines, r"python3 -m venv \.ci-venv") > checked


def _calls(tree: ast.AST) -> set[str]:
    return {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}


def test_the_porting_check_runs_the_served_example_and_loads_the_folded_checkpoints():
    tree = ast.parse(PORTING_CHECK.read_text(encoding="utf-8"))
    calls = _calls(tree)
    assert {"synthesize", "wnaudit.load_state_dict", "wnaudit.assert_folded"} <= calls
    assert "load_file" in calls and "torch.load" in calls, "both example checkpoints"
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "serving.serve" in imported
    assert not imported & {"numpy", "pytest"}, "only what the torch extra installs"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_ci_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(CI)], check=True)


def test_mypy_is_configured_and_installed_with_the_tests():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mypy = project["tool"]["mypy"]
    assert mypy["python_version"] == "3.10"
    strict = [o for o in mypy["overrides"] if "wnaudit.source.*" in o["module"]]
    assert strict and strict[0]["disallow_untyped_defs"] is True
    assert any(requirement.startswith("mypy") for requirement in project["project"]["optional-dependencies"]["test"])
