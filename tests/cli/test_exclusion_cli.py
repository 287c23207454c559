"""ruff's exclusion model on the command line and in the pre-commit hooks (issue 14)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from cli_helpers import BUGGY, REPO_ROOT, wnaudit

from wnaudit.common.config import DEFAULT_EXCLUDES

HOOKS = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())


def _project(root: Path) -> Path:
    (root / "pyproject.toml").write_text('[tool.wnaudit]\nextend-exclude = ["third_party", "gen/*.py"]\n')
    for name in ("src/model.py", "third_party/vendored.py", "gen/made.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(BUGGY)
    return root


def _reported(stdout: bytes) -> set[str]:
    return {line.split(":", 1)[0] for line in stdout.decode().splitlines() if ": WN" in line}


def test_a_directory_under_a_default_excluded_name_is_linted_when_named(tmp_path):
    (tmp_path / "build" / "myproj").mkdir(parents=True)
    (tmp_path / "build" / "myproj" / "model.py").write_text(BUGGY)
    named_dir = wnaudit("build/myproj", cwd=tmp_path)
    named_file = wnaudit("build/myproj/model.py", cwd=tmp_path)
    assert named_dir.returncode == named_file.returncode == 1
    assert _reported(named_dir.stdout) == _reported(named_file.stdout) == {"build/myproj/model.py"}
    walked = wnaudit(".", cwd=tmp_path)  # a walk from above still skips build/
    assert walked.returncode == 0 and _reported(walked.stdout) == set()


def test_explicit_files_are_linted_unless_force_exclude(tmp_path):
    root = _project(tmp_path)
    files = ["src/model.py", "third_party/vendored.py", "gen/made.py"]
    assert _reported(wnaudit(*files, cwd=root).stdout) == set(files)
    assert _reported(wnaudit("--force-exclude", *files, cwd=root).stdout) == {"src/model.py"}
    assert _reported(wnaudit(".", cwd=root).stdout) == {"src/model.py"}


def test_cli_extend_exclude_and_exclude(tmp_path):
    root = _project(tmp_path)
    assert _reported(wnaudit("--extend-exclude", "src", ".", cwd=root).stdout) == set()
    (root / ".venv").mkdir()
    (root / ".venv" / "lib.py").write_text(BUGGY)
    assert _reported(wnaudit(".", cwd=root).stdout) == {"src/model.py"}
    # --exclude replaces `exclude` (the defaults here) and keeps extend-exclude, as in ruff.
    assert _reported(wnaudit("--exclude", "src", ".", cwd=root).stdout) == {".venv/lib.py"}


def test_force_exclude_in_config(tmp_path):
    root = _project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.wnaudit]\nextend-exclude = ["third_party"]\nforce-exclude = true\n')
    assert _reported(wnaudit("src/model.py", "third_party/vendored.py", cwd=root).stdout) == {"src/model.py"}


@pytest.mark.parametrize("hook", HOOKS, ids=lambda hook: hook["id"])
def test_pre_commit_hooks_pass_force_exclude(hook):
    assert "--force-exclude" in shlex.split(hook["entry"])


def test_the_source_hook_as_pre_commit_runs_it_keeps_configured_excludes(tmp_path):
    """pre-commit runs ``entry args... FILES`` with every staged file named."""
    root = _project(tmp_path)
    hook = next(h for h in HOOKS if h["id"] == "wnaudit")
    program, *entry_args = shlex.split(hook["entry"])
    assert program == "wnaudit"
    staged = ["gen/made.py", "src/model.py", "third_party/vendored.py"]
    completed = wnaudit(*entry_args, *hook.get("args", []), *staged, cwd=root)
    assert completed.returncode == 1
    assert _reported(completed.stdout) == {"src/model.py"}


def test_default_excludes_are_documented():
    text = (REPO_ROOT / "docs" / "getting-started.md").read_text()
    section = text[text.index("Default excludes") :]
    listed = re.findall(r"`([^`]+)`", section.split("\n\n", 2)[1] if "\n\n" in section else section)
    assert set(DEFAULT_EXCLUDES) <= set(listed)
