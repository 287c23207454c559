"""Hypothesis properties: bit-identity, idempotence, audit-after-fold clean."""

from __future__ import annotations

import contextlib
import copy

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import wnaudit
from core_helpers import apply_weight_norm, effective_weight

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
MODES = [contextlib.nullcontext, torch.no_grad, torch.inference_mode]


@st.composite
def weight_normed_layers(draw):
    kind = draw(st.sampled_from(["conv1d", "conv2d", "convtranspose1d", "linear"]))
    cin, cout = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    k = draw(st.integers(1, 4))
    if kind == "conv1d":
        layer = nn.Conv1d(cin, cout, k)
    elif kind == "conv2d":
        layer = nn.Conv2d(cin, cout, (k, draw(st.integers(1, 3))))
    elif kind == "convtranspose1d":
        layer = nn.ConvTranspose1d(cin, cout, k, stride=draw(st.integers(1, 3)))
    else:
        layer = nn.Linear(cin, cout)
    ndim = layer.weight.ndim
    dim = draw(st.sampled_from([None, *range(ndim)]))
    spelling = draw(st.sampled_from(["modern", "legacy"]))
    dtype = draw(st.sampled_from(DTYPES))
    torch.manual_seed(draw(st.integers(0, 2**16)))
    layer.weight.data.normal_()
    return apply_weight_norm(layer.to(dtype), spelling, dim=dim)


@settings(max_examples=60, deadline=None)
@given(layer=weight_normed_layers(), mode=st.sampled_from(MODES), frozen=st.booleans())
def test_fold_is_exact_idempotent_and_clean(layer, mode, frozen):
    if frozen:
        layer.requires_grad_(False)
    expected = effective_weight(layer)
    with mode():
        assert wnaudit.fold_weight_norm(layer) == ["weight"]
        assert wnaudit.fold_weight_norm(layer) == []
    weight = layer._parameters["weight"]
    assert isinstance(weight, nn.Parameter) and not weight.is_inference()
    assert weight.requires_grad is (not frozen)
    assert weight.dtype == expected.dtype
    assert torch.equal(weight, expected)
    assert wnaudit.audit_module(layer) == []


@settings(max_examples=40, deadline=None)
@given(layer=weight_normed_layers(), fold_original_first=st.booleans())
def test_folding_a_deepcopy_leaves_the_original_live_and_exact(layer, fold_original_first):
    if layer._forward_pre_hooks:  # legacy: torch deepcopies only leaf tensors; recompute as a leaf
        for hook in list(layer._forward_pre_hooks.values()):
            with torch.no_grad():
                hook(layer, ())
    expected = effective_weight(layer)
    copied = copy.deepcopy(layer)
    first, second = (layer, copied) if fold_original_first else (copied, layer)
    assert wnaudit.fold_weight_norm(first) == ["weight"]
    assert torch.equal(effective_weight(second), expected)  # still live, still exact
    assert wnaudit.fold_weight_norm(second) == ["weight"]
    assert torch.equal(first.weight, expected) and torch.equal(second.weight, expected)
    assert type(first) is type(second)
