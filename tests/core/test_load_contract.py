"""wnaudit.load_state_dict: any checkpoint into any model, folded at the end, bit-identical to
"load into the parametrized model as torch would, then fold"."""

from __future__ import annotations

import functools
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils import parametrizations, parametrize

import wnaudit
from wnaudit.core.shapes import StackedStateError
from wnaudit.testing.vocoder import build_vocoder, example_input
from core_helpers import apply_weight_norm, perturb_magnitudes

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
SPELLINGS = ["modern", "legacy"]


def _respell(state: dict, spelling: str) -> dict:
    """The same unfolded state under the other key spelling (what the other weight norm stores)."""
    out = {}
    for key, value in state.items():
        if spelling == "legacy" and ".parametrizations." in f".{key}":
            prefix, _, rest = f".{key}".rpartition(".parametrizations.")
            name, _, part = rest.partition(".")
            out[(prefix + "." + name + {"original0": "_g", "original1": "_v"}[part]).lstrip(".")] = value
        elif spelling == "modern" and key.endswith(("weight_g", "weight_v")):
            out[f"{key[:-len('weight_g')]}parametrizations.weight.original{0 if key.endswith('_g') else 1}"] = value
        else:
            out[key] = value
    return out


@functools.lru_cache(maxsize=None)
def _trained(spelling: str) -> dict:
    """The checkpoint: a trained vocoder's unfolded fp32 state (read only)."""
    return build_vocoder(spelling, seed=3).state_dict()


def _reference(model_spelling: str, unfolded: dict, dtype: torch.dtype) -> dict:
    """Load into the parametrized model as torch would, then fold."""
    model = build_vocoder(model_spelling, seed=11).to(dtype)
    model.load_state_dict(_respell(unfolded, model_spelling), strict=True)
    wnaudit.fold_weight_norm(model)
    return model.state_dict()


