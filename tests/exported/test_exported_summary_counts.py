"""The summary counts exported programs as programs, not as checkpoints (issue 37, item 4)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wnaudit.cli.command import run


def test_a_walk_counts_a_pt2_as_an_exported_program(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    shutil.copy(fused_archive, tmp_path / "vocoder.pt2")
    (tmp_path / "ok.py").write_text("x = 1\n")
    capsys.readouterr()
    run([str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert "Checked 1 source file, 0 checkpoints and 1 exported program." in lines, lines
