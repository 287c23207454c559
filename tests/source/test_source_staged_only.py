"""pre-commit passes only the staged files; flake8 lints one file: both must see the bug.

The bug lives across files (``serve.py`` removes the legacy way from a class
whose base, two modules away, applies the modern weight norm).  Only
``serve.py`` is staged, so the hook gets that one path.  The hook runs
through the real ``pre-commit try-repo`` against a snapshot of this
checkout (pre-commit pip-installs it into a fresh virtualenv, as for a user).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from git_repo import git

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

REPO = Path(__file__).resolve().parents[2]
BUG_LINE = 5
FILES = {
    "voc/__init__.py": "",
    "voc/base.py": """\
        import torch.nn as nn
        from torch.nn.utils import parametrizations

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = parametrizations.weight_norm(nn.Conv1d(2, 2, 3))
        """,
    "voc/mid.py": "from .base import Base\n\n\nclass Mid(Base):\n    pass\n",
}
SERVE = """\
    from torch.nn.utils import remove_weight_norm
    from voc.mid import Mid

    def fold():
        remove_weight_norm(Mid().conv)
    """

needs_tools = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None or shutil.which("git") is None,
    reason="pre-commit and git are needed to run the real hook",
)


def _write(project: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _hook(project: Path, home: Path, hook_repo: Path, staged: str) -> subprocess.CompletedProcess[str]:
    """``pre-commit try-repo`` of this checkout's snapshot on the one staged file, as a user runs it."""
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)  # the hook must run the installed snapshot, not this checkout
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "wnaudit", "--files", staged, "--color", "never"],
        cwd=project, env=env, capture_output=True, text=True, timeout=480,
    )


def _project(root: Path) -> Path:
    """A repository where the package is committed and only the using file is staged."""
    project = root / "project"
    _write(project, FILES)
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "the package", cwd=project)
    (project / "voc" / "serve.py").write_text(textwrap.dedent(SERVE))
    git("add", "voc/serve.py", cwd=project)
    assert git("diff", "--cached", "--name-only", cwd=project).split() == ["voc/serve.py"]
    return project


@needs_tools
def test_pre_commit_with_only_the_using_file_staged_fails_on_the_bug(tmp_path: Path, hook_repo: Path):
    project = _project(tmp_path)
    proc = _hook(project, tmp_path / "home", hook_repo, "voc/serve.py")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert re.search(rf"voc/serve\.py:{BUG_LINE}:\d+: WN101", output), output
    assert "base.py" not in output and "mid.py" not in output  # findings only for the file asked about


def test_flake8_on_the_one_file_reports_the_bug(tmp_path: Path):
    project = tmp_path / "project"
    _write(project, {**FILES, "voc/serve.py": SERVE})
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "WN", "voc/serve.py"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"voc/serve.py:{BUG_LINE}:5: WN101 "), proc.stdout + proc.stderr
    whole = lint_files(sorted((project / "voc").glob("*.py")), RunOptions()).findings
    assert [(Path(f.path).name, f.code, f.line, f.column) for f in whole] == [("serve.py", "WN101", BUG_LINE, 5)]


#: WN110's bug sits in the model file, its cause in the serving file nobody stages: the vocoder is
#: put in eval mode and never folded.
SERVING_FILES = {
    "voc/__init__.py": "",
    "voc/serve.py": """\
        from voc.model import Vocoder

        def load():
            model = Vocoder()
            model.eval()
            return model
        """,
}
MODEL = """\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import weight_norm

    class Vocoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = weight_norm(nn.Conv1d(80, 1, 7))
    """
MODEL_LINE = 7


@needs_tools
def test_pre_commit_with_only_the_model_file_staged_reports_the_unfolded_serving_path(tmp_path: Path, hook_repo: Path):
    project = tmp_path / "project"
    _write(project, SERVING_FILES)
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "the serving code", cwd=project)
    (project / "voc" / "model.py").write_text(textwrap.dedent(MODEL))
    git("add", "voc/model.py", cwd=project)
    proc = _hook(project, tmp_path / "home", hook_repo, "voc/model.py")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert re.search(rf"voc/model\.py:{MODEL_LINE}:\d+: WN110", output), output
    assert "serve.py:" not in output.replace("voc/serve.py:5", "")  # cited, never reported itself


def test_flake8_on_the_model_file_reports_the_unfolded_serving_path(tmp_path: Path):
    project = tmp_path / "project"
    _write(project, {**SERVING_FILES, "voc/model.py": MODEL})
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "WN", "voc/model.py"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"voc/model.py:{MODEL_LINE}:21: WN110 "), proc.stdout + proc.stderr
    assert "voc/serve.py:5" in lines[0]
