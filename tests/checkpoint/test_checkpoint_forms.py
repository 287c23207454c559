"""Every checkpoint form is audited through the CLI: exactly the unfolded tensors, with their nesting prefix."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from checkpoint_helpers import WEIGHT_NORMS, cli, cli_json, folded_names, objects, trained_discriminator, vocoder, vocoder_state

CODES = {"modern": "WN301", "legacy": "WN302"}


def _contiguous(state):
    return {k: v.contiguous() for k, v in state.items()}


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
@pytest.mark.parametrize(
    ("form", "prefix"),
    [
        ("flat", ""),
        ("state_dict", "state_dict."),
        ("lightning", "state_dict.model."),
        ("generator", "generator."),
        ("model", "model."),
        ("ema", "ema."),
        ("data_parallel", "module."),
        ("deep", "checkpoints.0.nets.vocoder."),
    ],
)
def test_torch_zip_container_forms(tmp_path, capsys, spelling, form, prefix):
    state = vocoder_state(spelling)
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(3))])
    wrap = {
        "flat": lambda s: s,
        "state_dict": lambda s: {"state_dict": s, "epoch": 7, "optimizer_states": [optimizer.state_dict()]},
        "lightning": lambda s: {"state_dict": {f"model.{k}": v for k, v in s.items()}, "global_step": 10},
        "generator": lambda s: {"generator": s, "discriminator": {"convs.0.weight": torch.ones(2, 1, 3)}, "steps": 500},
        "model": lambda s: {"model": s, "iteration": 3},
        "ema": lambda s: {"model": vocoder_state(None), "ema": s},
        "data_parallel": lambda s: {f"module.{k}": v for k, v in s.items()},
        "deep": lambda s: {"checkpoints": [{"nets": {"vocoder": s}}]},
    }[form]
    path = tmp_path / "model.pt"
    torch.save(wrap(state), path)
    status, report = cli_json(capsys, path)
    assert status == 1
    assert report["errors"] == []
    expected = sorted(prefix + name for name in folded_names(spelling))
    assert len(expected) == WEIGHT_NORMS
    assert objects(report) == expected
    assert {f["code"] for f in report["findings"]} == {CODES[spelling]}
    finding = report["findings"][0]
    assert set(finding) == {"path", "code", "severity", "message", "fixable", "fix", "object"}
    assert finding["path"] == str(path) and finding["fixable"] is True and finding["severity"] == "warning"
    assert "--fix" in finding["message"]


def test_hifigan_generator_prefix_in_text_report(tmp_path, capsys):
    path = tmp_path / "g_00500000"  # HiFi-GAN names checkpoints without extension
    torch.save({"generator": vocoder_state("legacy")}, path)
    status, out, err = cli(capsys, path)
    assert status == 1
    assert f"{path}: WN302 [*] " in out and "tensors: generator." in out  # one line for the file's WN302 tensors
    status, out, err = cli(capsys, "--output-format", "full", path)  # every tensor, the stored keys in the whole message
    assert f"{path}: generator.ups.0.weight: WN302 [*]" in out
    assert "generator.ups.0.weight_g" in out


def test_folded_and_plain_checkpoints_are_clean(tmp_path, capsys):
    torch.save(vocoder_state(None), tmp_path / "plain.pt")
    save_file(_contiguous(vocoder_state(None)), tmp_path / "plain.safetensors")
    status, report = cli_json(capsys, tmp_path / "plain.pt", tmp_path / "plain.safetensors")
    assert (status, report) == (0, {"findings": [], "errors": []})


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_legacy_non_zip_format(tmp_path, capsys, spelling):
    path = tmp_path / "old.pth"
    torch.save({"model": vocoder_state(spelling)}, path, _use_new_zipfile_serialization=False)
    status, report = cli_json(capsys, path)
    assert status == 1 and len(report["findings"]) == WEIGHT_NORMS
    assert objects(report)[0].startswith("model.")


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_safetensors(tmp_path, capsys, spelling):
    path = tmp_path / "model.safetensors"
    save_file(_contiguous(vocoder_state(spelling)), path, metadata={"format": "pt"})
    status, report = cli_json(capsys, path)
    assert status == 1
    assert objects(report, CODES[spelling]) == folded_names(spelling)


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_spectral_norm_keys_are_wn303_and_not_confused_with_weight_norm(tmp_path, capsys, spelling):
    state = dict(trained_discriminator(spelling).state_dict())
    state.update({f"gen.{k}": v for k, v in vocoder_state("legacy").items()})
    path = tmp_path / "gan.pt"
    torch.save(state, path)
    status, report = cli_json(capsys, path)
    assert objects(report, "WN303") == ["convs.0.weight", "convs.1.weight", "convs.2.weight", "post.weight"]
    assert len(objects(report, "WN302")) == WEIGHT_NORMS
    spectral = next(f for f in report["findings"] if f["code"] == "WN303")
    assert spectral["fixable"] is False and "--fold-spectral" in spectral["message"]
    status, report = cli_json(capsys, path, "--fold-spectral")
    assert all(f["fixable"] for f in report["findings"])


def _write_sharded(directory: Path, spelling: str, kind: str) -> tuple[Path, dict]:
    """Split a vocoder state over two shards, with a g and its v in different shards."""
    state = vocoder_state(spelling)
    keys = list(state)
    split = next(i for i, k in enumerate(keys) if k.endswith(("original0", "weight_g"))) + 1
    halves = [dict(list(state.items())[:split]), dict(list(state.items())[split:])]
    suffix = "safetensors" if kind == "safetensors" else "bin"
    names = [f"model-0000{i + 1}-of-00002.{suffix}" for i in range(2)]
    weight_map = {}
    for name, half in zip(names, halves):
        if kind == "safetensors":
            save_file(_contiguous(half), directory / name, metadata={"format": "pt"})
        else:
            torch.save(half, directory / name)
        weight_map.update({k: name for k in half})
    total = sum(t.numel() * t.element_size() for t in state.values())
    index_name = "model.safetensors.index.json" if kind == "safetensors" else "pytorch_model.bin.index.json"
    index = directory / index_name
    index.write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2))
    return index, state


@pytest.mark.parametrize("kind", ["safetensors", "bin"])
@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_shard_index_groups_across_shards(tmp_path, capsys, kind, spelling):
    index, _ = _write_sharded(tmp_path, spelling, kind)
    status, report = cli_json(capsys, index)
    assert status == 1 and report["errors"] == []
    assert objects(report) == folded_names(spelling)
    assert {f["path"] for f in report["findings"]} == {str(index)}


def test_directory_with_index_reports_each_tensor_once(tmp_path, capsys):
    index, _ = _write_sharded(tmp_path, "modern", "safetensors")
    torch.save(vocoder_state("legacy"), tmp_path / "other.ckpt")
    status, report = cli_json(capsys, tmp_path)
    assert status == 1 and report["errors"] == []
    by_path: dict[str, list[str]] = {}
    for f in report["findings"]:
        by_path.setdefault(f["path"], []).append(f["object"])
    assert set(by_path) == {str(index), str(tmp_path / "other.ckpt")}
    assert len(by_path[str(index)]) == len(set(by_path[str(index)])) == WEIGHT_NORMS


def test_shard_given_with_its_index_is_not_audited_twice(tmp_path, capsys):
    index, _ = _write_sharded(tmp_path, "legacy", "safetensors")
    shard = tmp_path / "model-00002-of-00002.safetensors"
    status, report = cli_json(capsys, shard, index)
    assert len(report["findings"]) == WEIGHT_NORMS
    assert {f["path"] for f in report["findings"]} == {str(index)}


class LegacyNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            self.conv = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 4, 3))
        self.head = torch.nn.Linear(4, 1)


def test_full_module_pickle_needs_trust_pickle(tmp_path, capsys):
    path = tmp_path / "full.pt"
    torch.save({"model": LegacyNet(), "epoch": 1}, path)
    status, report = cli_json(capsys, path)
    assert status == 2 and report["findings"] == []
    (error,) = report["errors"]
    assert error["path"] == str(path) and "--trust-pickle" in error["message"] and "\n" not in error["message"]
    status, report = cli_json(capsys, path, "--trust-pickle")
    assert status == 1 and report["errors"] == []
    assert [(f["code"], f["object"]) for f in report["findings"]] == [("WN202", "model.conv.weight")]


def test_torchscript_is_reported_clearly_or_audited_with_trust(tmp_path, capsys):
    path = tmp_path / "scripted.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(LegacyNet().conv, torch.randn(1, 2, 8)).save(str(path))
    status, out, err = cli(capsys, path)
    assert status == 2 and "TorchScript" in err and "--trust-pickle" in err and "Traceback" not in err
    status, report = cli_json(capsys, path, "--trust-pickle")
    assert status == 1 and objects(report, "WN302") == ["weight"]
    status, report = cli_json(capsys, path, "--trust-pickle", "--fix")
    assert status == 2 and "not supported" in report["errors"][0]["message"]


def _audit_in_fresh_process(path: Path) -> str:
    """``wnaudit PATH -q`` in a new interpreter: "TORCH STATUS" or "NO-TORCH STATUS"."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom wnaudit.cli import run\nstatus = run([sys.argv[1], '-q'])\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', status)"
    )
    environment = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False, env=environment)
    assert done.stdout.strip(), done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("suffix", ["safetensors", "pt"])
