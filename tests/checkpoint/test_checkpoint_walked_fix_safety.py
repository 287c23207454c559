"""A checkpoint found by walking a directory is folded only with ``--unsafe-fixes`` (issue 37, item 1).

ruff's "safe" keeps the program working: ``wnaudit --fix .`` at a project's root must not
break the project's own strict loader by folding the checkpoint it reads.  A checkpoint
named on the command line is what the user asked to fold.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from tests.cli.cli_helpers import REPO_ROOT, wnaudit  # noqa: E402
from wnaudit.core.catalogue import FOLDED_LOAD_HINT  # noqa: E402

LOADER = '''\
import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm


def build():
    return nn.Sequential(weight_norm(nn.Conv1d(2, 4, 3)), nn.ReLU(), weight_norm(nn.Conv1d(4, 2, 3)))


def load_model(path="checkpoints/g.pt"):
    model = build()
    model.load_state_dict(torch.load(path, weights_only=True), strict=True)
    return model
'''


def _project(tmp_path: Path) -> Path:
    (tmp_path / "vocoder.py").write_text(LOADER)
    (tmp_path / "checkpoints").mkdir()
    sys.path.insert(0, str(tmp_path))
    try:
        import vocoder  # noqa: PLC0415 - the project under test, written above

        torch.save(vocoder.build().state_dict(), tmp_path / "checkpoints" / "g.pt")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("vocoder", None)
    return tmp_path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _loader_works(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import vocoder; vocoder.load_model()"], cwd=project, capture_output=True, text=True, timeout=120,
    )


def test_fix_of_the_project_root_leaves_a_walked_checkpoint_and_the_loader_working(tmp_path: Path):
    project = _project(tmp_path)
    before = _digest(project / "checkpoints" / "g.pt")
    completed = wnaudit("--fix", ".", cwd=project)
    assert completed.returncode == 1, completed.stderr  # the checkpoint's findings remain
    assert _digest(project / "checkpoints" / "g.pt") == before
    assert "[-]" in completed.stdout.decode()
    loaded = _loader_works(project)
    assert loaded.returncode == 0, loaded.stderr


def test_walked_checkpoint_findings_are_unsafe_and_say_how_to_load(tmp_path: Path):
    project = _project(tmp_path)
    completed = wnaudit("--output-format", "json", ".", cwd=project)
    findings = json.loads(completed.stdout)["findings"]
    assert findings and all(f["fix"] == {"applicability": "unsafe"} and f["fixable"] for f in findings)
    assert all(FOLDED_LOAD_HINT in f["message"] and "--unsafe-fixes" in f["message"] for f in findings)


def test_unsafe_fixes_fold_a_walked_checkpoint(tmp_path: Path):
    project = _project(tmp_path)
    completed = wnaudit("--fix", "--unsafe-fixes", ".", cwd=project)
    assert completed.returncode == 0, completed.stderr
    assert f"folded checkpoints{os.sep}g.pt: {FOLDED_LOAD_HINT}" in completed.stderr.decode()  # which file to load anew
    assert all("parametrizations" not in key for key in torch.load(project / "checkpoints" / "g.pt", weights_only=True))


def test_a_named_checkpoint_is_folded_by_fix_alone(tmp_path: Path):
    project = _project(tmp_path)
    completed = wnaudit("--fix", "checkpoints/g.pt", cwd=project)
    assert completed.returncode == 0, completed.stderr
    assert all("parametrizations" not in key for key in torch.load(project / "checkpoints" / "g.pt", weights_only=True))


def test_the_load_recommendation_is_the_same_everywhere():
    """One recommendation: the warning's, in the WN301-WN303 pages and in docs/serving.md."""
    assert "wnaudit.load_state_dict" in FOLDED_LOAD_HINT
    for page in ("rules/WN301.md", "rules/WN302.md", "rules/WN303.md", "docs/serving.md"):
        text = (REPO_ROOT / page).read_text()
        assert "load_unfolded_state_dict" not in text, page
        assert "wnaudit.load_state_dict(model, state_dict)" in text, page
