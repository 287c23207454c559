"""The pre-commit hooks, through the real ``pre-commit try-repo`` against this checkout.

pre-commit builds a fresh virtualenv and pip-installs this repository into it
exactly as it would for a user (network to PyPI for hatchling, libcst, click).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ecosystem_helpers import REPO_ROOT, WN101_LINE, run_wnaudit, write_buggy

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None or shutil.which("git") is None,
    reason="pre-commit (pip install pre-commit) and git are needed to run the real hook",
)

HOOKS_FILE = REPO_ROOT / ".pre-commit-hooks.yaml"


def _git(*args: str, cwd: Path) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="wnaudit tests",
        GIT_AUTHOR_EMAIL="tests@wnaudit.invalid",
        GIT_COMMITTER_NAME="wnaudit tests",
        GIT_COMMITTER_EMAIL="tests@wnaudit.invalid",
    )
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _try_repo(hook_repo: Path, hook: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, "--all-files", "--color", "never"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=480,
    )


def test_manifest_is_valid_for_pre_commit():
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(str(HOOKS_FILE))}
    assert set(hooks) == {"wnaudit", "wnaudit-checkpoints"}
    source = hooks["wnaudit"]
    assert (source["language"], source["additional_dependencies"]) == ("python", [])
    assert (source["types"], source["types_or"]) == (["file"], ["python", "pyi", "jupyter"]), "notebooks too (issue 14)"


def test_checkpoint_hook_matches_checkpoint_names_and_not_source():
    from pre_commit.clientlib import load_manifest

    from wnaudit.checkpoint.sniff import CHECKPOINT_SUFFIXES, INDEX_SUFFIX

    hook = {h["id"]: h for h in load_manifest(str(HOOKS_FILE))}["wnaudit-checkpoints"]
    pattern = re.compile(hook["files"])
    for suffix in (*CHECKPOINT_SUFFIXES, INDEX_SUFFIX):
        assert pattern.search(f"models/g_00500000{suffix}"), suffix
        assert pattern.search(f"models/G{suffix.upper()}"), suffix
    for name in ("model.py", "config.json", "notes.ptx", "bin/tool"):
        assert not pattern.search(name), name


def test_checkpoint_hook_audits_without_torch():
    """Auditing needs no torch (issue 37): the hook installs wnaudit alone; only ``--fix`` needs torch."""
    from pre_commit.clientlib import load_manifest

    hook = {h["id"]: h for h in load_manifest(str(HOOKS_FILE))}["wnaudit-checkpoints"]
    assert hook["additional_dependencies"] == []


def test_readme_snippet_uses_the_hooks_that_exist():
    """The .pre-commit-config.yaml snippet in the README names real hook ids."""
    import yaml  # a dependency of pre-commit

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, flags=re.S)
    configs = [yaml.safe_load(block) for block in blocks if "repos:" in block]
    assert configs, "README has no .pre-commit-config.yaml snippet"
    ids = {hook["id"] for config in configs for repo in config["repos"] for hook in repo["hooks"]}
    assert ids == {"wnaudit", "wnaudit-checkpoints"}


def test_try_repo_fails_on_the_bug_and_passes_after_fix(tmp_path: Path, hook_repo: Path, pre_commit_home: Path):
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    write_buggy(project)
    (project / "README.md").write_text("not python, not a checkpoint\n")
    _git("add", "-A", cwd=project)
    _git("commit", "-q", "-m", "vocoder with a WN101 bug", cwd=project)

    failing = _try_repo(hook_repo, "wnaudit", project, pre_commit_home)
    output = failing.stdout + failing.stderr
    assert failing.returncode == 1, output
    assert re.search(rf"vocoder\.py:{WN101_LINE}:\d+: WN101", output), output
    assert "Failed" in output

    fixed = run_wnaudit("--fix", "vocoder.py", cwd=project)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    _git("add", "-A", cwd=project)

    passing = _try_repo(hook_repo, "wnaudit", project, pre_commit_home)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert re.search(r"^wnaudit\.+Passed$", passing.stdout, flags=re.M), passing.stdout
