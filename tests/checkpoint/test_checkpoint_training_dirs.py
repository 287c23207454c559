"""A directory holding optimizer or scheduler state is a training checkpoint (issue 23, item 4).

A Hugging Face Trainer ``checkpoint-500/`` used to get its ``model.safetensors``
folded in place, exit 0; the optimizer beside it indexes g and v by position,
so the run could no longer resume.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest
import torch
from safetensors.torch import load_file, save_file

from checkpoint_helpers import WEIGHT_NORMS, cli, vocoder
from test_checkpoint_forms import _write_sharded
from wnaudit import fold_state_dict

#: The documented flag (spelt out, so this file also runs against a version without it and fails there).
IN_PLACE_FLAG = "--fix-training-in-place"


def _optimizer_and_scheduler() -> tuple[dict, dict]:
    model = vocoder("modern")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.999)
    for parameter in model.parameters():
        parameter.grad = torch.full_like(parameter, 0.01)
    optimizer.step()
    scheduler.step()
    return optimizer.state_dict(), scheduler.state_dict()


def _model(directory: Path, kind: str) -> Path:
    state = {k: v.contiguous() for k, v in vocoder("modern").state_dict().items()}
    if kind == "safetensors":
        path = directory / "model.safetensors"
        save_file(state, path, metadata={"format": "pt"})
    else:
        path = directory / "pytorch_model.bin"
        torch.save(state, path)
    return path


def _hf_trainer(directory: Path) -> None:
    optimizer, scheduler = _optimizer_and_scheduler()
    torch.save(optimizer, directory / "optimizer.pt")
    torch.save(scheduler, directory / "scheduler.pt")
    (directory / "trainer_state.json").write_text(json.dumps({"global_step": 500, "log_history": []}))


def _accelerate(directory: Path) -> None:
    optimizer, scheduler = _optimizer_and_scheduler()
    torch.save(optimizer, directory / "optimizer.bin")
    torch.save(scheduler, directory / "scheduler.bin")


def _deepspeed(directory: Path) -> None:
    optimizer, _ = _optimizer_and_scheduler()
    step = directory / "global_step500"
    step.mkdir()
    torch.save({"optimizer_state_dict": optimizer}, step / "bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt")
    (directory / "latest").write_text("global_step500")


LAYOUTS: dict[str, Callable[[Path], None]] = {"hf-trainer": _hf_trainer, "accelerate": _accelerate, "deepspeed": _deepspeed}


def _training_dir(tmp_path: Path, layout: str, kind: str) -> Path:
    directory = tmp_path / "run" / "checkpoint-500"
    directory.mkdir(parents=True)
    LAYOUTS[layout](directory)
    return _model(directory, kind)


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("wnaudit: error:")]


@pytest.mark.parametrize("kind", ["safetensors", "bin"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_model_beside_training_state_is_not_folded_in_place(tmp_path, capsys, layout, kind):
    path = _training_dir(tmp_path, layout, kind)
    before = path.read_bytes()
    status, out, err = cli(capsys, "--fix", path)
    assert status == 2, out + err
    (line,) = _errors(err)
    assert line.startswith(f"wnaudit: error: {path}: a training checkpoint")
    assert "-o OUT" in line and IN_PLACE_FLAG in line and "resuming" in line
    assert path.read_bytes() == before


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_output_writes_the_inference_copy(tmp_path, capsys, caplog, layout):
    path = _training_dir(tmp_path, layout, "safetensors")
    before = path.read_bytes()
    copy = tmp_path / "inference.safetensors"
    status, out, err = cli(capsys, "--fix", "-o", copy, path)
    assert status == 0, out + err
    assert "for inference only" in caplog.text
    assert path.read_bytes() == before
    expected, _ = fold_state_dict(load_file(path))
    written = load_file(copy)
    assert sorted(written) == sorted(expected)
    assert all(torch.equal(written[k], v) for k, v in expected.items())


def test_the_in_place_flag_is_the_one_the_package_names():
    from wnaudit.checkpoint.training import IN_PLACE_FLAG as named

    assert named == IN_PLACE_FLAG


def test_in_place_flag_still_folds_a_training_directory(tmp_path, capsys):
    path = _training_dir(tmp_path, "hf-trainer", "safetensors")
    status, out, err = cli(capsys, "--fix", IN_PLACE_FLAG, path)
    assert status == 0 and f"({WEIGHT_NORMS} fixed, 0 remaining)" in out, out + err


def test_a_directory_walk_of_a_trainer_checkpoint_refuses_the_model(tmp_path, capsys):
    path = _training_dir(tmp_path, "hf-trainer", "safetensors")
    before = path.read_bytes()
    status, out, err = cli(capsys, "--fix", "--unsafe-fixes", path.parent)
    assert status == 2, out + err
    assert any(line.startswith(f"wnaudit: error: {path}: a training checkpoint") for line in _errors(err)), err
    assert path.read_bytes() == before


def test_a_sharded_model_beside_training_state_is_not_folded_in_place(tmp_path, capsys):
    index, _ = _write_sharded(tmp_path, "modern", "safetensors")
    _hf_trainer(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    status, out, err = cli(capsys, "--fix", index)
    assert status == 2, out + err
    (line,) = _errors(err)
    assert "a training checkpoint" in line and IN_PLACE_FLAG in line
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_the_directory_name_alone_does_not_make_a_training_checkpoint(tmp_path, capsys):
    directory = tmp_path / "checkpoint-500"
    directory.mkdir()
    path = _model(directory, "safetensors")
    (directory / "config.json").write_text("{}")
    from wnaudit.checkpoint.training import training_directory

    assert training_directory(path) is None
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0, out + err


def test_an_audit_without_fix_is_unchanged(tmp_path, capsys):
    path = _training_dir(tmp_path, "hf-trainer", "safetensors")
    status, out, err = cli(capsys, path)
    assert status == 1 and _errors(err) == [], out + err
