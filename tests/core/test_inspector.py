"""audit_module and assert_folded."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

import wnaudit
from core_helpers import apply_weight_norm


def test_findings_name_each_tensor_with_its_code():
    model = nn.Sequential(
        apply_weight_norm(nn.Conv1d(2, 2, 1), "modern"),
        apply_weight_norm(nn.Conv1d(2, 2, 1), "legacy"),
        nn.Conv1d(2, 2, 1),
    )
    findings = wnaudit.audit_module(model)
    assert [(f.code, f.object, f.path) for f in findings] == [
        ("WN201", "0.weight", "<Sequential>"),
        ("WN202", "1.weight", "<Sequential>"),
    ]
    assert all(f.fixable for f in findings)
    assert findings[0].to_dict()["object"] == "0.weight"


def test_half_done_legacy_removal_is_reported():
    module = apply_weight_norm(nn.Conv1d(2, 2, 1), "legacy")
    # Someone dropped the hook and the pair but left the computed tensor behind.
    module._forward_pre_hooks.clear()
    del module._parameters["weight_g"], module._parameters["weight_v"]
    assert [(f.code, f.object) for f in wnaudit.audit_module(module)] == [("WN205", "weight")]


def test_inference_parameter_is_reported():
    with torch.inference_mode():
        module = nn.Linear(2, 2)
    assert {f.object for f in wnaudit.audit_module(module)} == {"weight", "bias"}


def test_assert_folded_names_every_leftover():
    model = nn.Sequential(apply_weight_norm(nn.Conv1d(2, 2, 1), "modern"), apply_weight_norm(nn.Linear(2, 2), "legacy"))
    with pytest.raises(AssertionError) as error:
        wnaudit.assert_folded(model)
    assert "WN201 0.weight" in str(error.value) and "WN202 1.weight" in str(error.value)
    wnaudit.fold_weight_norm(model)
    wnaudit.assert_folded(model)


def test_importing_wnaudit_does_not_import_torch():
    code = "import sys, wnaudit, wnaudit.core.catalogue, wnaudit.common.findings; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