def _assert_same(model: nn.Module, reference: dict) -> None:
    state = model.state_dict()
    assert sorted(state) == sorted(reference)
    for key, value in reference.items():
        assert state[key].dtype == value.dtype, key
        assert torch.equal(state[key], value), key


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("model_spelling", SPELLINGS)
@pytest.mark.parametrize("checkpoint_spelling", SPELLINGS)
@pytest.mark.parametrize("model_folded", [False, True], ids=["parametrized-model", "folded-model"])
@pytest.mark.parametrize("checkpoint_folded", [False, True], ids=["unfolded-ckpt", "folded-ckpt"])
def test_four_combinations_are_bit_identical(dtype, model_spelling, checkpoint_spelling, model_folded, checkpoint_folded):
    unfolded = _trained(checkpoint_spelling)
    checkpoint = wnaudit.fold_state_dict(unfolded)[0] if checkpoint_folded else unfolded
    if checkpoint_folded:
        reference_model = build_vocoder(None).to(dtype)
        reference_model.load_state_dict(checkpoint, strict=True)
        reference = reference_model.state_dict()
    else:
        reference = _reference(model_spelling, unfolded, dtype)
    model = build_vocoder(model_spelling, seed=5).to(dtype)
    if model_folded:
        wnaudit.fold_weight_norm(model)
    result = wnaudit.load_state_dict(model, checkpoint, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    wnaudit.assert_folded(model)
    _assert_same(model, reference)


def test_outputs_match_the_trained_model():
    trained = build_vocoder("modern", seed=3)
    model = build_vocoder("legacy", seed=5)
    wnaudit.load_state_dict(model, trained.state_dict())
    x = example_input(8)
    assert torch.equal(model(x), trained(x))


def test_half_precision_load_into_a_folded_model_matches_the_live_path():
    """Regression: the fold computed in the checkpoint's dtype, then cast (up to 4.9e-4 off in fp16)."""
    unfolded = _trained("modern")
    for dtype in (torch.float16, torch.bfloat16):
        reference = _reference("modern", unfolded, dtype)
        for load in (wnaudit.load_unfolded_state_dict, wnaudit.load_state_dict):
            model = build_vocoder("modern").to(dtype)
            wnaudit.fold_weight_norm(model)
            load(model, unfolded, strict=True)
            _assert_same(model, reference)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_negative_dim_is_loaded_with_the_kernel_the_module_used(spelling):
    """dim=-2 on a 2-D weight stores the shapes of dim=0 but runs torch's other kernel."""
    torch.manual_seed(2)
    source = perturbed(apply_weight_norm(nn.Linear(64, 48), spelling, dim=-2))
    checkpoint = source.state_dict()
    reference = apply_weight_norm(nn.Linear(64, 48), spelling, dim=-2)
    reference.load_state_dict(checkpoint)
    wnaudit.fold_weight_norm(reference)
    folded = apply_weight_norm(nn.Linear(64, 48), spelling, dim=-2)
    wnaudit.fold_weight_norm(folded)
    wnaudit.load_state_dict(folded, checkpoint)
    assert torch.equal(folded.weight, reference.weight)
    # The dims differ in bits here, so the record (not the shape) decided.
    g, v = (checkpoint[k] for k in sorted(checkpoint) if k != "bias")
    if spelling == "legacy":
        g, v = checkpoint["weight_g"], checkpoint["weight_v"]
    assert not torch.equal(torch._weight_norm(v, g, 0), reference.weight)


def perturbed(module: nn.Module) -> nn.Module:
    perturb_magnitudes(module)
    return module


class _Double(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


def test_stacked_chain_loads_into_the_parametrized_model_and_refuses_into_a_folded_one():
    torch.manual_seed(0)
    source = parametrizations.weight_norm(nn.Linear(3, 3))
    perturb_magnitudes(source)
    parametrize.register_parametrization(source, "weight", _Double())
    checkpoint = source.state_dict()
    expected = source.weight.detach().clone()

    def build() -> nn.Module:
        model = parametrizations.weight_norm(nn.Linear(3, 3))
        parametrize.register_parametrization(model, "weight", _Double())
        return model

    model = build()
    with pytest.raises(wnaudit.FoldError, match="stacked"):
        wnaudit.load_state_dict(model, checkpoint)
    assert parametrize.is_parametrized(model, "weight") and len(model.parametrizations.weight) == 2
    wnaudit.load_state_dict(model, checkpoint, other=True)
    assert torch.equal(model.weight, expected)
    folded = build()
    wnaudit.fold(folded, other=True)
    before = folded.weight.detach().clone()
    with pytest.raises(StackedStateError, match="stacked"):
        wnaudit.load_state_dict(folded, checkpoint)
    assert torch.equal(folded.weight, before)


def test_strict_mismatch_is_torchs_error():
    model = build_vocoder("modern")
    checkpoint = dict(build_vocoder("legacy").state_dict())
    del checkpoint["conv_pre.bias"]
    with pytest.raises(RuntimeError, match="conv_pre.bias"):
        wnaudit.load_state_dict(model, checkpoint, strict=True)


def test_exported_from_the_package():
    from wnaudit.core.load import load_state_dict

    assert wnaudit.load_state_dict is load_state_dict
    assert "load_state_dict" in wnaudit.__all__


# --------------------------------------------------------------------------
# Property: load into folded modules of every dtype, from checkpoints of every dtype
# --------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(["conv1d", "linear", "convtranspose1d"]),
    dim=st.sampled_from([0, 1, -1, -2, None]),
    spelling=st.sampled_from(SPELLINGS),
    stored_dtype=st.sampled_from(DTYPES),
    model_dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)
def test_load_into_a_folded_module_equals_load_then_fold(kind, dim, spelling, stored_dtype, model_dtype, seed):
    def build() -> nn.Module:
        torch.manual_seed(seed)
        layer = {"conv1d": lambda: nn.Conv1d(3, 5, 4), "linear": lambda: nn.Linear(6, 4), "convtranspose1d": lambda: nn.ConvTranspose1d(4, 3, 3)}[kind]()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return apply_weight_norm(layer, spelling, dim=dim)

    source = perturbed(build()).to(stored_dtype)
    checkpoint = source.state_dict()
    reference = build().to(model_dtype)
    reference.load_state_dict(checkpoint)
    wnaudit.fold_weight_norm(reference)
    folded = build().to(model_dtype)
    wnaudit.fold_weight_norm(folded)
    wnaudit.load_state_dict(folded, checkpoint)
    assert folded.weight.dtype == model_dtype
    assert torch.equal(folded.weight, reference.weight)


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_spectral_norm_into_a_folded_square_layer_uses_the_recorded_dim(spelling, dtype):
    """Conv1d(16, 16, 5) vs ConvTranspose1d(16, 16, 5): the same stored shapes, dims 0 and 1."""
    sn = parametrizations.spectral_norm if spelling == "modern" else nn.utils.spectral_norm

    def build() -> nn.Module:
        torch.manual_seed(4)
        return nn.Sequential(sn(nn.ConvTranspose1d(16, 16, 5)), sn(nn.Conv1d(16, 16, 5)))

    source = build()
    with torch.no_grad():  # never refined on these weights: the stored estimates decide nothing
        for parameter in source.parameters():
            parameter.normal_()
    checkpoint = source.state_dict()
    with pytest.raises(ValueError, match="ambiguous"):
        wnaudit.fold_state_dict(checkpoint, spectral_norm=True)
    reference = build().to(dtype)
    reference.load_state_dict(checkpoint)
    wnaudit.fold(reference, spectral_norm=True)
    folded = build().to(dtype)
    wnaudit.fold(folded, spectral_norm=True)
    wnaudit.load_state_dict(folded, checkpoint, spectral_norm=True)
    _assert_same(folded, reference.state_dict())
