"""An orphan half is a WN304 finding, not unreadable input (issue 11, case 9)."""

from __future__ import annotations

import re
import warnings

import pytest
import torch
from safetensors.torch import save_file

from checkpoint_helpers import WEIGHT_NORMS, cli_json, vocoder_state
from wnaudit.report.rule_pages import page_sections


def _orphaned_state() -> dict[str, torch.Tensor]:
    state = dict(vocoder_state("modern"))
    del state["conv_pre.parametrizations.weight.original1"]
    return state


@pytest.mark.parametrize("fmt", ["torch", "safetensors"])
def test_orphan_half_is_a_finding_and_the_rest_is_audited(tmp_path, capsys, fmt):
    path = tmp_path / ("model.ckpt" if fmt == "torch" else "model.safetensors")
    if fmt == "torch":
        torch.save({"state_dict": _orphaned_state()}, path)
        orphan = "state_dict.conv_pre.parametrizations.weight.original0"
    else:
        save_file({k: v.contiguous() for k, v in _orphaned_state().items()}, path)
        orphan = "conv_pre.parametrizations.weight.original0"
    status, report = cli_json(capsys, path)
    assert status == 1 and report["errors"] == []
    (finding,) = [f for f in report["findings"] if f["code"] == "WN304"]
    assert finding["object"] == orphan and not finding["fixable"] and "original1" in finding["message"]
    assert len([f for f in report["findings"] if f["code"] == "WN301"]) == WEIGHT_NORMS - 1


def test_fix_folds_the_complete_pairs_and_keeps_the_orphan(tmp_path, capsys):
    path = tmp_path / "model.ckpt"
    torch.save({"state_dict": _orphaned_state()}, path)
    status, report = cli_json(capsys, "--fix", path)
    assert status == 1 and report["errors"] == []
    assert [f["code"] for f in report["findings"]] == ["WN304"]
    fixed = torch.load(path, weights_only=True)["state_dict"]
    assert torch.equal(fixed["conv_pre.parametrizations.weight.original0"], _orphaned_state()["conv_pre.parametrizations.weight.original0"])
    assert sum("parametrizations" in key for key in fixed) == 1


def test_custom_parametrization_lone_original1_is_a_warning_only(tmp_path, capsys):
    path = tmp_path / "custom.pt"
    torch.save({"layer.parametrizations.weight.original1": torch.ones(3, 3)}, path)
    status, report = cli_json(capsys, "--ignore", "WN304", path)
    assert (status, report) == (0, {"findings": [], "errors": []})


def _run_example(code: str, section: str, directory) -> object:
    source = re.search(r"```python\n(.*?)```", page_sections(code)[section], flags=re.S).group(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        exec(compile(source, f"<{code} {section}>", "exec"), {"__name__": "rule_page_example"})  # noqa: S102
    saved = directory / f"{section.replace(' ', '_')}.pt"
    (directory / "model.pt").rename(saved)
    return saved


def test_wn304_rule_page_examples(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    bad = _run_example("WN304", "Example", tmp_path)
    good = _run_example("WN304", "Use instead", tmp_path)
    status, report = cli_json(capsys, bad)
    assert status == 1 and {f["code"] for f in report["findings"]} == {"WN304"}
    assert cli_json(capsys, good) == (0, {"findings": [], "errors": []})
