"""Issue 23 item 3, as a user runs it: the cache never lands in the project, and two ``--fix`` at once both exit 0.

Both drive the real CLI in subprocesses against whichever ``wnaudit`` package this test imported, so the
file also runs (and fails) against a version without these fixes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import wnaudit

PACKAGE_ROOT = str(Path(wnaudit.__file__).resolve().parents[1])
FIXABLE = (
    "import torch\n"
    "from torch.nn.utils import remove_weight_norm\n"
    "m = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(2, 2))\n"
    "remove_weight_norm(m)\n"
)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WNAUDIT_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=PACKAGE_ROOT, HOME=str(tmp_path / "home"), **extra)
    return env


def _wnaudit(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wnaudit", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_relative_xdg_cache_home_never_puts_the_cache_in_the_project(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(FIXABLE, encoding="utf-8")
    run = _wnaudit(["."], project, _env(tmp_path, XDG_CACHE_HOME=".cache"))
    out, err = run.communicate(timeout=300)
    assert run.returncode == 1, out + err
    assert sorted(p.name for p in project.iterdir()) == ["model.py"], "the cache went into the linted project"


def test_two_fixes_of_one_tree_at_once_both_exit_0(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    for number in range(60):
        (src / f"m{number:02}.py").write_text(FIXABLE, encoding="utf-8")
    env = _env(tmp_path)
    runs = [_wnaudit(["--fix", "--no-cache", "src"], tmp_path, env) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    check = _wnaudit(["--no-cache", "src"], tmp_path, env)
    out, err = check.communicate(timeout=300)
    assert check.returncode == 0, out + err
