"""The fold is exact: every layer type, both spellings, any dim and dtype."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import wnaudit
from core_helpers import LAYERS, apply_weight_norm, effective_weight, output_of, perturb_magnitudes

SPELLINGS = ("modern", "legacy")


def _cases():
    for label, factory, name, make_input, dims in LAYERS:
        for dim in dims:
            for spelling in SPELLINGS:
                yield pytest.param(factory, name, make_input, dim, spelling, id=f"{label}-dim{dim}-{spelling}")


@pytest.mark.parametrize(("factory", "name", "make_input", "dim", "spelling"), list(_cases()))
def test_fold_is_bit_identical_on_every_layer_and_dim(factory, name, make_input, dim, spelling):
    torch.manual_seed(0)
    module = apply_weight_norm(factory(), spelling, name=name, dim=dim)
    perturb_magnitudes(module)
    x = make_input()
    before_weight = effective_weight(module, name)
    before_out = output_of(module, x).detach().clone()

    folded = wnaudit.fold_weight_norm(module)

    assert folded == [name]
    after = module._parameters[name]
    assert isinstance(after, nn.Parameter)
    assert after.dtype == before_weight.dtype and after.device == before_weight.device
    assert torch.equal(after, before_weight)
    assert torch.equal(output_of(module, x), before_out)
    assert wnaudit.audit_module(module) == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_fold_keeps_dtype_and_bits(dtype, spelling, dim):
    torch.manual_seed(1)
    module = apply_weight_norm(nn.Conv1d(8, 16, 5).to(dtype), spelling, dim=dim)
    perturb_magnitudes(module)
    expected = effective_weight(module)
    wnaudit.fold_weight_norm(module)
    assert module.weight.dtype == dtype
    assert torch.equal(module.weight, expected)


def test_fold_uses_torch_kernel_not_a_hand_formula():
    """In bfloat16 the hand-written g * v / ||v|| differs from torch's kernel; the fold must not."""
    torch.manual_seed(2)
    differs = False
    for _ in range(5):
        module = apply_weight_norm(nn.Conv1d(64, 64, 7).to(torch.bfloat16), "modern")
        perturb_magnitudes(module)
        g = module.parametrizations.weight.original0.detach()
        v = module.parametrizations.weight.original1.detach()
        hand = g * v / v.norm(dim=(1, 2), keepdim=True)
        expected = effective_weight(module)
        wnaudit.fold_weight_norm(module)
        assert torch.equal(module.weight, expected)
        differs |= not torch.equal(hand, expected)
    assert differs, "the hand formula matched torch's kernel bit for bit; this test lost its teeth"


def test_forward_outputs_unchanged_in_bfloat16_conv_transpose():
    torch.manual_seed(3)
    module = apply_weight_norm(nn.ConvTranspose1d(8, 4, 8, stride=4, padding=2), "modern").to(torch.bfloat16)
    perturb_magnitudes(module)
    x = torch.randn(1, 8, 12, dtype=torch.bfloat16)
    before = module(x).detach()
    wnaudit.fold_weight_norm(module)
    assert torch.equal(module(x), before)
