"""``wnaudit --fix`` on checkpoints: folded in the same format, nothing else changed, atomically."""

from __future__ import annotations

import json
import os
import stat
import struct
import warnings

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from checkpoint_helpers import WEIGHT_NORMS, cli, cli_json, folded_copy, trained_discriminator, vocoder, vocoder_state
from test_checkpoint_forms import LegacyNet, _write_sharded
from wnaudit.common import atomic
from wnaudit.testing.vocoder import example_input


def _assert_serves_like(state, spelling, original=None):
    """The fixed state loads strict=True into a folded module and computes what the original did."""
    model = folded_copy(spelling, seed=9)
    model.load_state_dict(state, strict=True)
    x = example_input(frames=8)
    original = original if original is not None else vocoder(spelling)
    with torch.no_grad():
        assert torch.equal(model(x), original(x))


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
@pytest.mark.parametrize("legacy_format", [False, True])
def test_fix_trainer_checkpoint_keeps_everything_else(tmp_path, capsys, spelling, legacy_format):
    model = vocoder(spelling)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for parameter in model.parameters():
        parameter.grad = torch.full_like(parameter, 0.01)
    optimizer.step()
    original = {
        "generator": model.state_dict(),
        "optim_g": optimizer.state_dict(),
        "steps": 500000,
        "epoch": 12,
        "config": {"sampling_rate": 22050, "name": "hifigan"},
    }
    path = tmp_path / "g_00500000"
    torch.save(original, path, _use_new_zipfile_serialization=not legacy_format)
    os.chmod(path, 0o640)
    # Optimizer state: in place only when asked for explicitly (see test_checkpoint_training.py).
    status, out, err = cli(capsys, "--fix", "--fix-training-in-place", path)
    assert status == 0, out + err
    assert f"Found {WEIGHT_NORMS} findings ({WEIGHT_NORMS} fixed, 0 remaining)." in out
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    with open(path, "rb") as handle:
        is_zip = handle.read(2) == b"PK"
    assert is_zip is not legacy_format
    fixed = torch.load(path, weights_only=True)
    assert list(fixed) == list(original)
    assert fixed["steps"] == 500000 and fixed["epoch"] == 12 and fixed["config"] == original["config"]
    assert fixed["optim_g"]["param_groups"] == original["optim_g"]["param_groups"]
    assert fixed["optim_g"]["state"].keys() == original["optim_g"]["state"].keys()
    for index, state in original["optim_g"]["state"].items():
        for name, value in state.items():
            assert torch.equal(fixed["optim_g"]["state"][index][name], value)
    assert fixed["generator"]._metadata == original["generator"]._metadata
    _assert_serves_like(fixed["generator"], spelling, model)
    status, report = cli_json(capsys, path)
    assert (status, report) == (0, {"findings": [], "errors": []})
    assert not list(tmp_path.glob("*.wnaudit-tmp"))


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_fix_safetensors_keeps_metadata_and_other_tensors(tmp_path, capsys, spelling):
    state = {k: v.contiguous() for k, v in vocoder_state(spelling).items()}
    state["extra.table"] = torch.arange(10, dtype=torch.int64)
    path = tmp_path / "model.safetensors"
    save_file(state, path, metadata={"format": "pt", "sample_rate": "24000"})
    status, out, _ = cli(capsys, "--fix", path)
    assert status == 0
    with safe_open(str(path), framework="pt") as handle:
        assert handle.metadata() == {"format": "pt", "sample_rate": "24000"}
    fixed = load_file(path)
    assert torch.equal(fixed.pop("extra.table"), state["extra.table"])
    _assert_serves_like(fixed, spelling)
    for key in fixed:
        if key in state:
            assert torch.equal(fixed[key], state[key])


def test_fix_to_output_leaves_the_input_alone(tmp_path, capsys):
    path = tmp_path / "in.pt"
    torch.save({"model": vocoder_state("modern")}, path)
    before = path.read_bytes()
    out_path = tmp_path / "out" / "folded.pt"
    out_path.parent.mkdir()
    status, report = cli_json(capsys, "--fix", "-o", out_path, path)
    assert status == 0 and report["findings"] == []
    assert path.read_bytes() == before
    _assert_serves_like(torch.load(out_path, weights_only=True)["model"], "modern")


def test_spectral_norm_folds_only_with_fold_spectral(tmp_path, capsys):
    disc = trained_discriminator("modern")
    path = tmp_path / "d.pt"
    torch.save({"discriminator": disc.state_dict(), "generator": vocoder_state("legacy")}, path)
    status, report = cli_json(capsys, "--fix", path)
    assert status == 1 and {f["code"] for f in report["findings"]} == {"WN303"}
    status, report = cli_json(capsys, "--fix", "--fold-spectral", path)
    assert status == 0
    fixed = torch.load(path, weights_only=True)
    reference = trained_discriminator("modern")
    import wnaudit

    wnaudit.fold(reference, weight_norm=False, spectral_norm=True)
    for key, value in reference.state_dict().items():
        assert torch.equal(fixed["discriminator"][key], value), key


