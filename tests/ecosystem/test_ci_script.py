"""CI runs the README's test command verbatim, then the type check that keeps ``mypy wnaudit`` at zero."""

from __future__ import annotations

import re
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _readme_test_command() -> str:
    block = re.search(r"```(?:bash|sh|console)?\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert block, "README has no shell block"
    commands = [line for line in block.group(1).splitlines() if "pytest" in line and not line.startswith("#")]
    assert len(commands) == 1, commands
    return commands[0].strip()


def test_ci_runs_the_readme_command_then_mypy():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    tests_at = lines.index(_readme_test_command())
    assert "python -m mypy wnaudit" in lines[tests_at + 1:]


def test_mypy_is_configured_and_installed_with_the_tests():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mypy = project["tool"]["mypy"]
    assert mypy["python_version"] == "3.10"
    strict = [o for o in mypy["overrides"] if "wnaudit.source.*" in o["module"]]
    assert strict and strict[0]["disallow_untyped_defs"] is True
    assert any(requirement.startswith("mypy") for requirement in project["project"]["optional-dependencies"]["test"])
