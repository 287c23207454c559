"""Training checkpoints keep their resumability: never folded in place unless asked (issue 11, case 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from checkpoint_helpers import WEIGHT_NORMS, cli, vocoder
from wnaudit.checkpoint.training import IN_PLACE_FLAG, training_state


def _trained(spelling: str = "modern") -> tuple[torch.nn.Module, torch.optim.Optimizer, Any]:
    model = vocoder(spelling)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.999)
    for parameter in model.parameters():
        parameter.grad = torch.full_like(parameter, 0.01)
    optimizer.step()
    scheduler.step()
    return model, optimizer, scheduler


def _lightning_checkpoint(path: Path) -> dict[str, Any]:
    """What Lightning's ``trainer.save_checkpoint`` writes (the keys that matter here)."""
    model, optimizer, scheduler = _trained()
    checkpoint = {
        "epoch": 3,
        "global_step": 1200,
        "pytorch-lightning_version": "2.4.0",
        "state_dict": {f"generator.{k}": v for k, v in model.state_dict().items()},
        "loops": {"fit_loop": {"state_dict": {}}},
        "callbacks": {},
        "optimizer_states": [optimizer.state_dict()],
        "lr_schedulers": [scheduler.state_dict()],
    }
    torch.save(checkpoint, path)
    return checkpoint


def test_cli_prints_the_inference_note_on_stderr(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "last.ckpt"
    _lightning_checkpoint(path)
    done = subprocess.run(
        [sys.executable, "-m", "wnaudit.cli", "--fix", "-o", str(tmp_path / "copy.ckpt"), str(path)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "wnaudit: WARNING: " in done.stderr and "for inference only" in done.stderr


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("wnaudit: error:")]


def test_lightning_checkpoint_is_not_folded_in_place(tmp_path, capsys):
    path = tmp_path / "epoch=3-step=1200.ckpt"
    _lightning_checkpoint(path)
    before = path.read_bytes()
    status, out, err = cli(capsys, "--fix", path)
    assert status == 2
    (line,) = _error_lines(err)
    assert line.startswith(f"wnaudit: error: {path}: a training checkpoint")
    assert "-o OUT" in line and IN_PLACE_FLAG in line and "resuming" in line
    assert path.read_bytes() == before


def test_lightning_checkpoint_with_output_writes_an_inference_copy(tmp_path, capsys, caplog):
    path = tmp_path / "last.ckpt"
    original = _lightning_checkpoint(path)
    before = path.read_bytes()
    copy = tmp_path / "inference.ckpt"
    status, out, err = cli(capsys, "--fix", "-o", copy, path)
    assert status == 0, out + err
    assert "for inference only" in caplog.text and str(copy) in caplog.text and f"resume from {path}" in caplog.text
    assert path.read_bytes() == before
    folded = torch.load(copy, weights_only=True)
    assert not any("parametrizations" in key for key in folded["state_dict"])
    assert folded["optimizer_states"][0]["param_groups"] == original["optimizer_states"][0]["param_groups"]


def test_explicit_flag_folds_in_place_and_says_so(tmp_path, capsys, caplog):
    path = tmp_path / "last.ckpt"
    _lightning_checkpoint(path)
    status, out, err = cli(capsys, "--fix", IN_PLACE_FLAG, path)
    assert status == 0, out + err
    assert f"Found {WEIGHT_NORMS} findings ({WEIGHT_NORMS} fixed, 0 remaining)." in out and "cannot resume training" in caplog.text
    assert not any("parametrizations" in key for key in torch.load(path, weights_only=True)["state_dict"])


@pytest.mark.parametrize(
    "wrap",
    [
        lambda m, o, s: {"generator": m.state_dict(), "optim_g": o.state_dict(), "steps": 5},  # HiFi-GAN's naming
        lambda m, o, s: {"model": m.state_dict(), "optimizer": o.state_dict()},
        lambda m, o, s: {"model": m.state_dict(), "scheduler": s.state_dict()},
        lambda m, o, s: {"model": m.state_dict(), "sched": s.state_dict()},  # recognised by what it holds
    ],
)
def test_other_trainers_training_state_is_recognised(tmp_path, capsys, wrap):
    path = tmp_path / "g_00500000"
    torch.save(wrap(*_trained("legacy")), path)
    before = path.read_bytes()
    status, out, err = cli(capsys, "--fix", path)
    assert status == 2 and "a training checkpoint" in err
    assert path.read_bytes() == before


def test_empty_optimizer_slot_is_not_training_state(tmp_path, capsys):
    model, _, _ = _trained()
    path = tmp_path / "model.pt"
    torch.save({"model": model.state_dict(), "optimizer": None, "lr_schedulers": []}, path)
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0 and f"Found {WEIGHT_NORMS} findings ({WEIGHT_NORMS} fixed, 0 remaining)." in out, out + err


def test_training_state_description_names_where_it_is():
    _, optimizer, _ = _trained()
    assert training_state({"a": {"b": optimizer.state_dict()}}) == "optimizer state at a.b"
    assert training_state({"weights": {"w": 1}}) is None