def test_ignored_codes_are_not_folded(tmp_path, capsys):
    path = tmp_path / "mixed.pt"
    torch.save({"a": vocoder_state("modern"), "b": vocoder_state("legacy")}, path)
    status, report = cli_json(capsys, "--fix", "--ignore", "WN302", path)
    assert status == 0
    fixed = torch.load(path, weights_only=True)
    assert any(k.endswith("weight_g") for k in fixed["b"])
    assert not any("parametrizations" in k for k in fixed["a"])


@pytest.mark.parametrize("kind", ["safetensors", "bin"])
def test_fix_shard_index_across_shards(tmp_path, capsys, kind):
    index, state = _write_sharded(tmp_path, "legacy", kind)
    status, out, err = cli(capsys, "--fix", index)
    assert status == 0, out + err
    document = json.loads(index.read_text())
    merged = {}
    for name in sorted(set(document["weight_map"].values())):
        shard = tmp_path / name
        merged.update(load_file(shard) if kind == "safetensors" else torch.load(shard, weights_only=True))
    assert set(merged) == set(document["weight_map"])
    assert all(document["weight_map"][k] in os.listdir(tmp_path) for k in merged)
    assert document["metadata"]["total_size"] == sum(t.numel() * t.element_size() for t in merged.values())
    _assert_serves_like(merged, "legacy")
    status, report = cli_json(capsys, index)
    assert (status, report) == (0, {"findings": [], "errors": []})


def test_fix_full_module_pickle_with_trust(tmp_path, capsys):
    path = tmp_path / "full.pt"
    net = LegacyNet()
    torch.save(net, path)
    status, report = cli_json(capsys, "--fix", "--trust-pickle", path)
    assert status == 0 and report["findings"] == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = torch.load(path, weights_only=False)
    assert not fixed.conv._forward_pre_hooks and isinstance(fixed.conv.weight, torch.nn.Parameter)
    x = torch.randn(1, 2, 8)
    assert torch.equal(fixed.conv(x), net.conv(x))


def test_failed_write_leaves_the_checkpoint_untouched(tmp_path, capsys, monkeypatch):
    path = tmp_path / "model.safetensors"
    save_file({k: v.contiguous() for k, v in vocoder_state("modern").items()}, path)
    before = path.read_bytes()

    def fault(step):
        if step == "before_rename":
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "_fault", fault)
    status, report = cli_json(capsys, "--fix", path)
    assert status == 2 and "No space left" in report["errors"][0]["message"]
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.safetensors"]


def test_rewritten_safetensors_header_is_aligned_and_contiguous(tmp_path, capsys):
    path = tmp_path / "m.safetensors"
    save_file({k: v.contiguous() for k, v in vocoder_state("modern").items()}, path)
    cli(capsys, "--fix", path)
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    assert length % 8 == 0
    header = json.loads(data[8 : 8 + length])
    header.pop("__metadata__", None)
    spans = sorted(tuple(v["data_offsets"]) for v in header.values())
    assert spans[0][0] == 0 and spans[-1][1] == len(data) - 8 - length
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_fix_to_output_of_a_clean_file_writes_a_copy(tmp_path, capsys):
    path = tmp_path / "clean.safetensors"
    save_file({k: v.contiguous() for k, v in vocoder_state(None).items()}, path)
    out_path = tmp_path / "out.safetensors"
    status, report = cli_json(capsys, "--fix", "-o", out_path, path)
    assert status == 0 and out_path.read_bytes() == path.read_bytes()


def test_progress_bar_on_stderr_only_when_asked(tmp_path, capsys, monkeypatch):
    from wnaudit.checkpoint import audit_checkpoints, progress
    from wnaudit.common.options import RunOptions

    monkeypatch.setattr(progress, "PROGRESS_THRESHOLD", 0)
    for name, show in (("quiet.safetensors", False), ("shown.safetensors", True)):
        path = tmp_path / name
        save_file({k: v.contiguous() for k, v in vocoder_state("modern").items()}, path)
        capsys.readouterr()
        result = audit_checkpoints([path], RunOptions(fix=True, progress=show))
        captured = capsys.readouterr()
        assert len(result.fixed) == WEIGHT_NORMS and not result.findings
        assert captured.out == ""
        assert (f"folding {name}" in captured.err) is show
