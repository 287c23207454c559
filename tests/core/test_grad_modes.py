"""Whatever grad mode the fold runs in, the weight ends as a normal nn.Parameter.

torch's own removers fail this three ways (each shown below): the modern one
leaves a buffer under no_grad and an inference tensor under inference_mode, the
legacy one unfreezes a frozen model.
"""

from __future__ import annotations

import contextlib
import warnings

import pytest
import torch
from torch import nn
from torch.nn.utils import parametrize

import wnaudit
from core_helpers import apply_weight_norm, effective_weight, perturb_magnitudes

GRAD_MODES = {
    "grad": contextlib.nullcontext,
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
}


@pytest.mark.parametrize("mode", sorted(GRAD_MODES))
@pytest.mark.parametrize("spelling", ["modern", "legacy"])
@pytest.mark.parametrize("frozen", [False, True], ids=["trainable", "frozen"])
def test_weight_is_a_normal_parameter_with_original_requires_grad(mode, spelling, frozen):
    torch.manual_seed(0)
    module = apply_weight_norm(nn.ConvTranspose1d(4, 6, 4, stride=2), spelling)
    perturb_magnitudes(module)
    if frozen:
        module.requires_grad_(False)
    expected = effective_weight(module)

    with GRAD_MODES[mode]():
        assert wnaudit.fold_weight_norm(module) == ["weight"]

    weight = module._parameters["weight"]
    assert isinstance(weight, nn.Parameter)
    assert "weight" not in module._buffers
    assert not weight.is_inference()
    assert weight.requires_grad is (not frozen)
    assert torch.equal(weight, expected)
    # Forward and backward work outside the fold's context.
    x = torch.randn(2, 4, 5, requires_grad=True)
    module(x).sum().backward()
    assert x.grad is not None
    assert (weight.grad is not None) is (not frozen)
    assert wnaudit.audit_module(module) == []


def test_torch_modern_remover_under_no_grad_leaves_a_buffer_that_wn205_reports():
    module = apply_weight_norm(nn.Conv1d(2, 3, 3), "modern")
    with torch.no_grad():
        parametrize.remove_parametrizations(module, "weight")
    assert "weight" in module._buffers
    assert [f.code for f in wnaudit.audit_module(module)] == ["WN205"]


def test_torch_modern_remover_under_inference_mode_leaves_an_inference_tensor_that_wn205_reports():
    module = apply_weight_norm(nn.Conv1d(2, 3, 3), "modern")
    with torch.inference_mode():
        parametrize.remove_parametrizations(module, "weight")
    assert module.weight.is_inference()
    findings = wnaudit.audit_module(module)
    assert [(f.code, f.object) for f in findings] == [("WN205", "weight")]


def test_torch_legacy_remover_unfreezes_a_frozen_model_but_the_fold_does_not():
    theirs = apply_weight_norm(nn.Conv1d(2, 3, 3), "legacy").requires_grad_(False)
    ours = apply_weight_norm(nn.Conv1d(2, 3, 3), "legacy").requires_grad_(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.remove_weight_norm(theirs)
    wnaudit.fold_weight_norm(ours)
    assert theirs.weight.requires_grad is True
    assert ours.weight.requires_grad is False


def test_partly_frozen_pair_stays_trainable():
    module = apply_weight_norm(nn.Linear(3, 3), "modern")
    module.parametrizations.weight.original0.requires_grad_(False)
    wnaudit.fold_weight_norm(module)
    assert module.weight.requires_grad is True


def test_fold_under_autocast_keeps_the_weights_dtype():
    torch.manual_seed(4)
    module = apply_weight_norm(nn.Linear(16, 16), "modern")
    perturb_magnitudes(module)
    expected = effective_weight(module)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        wnaudit.fold_weight_norm(module)
    assert module.weight.dtype == torch.float32
    assert torch.equal(module.weight, expected)
