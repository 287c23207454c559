"""The committed example checkpoints: small, reproducible from their script, and audited as documented."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
from safetensors.torch import load_file

from checkpoint_helpers import cli_json

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHECKPOINTS = EXAMPLES / "checkpoints"


def _script():
    spec = importlib.util.spec_from_file_location("make_example_checkpoint", EXAMPLES / "make_example_checkpoint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_examples_are_small_and_reproducible(tmp_path):
    written = _script().main(tmp_path)
    assert [p.name for p in written] == ["g_00100000", "vocoder.safetensors"]
    for path in written:
        committed = CHECKPOINTS / path.name
        assert committed.stat().st_size < 200 * 1024
    fresh, committed = (torch.load(d / "g_00100000", weights_only=True) for d in (tmp_path, CHECKPOINTS))
    assert fresh.keys() == committed.keys() and fresh["steps"] == committed["steps"]
    assert all(torch.equal(fresh["generator"][k], v) for k, v in committed["generator"].items())
    fresh, committed = (load_file(d / "vocoder.safetensors") for d in (tmp_path, CHECKPOINTS))
    assert fresh.keys() == committed.keys() and all(torch.equal(fresh[k], v) for k, v in committed.items())


def test_examples_report_unfolded_weight_norms_and_fix_cleanly(tmp_path, capsys):
    status, report = cli_json(capsys, CHECKPOINTS)
    assert status == 1 and report["errors"] == []
    by_file = {}
    for f in report["findings"]:
        by_file.setdefault((Path(f["path"]).name, f["code"]), []).append(f["object"])
    assert sorted(by_file) == [("g_00100000", "WN302"), ("vocoder.safetensors", "WN301")]
    assert "generator.ups.0.weight" in by_file[("g_00100000", "WN302")]
    assert len(by_file[("g_00100000", "WN302")]) == len(by_file[("vocoder.safetensors", "WN301")]) == 14
    out = tmp_path / "g.pt"
    status, report = cli_json(capsys, "--fix", "-o", out, CHECKPOINTS / "g_00100000")
    assert status == 0
    assert cli_json(capsys, out) == (0, {"findings": [], "errors": []})