def test_audit_of_safetensors_and_torch_zip_does_not_import_torch(tmp_path, suffix):
    path = tmp_path / f"model.{suffix}"
    if suffix == "safetensors":
        save_file(_contiguous(vocoder_state("modern")), path)
    else:
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1, momentum=0.9)
        torch.save({"generator": vocoder_state("legacy"), "optim": optimizer.state_dict(), "step": 3}, path)
    assert _audit_in_fresh_process(path) == "NO-TORCH 1"


def test_untrusted_torchscript_is_refused_without_importing_torch(tmp_path):
    path = tmp_path / "scripted.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(LegacyNet().conv, torch.randn(1, 2, 8)).save(str(path))
    assert _audit_in_fresh_process(path) == "NO-TORCH 2"


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_torch_free_zip_reader_agrees_with_torch_load(tmp_path, capsys, monkeypatch, spelling):
    from wnaudit.checkpoint import zip_shapes

    path = tmp_path / "model.ckpt"
    model = vocoder(spelling)
    optimizer = torch.optim.Adam(model.parameters())
    for parameter in model.parameters():
        parameter.grad = torch.full_like(parameter, 0.01)
    optimizer.step()
    state = model.state_dict()
    torch.save({"state_dict": {f"model.{k}": v for k, v in state.items()}, "opt": [optimizer.state_dict()], "ema": {"x": state}}, path)
    fast = cli_json(capsys, path)
    calls = []

    def unsupported(p):
        calls.append(p)
        raise zip_shapes.Unsupported("forced")

    monkeypatch.setattr(zip_shapes, "read_structure", unsupported)
    slow = cli_json(capsys, path)
    assert calls and fast == slow
    assert len(fast[1]["findings"]) == 2 * WEIGHT_NORMS
