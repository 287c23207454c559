"""What a checkpoint ``--fix`` tells the user, and which stored pairs it takes for weight norm."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from safetensors.torch import save_file  # noqa: E402
from torch import nn  # noqa: E402

from wnaudit.cli.command import run  # noqa: E402
from wnaudit.core.catalogue import FOLDED_LOAD_HINT  # noqa: E402


def test_fix_points_to_the_load_contract(tmp_path: Path):
    conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 8, 3))
    torch.save(conv.state_dict(), tmp_path / "g.pt")
    completed = subprocess.run(
        [sys.executable, "-m", "wnaudit.cli", "--fix", str(tmp_path / "g.pt")], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert "wnaudit.load_state_dict" in FOLDED_LOAD_HINT and FOLDED_LOAD_HINT in completed.stderr


def test_audit_without_fix_gives_no_load_hint(tmp_path: Path, caplog):
    conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 8, 3))
    torch.save(conv.state_dict(), tmp_path / "g.pt")
    assert run([str(tmp_path / "g.pt")]) == 1
    assert FOLDED_LOAD_HINT not in caplog.text


def test_ordinary_g_v_tensors_whose_shapes_fit_no_weight_norm_are_not_findings(tmp_path: Path, capsys):
    # An ordinary model's "gain_g" (4, 2) beside "gain_v" (4, 3): no dim of v fits g, so no pair at all.
    state = {"block.gain_g": torch.ones(4, 2), "block.gain_v": torch.ones(4, 3), "block.bias": torch.zeros(4)}
    save_file(state, str(tmp_path / "m.safetensors"))
    assert run(["--output-format", "json", str(tmp_path / "m.safetensors")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"findings": [], "errors": []}
