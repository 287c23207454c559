"""WN110's project walk: a cut never drops the project's own packages for a data tree beside them (issue 23)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from wnaudit.cli import run
from wnaudit.source.serving import walk

MODEL = '''import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(80, 1, 7, padding=3))

    def forward(self, mel):
        return self.conv(mel)
'''

SERVE = "from voc.model import Generator\n\nmodel = Generator()\nmodel.eval()\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``src/voc`` (a model and the script serving it) beside ``data/corpus``, 30 Python files of data."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    package = tmp_path / "src" / "voc"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "model.py").write_text(MODEL, encoding="utf-8")
    (package / "serve.py").write_text(SERVE, encoding="utf-8")
    corpus = tmp_path / "data" / "corpus"
    corpus.mkdir(parents=True)
    for number in range(30):
        (corpus / f"sample_{number:03}.py").write_text(f"x = {number}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(walk, "MAX_PROJECT_FILES", 10)
    return tmp_path


def _wn110(capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    status = run(["--no-cache", "-j", "1", "src/voc/model.py"])
    lines = [line for line in capsys.readouterr().out.splitlines() if "WN110" in line]
    assert status == (1 if lines else 0)
    return lines


def test_a_data_tree_filling_the_cap_does_not_hide_the_named_model_finding(project: Path, capsys, caplog):
    with caplog.at_level(logging.WARNING):
        assert [line.split(" WN110")[0] for line in _wn110(capsys)] == ["src/voc/model.py:8:21:"]
    [warning] = [r.getMessage() for r in caplog.records if "serving-path search" in r.getMessage()]
    assert "more than 10 Python files" in warning
    assert "skipped the rest of data/corpus" in warning, "the warning names what was left out"


def test_without_a_cut_nothing_is_said(project: Path, capsys, caplog, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(walk, "MAX_PROJECT_FILES", 1000)
    with caplog.at_level(logging.WARNING):
        assert len(_wn110(capsys)) == 1
    assert not [r for r in caplog.records if "serving-path search" in r.getMessage()]


def test_the_walk_reads_packages_first_then_the_rest_breadth_first(project: Path):
    (project / "tools").mkdir()
    (project / "tools" / "export.py").write_text("", encoding="utf-8")
    (project / "top.py").write_text("", encoding="utf-8")
    files = [str(path.relative_to(project)) for path in walk.project_files(project, True)]
    assert files[:4] == ["top.py", "src/voc/__init__.py", "src/voc/model.py", "src/voc/serve.py"]
    assert files.index("tools/export.py") < files.index("data/corpus/sample_000.py"), "shallower first"
    assert len(files) == 10
