"""The zip-bomb guard bounds what a fix writes, not only what the audit reads (issue 36).

Before: a small archive whose weight member inflated to GiBs was folded and written stored, as
large as the bomb.  Here the bound is set small (``--max-fix-bytes``) instead of building GiBs.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
import torch

from wnaudit.cli.command import run
from wnaudit.common.write_bound import FIX_RATIO, MIN_FIX_BYTES, fix_bound, written_problem

#: 4 MiB of zeros: deflates to a few KiB.
_ZEROS = 1 << 20


def _deflated(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, old.read(info))
    return out.getvalue()


def _bomb_checkpoint(path: Path) -> Path:
    buffer = io.BytesIO()
    torch.manual_seed(0)
    torch.save({"c.weight_g": torch.rand(3, 1, 1) + 0.5, "c.weight_v": torch.randn(3, 2, 3), "padding": torch.zeros(_ZEROS)}, buffer)
    path.write_bytes(_deflated(buffer.getvalue()))
    assert path.stat().st_size < 64 * 1024
    return path


def test_a_checkpoint_fix_that_would_write_past_the_bound_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bomb_checkpoint(tmp_path / "bomb.pt")
    before = path.read_bytes()
    assert run(["-q", "--fix", "--max-fix-bytes", str(1 << 20), str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "zip bomb" in err and "--max-fix-bytes" in err, err
    assert path.read_bytes() == before


def test_raising_the_bound_lets_the_fix_through(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bomb_checkpoint(tmp_path / "bomb.pt")
    assert run(["-q", "--fix", "--max-fix-bytes", str(64 << 20), str(path)]) == 0, capsys.readouterr().err
    assert sorted(torch.load(path, weights_only=True)) == ["c.weight", "padding"]


def test_the_bound_is_a_setting_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bomb_checkpoint(tmp_path / "bomb.pt")
    (tmp_path / "pyproject.toml").write_text(f"[tool.wnaudit]\nmax-fix-bytes = {1 << 20}\n")
    assert run(["-q", "--fix", "--config", str(tmp_path / "pyproject.toml"), str(path)]) == 2
    assert "zip bomb" in capsys.readouterr().err


def test_an_exported_program_fix_is_bounded_too(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bomb.pt2"
    path.write_bytes(_deflated(fused_archive.read_bytes()))
    inflated = sum(info.file_size for info in zipfile.ZipFile(path).infolist())
    before = path.read_bytes()
    assert run(["-q", "--fix", "--max-fix-bytes", str(inflated - 1), str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "zip bomb" in err, err
    assert path.read_bytes() == before


def test_the_default_bound() -> None:
    assert fix_bound(1000, None) == MIN_FIX_BYTES
    assert fix_bound(1 << 30, None) == FIX_RATIO << 30
    assert fix_bound(1 << 30, 5) == 5
    assert written_problem(MIN_FIX_BYTES, 1000, None) is None
    assert "zip bomb" in (written_problem(MIN_FIX_BYTES + 1, 1000, None) or "")


def test_a_zip_python_cannot_open_is_left_to_the_checkpoint_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the checkpoint fuzzer: a central-directory entry claiming version 6.4 made ``zipfile`` raise
    ``NotImplementedError`` in the bound check: ``unexpected NotImplementedError``; torch's reader folds it."""
    buffer = io.BytesIO()
    torch.save({"c.weight_g": torch.rand(3, 1, 1) + 0.5, "c.weight_v": torch.randn(3, 2, 3)}, buffer)
    data = bytearray(buffer.getvalue())
    entry = data.rfind(b"PK\x01\x02")
    data[entry + 6] = 64  # the central entry's "version needed to extract": 6.4
    path = tmp_path / "v64.pt"
    path.write_bytes(bytes(data))
    with pytest.raises(NotImplementedError):
        zipfile.ZipFile(path)
    status = run(["-q", "--fix", str(path)])
    err = capsys.readouterr().err
    assert status == 0 and "unexpected" not in err, err
