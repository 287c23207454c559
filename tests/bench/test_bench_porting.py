"""``wnaudit bench`` as a porting user meets it (issue 37, item 6): run from the project's root, on a
checkpoint ``wnaudit --fix`` folded, with one saving figure in plain words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from wnaudit.bench.refold import REFOLD_NOTE  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS = '''\
import torch
from torch import nn
from torch.nn.utils import weight_norm as legacy_weight_norm
from torch.nn.utils.parametrizations import weight_norm


def build():
    return nn.Sequential(
        weight_norm(nn.Conv1d(8, 16, 3, padding=1)), nn.ReLU(), legacy_weight_norm(nn.Conv1d(16, 8, 3, padding=1))
    )
'''
FAST = ["--input-shape", "1,8,20", "--iterations", "3", "--warmup", "1", "--threads", "1"]


def _project(tmp_path: Path) -> Path:
    (tmp_path / "vocoder").mkdir()
    (tmp_path / "vocoder" / "__init__.py").write_text("")
    (tmp_path / "vocoder" / "models.py").write_text(MODELS)
    return tmp_path


def _wnaudit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The console script's view: ``-P``, so the current directory is not on sys.path by itself."""
    code = f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r}); from wnaudit.cli.command import main; sys.exit(main())"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-P", "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def _save_state(project: Path, name: str) -> Path:
    sys.path.insert(0, str(project))
    try:
        from vocoder.models import build

        torch.save(build().state_dict(), project / name)
    finally:
        sys.path.remove(str(project))
        for module in [m for m in sys.modules if m == "vocoder" or m.startswith("vocoder.")]:
            del sys.modules[module]
    return project / name


def test_bench_imports_the_project_from_its_root(tmp_path: Path):
    project = _project(tmp_path)
    completed = _wnaudit("bench", "vocoder.models:build", *FAST, cwd=project)
    assert completed.returncode == 0, completed.stderr
    assert "No module named" not in completed.stderr
    # Off a terminal the timing says it started (issue 37, item 5).
    assert "wnaudit: bench vocoder.models:build: timing 3 pairs of calls after 1 warm-up pairs" in completed.stderr.splitlines()


def test_bench_recognises_a_checkpoint_folded_by_fix(tmp_path: Path):
    project = _project(tmp_path)
    checkpoint = _save_state(project, "g.pt")
    assert _wnaudit("--fix", "-q", "g.pt", cwd=project).returncode == 0
    completed = _wnaudit("bench", "vocoder.models:build", "--checkpoint", "g.pt", *FAST, cwd=project)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr.count(REFOLD_NOTE) == 1
    assert "folded:   2 weight norms folded" in completed.stdout
    assert checkpoint.is_file()


def test_a_checkpoint_that_does_not_fit_is_still_refused(tmp_path: Path):
    project = _project(tmp_path)
    torch.save({"other.weight": torch.ones(2)}, project / "wrong.pt")
    completed = _wnaudit("bench", "vocoder.models:build", "--checkpoint", "wrong.pt", *FAST, cwd=project)
    assert completed.returncode == 2 and "does not fit the model" in completed.stderr
