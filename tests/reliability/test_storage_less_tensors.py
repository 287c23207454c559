"""Tensors without storage (the ``meta`` device) are never handed to a kernel or the zip writer (issue 36).

Before: ``--fix`` on a weight-norm pair stored on ``meta`` died of SIGSEGV (exit 139) in the writer;
a meta tensor kept beside a real pair gave an ``unexpected NotImplementedError`` line.  Each run is a
child process, so a crash fails the test instead of killing pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


def _wnaudit(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WNAUDIT_NO_CACHE": "1"}
    return subprocess.run([sys.executable, "-m", "wnaudit", *args], capture_output=True, text=True, env=env, timeout=120, check=False)


def _meta_pair() -> dict[str, torch.Tensor]:
    return {"c.weight_g": torch.empty(8, 1, 1, device="meta"), "c.weight_v": torch.empty(8, 4, 3, device="meta")}


def _half_meta_pair() -> dict[str, torch.Tensor]:
    return {"c.weight_g": torch.rand(8, 1, 1) + 0.5, "c.weight_v": torch.empty(8, 4, 3, device="meta")}


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("state", [_meta_pair, _half_meta_pair], ids=["both on meta", "v on meta"])
def test_a_pair_on_meta_is_refused_in_one_line(state: object, legacy: bool, tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    torch.save(state(), path, _use_new_zipfile_serialization=not legacy)  # type: ignore[operator]
    before = path.read_bytes()
    done = _wnaudit("--fix", str(path))
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "meta device" in lines[0], done.stderr
    assert path.read_bytes() == before


def test_a_meta_tensor_kept_beside_a_real_pair_is_kept_on_meta(tmp_path: Path) -> None:
    """Folding the real pair leaves the data-less tensor as it was (compared by dtype, shape, stride)."""
    path = tmp_path / "model.pt"
    torch.save({"c.weight_g": torch.rand(8, 1, 1) + 0.5, "c.weight_v": torch.randn(8, 4, 3), "c.bias": torch.empty(8, device="meta")}, path)
    done = _wnaudit("-q", "--fix", str(path))
    assert done.returncode == 0 and "error" not in done.stderr, (done.returncode, done.stderr)
    fixed = torch.load(path, weights_only=True)
    assert sorted(fixed) == ["c.bias", "c.weight"] and fixed["c.bias"].device.type == "meta"
