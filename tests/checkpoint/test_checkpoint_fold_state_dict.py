"""fold_state_dict and load_unfolded_state_dict: bit-identical to the live module, strict on bad state."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import wnaudit
from wnaudit.testing.vocoder import example_input
from checkpoint_helpers import WEIGHT_NORMS, folded_copy, trained_discriminator, vocoder, vocoder_state
from wnaudit.core.shapes import AmbiguousDimError, OrphanKeyError, ShapeMismatchError, StackedStateError, StoredStateError, spectral_norm_dims, weight_norm_dims
from wnaudit.core.state_dict_fold import fold_state_dict, load_unfolded_state_dict

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class Holder(nn.Module):
    """A module whose only parameter is an arbitrary-shaped weight (so any dim can be normed)."""

    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.weight = nn.Parameter(weight)


def _weight_normed(weight: torch.Tensor, dim: int | None, spelling: str) -> nn.Module:
    module = Holder(weight)
    if spelling == "modern":
        nn.utils.parametrizations.weight_norm(module, dim=dim)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            nn.utils.weight_norm(module, dim=dim)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith(("original0", "weight_g")):
                p.mul_(torch.rand_like(p.float()).to(p.dtype) + 0.5)
    return module


def _live_weight(module: nn.Module) -> torch.Tensor:
    """What the module computes for its weight in a forward (the legacy hook runs as pre-hook)."""
    for hook in module._forward_pre_hooks.values():
        hook(module, ())
    return module.weight.detach()


@st.composite
def weight_norm_case(draw):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    dim = draw(st.sampled_from([None, *range(-ndim, ndim)]))
    dtype = draw(st.sampled_from(DTYPES))
    spelling = draw(st.sampled_from(["modern", "legacy"]))
    seed = draw(st.integers(0, 2**16))
    return shape, dim, dtype, spelling, seed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weight_norm_case())
def test_weight_norm_fold_is_bit_identical_to_the_live_module(case):
    """Every dim (negative ones too) and dtype: exact when told the module's dim, and
    exact from the shapes alone whenever the dim is the one the shapes give."""
    shape, dim, dtype, spelling, seed = case
    torch.manual_seed(seed)
    module = _weight_normed(torch.randn(shape).to(dtype), dim, spelling)
    expected = _live_weight(module)
    state = module.state_dict()
    folded, names = fold_state_dict(state, dims={"weight": dim})
    assert names == ["weight"] and list(folded) == ["weight"]
    assert folded["weight"].dtype == dtype
    assert torch.equal(folded["weight"], expected), (shape, dim, dtype, spelling)
    if dim is not None and dim < -1:
        return  # shapes alone give dim + ndim, which torch may compute by another kernel
    g_key = next(k for k in state if k.endswith(("original0", "weight_g")))
    candidates = weight_norm_dims(state[g_key].shape, expected.shape)
    if len(candidates) > 1:
        # v has several size-1 dims: the fold may refuse (never guess) or agree bit for bit.
        try:
            folded, _ = fold_state_dict(state)
        except AmbiguousDimError:
            return
        assert torch.equal(folded["weight"], expected)
        return
    folded, names = fold_state_dict(state)
    assert names == ["weight"]
    assert torch.equal(folded["weight"], expected), (shape, dim, dtype, spelling)


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_negative_dim_needs_the_module_dim_to_be_exact(spelling):
    """Regression: weight_norm(nn.Linear(64, 48), dim=-2) stores dim 0's shapes, but torch runs
    the fused kernel only for dim 0, so the positive dim read off g differs in the last bits."""
    torch.manual_seed(0)
    module = _weight_normed(torch.randn(48, 64), -2, spelling)
    expected = _live_weight(module)
    state = module.state_dict()
    from_shapes, _ = fold_state_dict(state)
    assert not torch.equal(from_shapes["weight"], expected)  # what the shapes alone can give
    told, _ = fold_state_dict(state, dims={"weight": -2})
    assert torch.equal(told["weight"], expected)
    with pytest.raises(ShapeMismatchError, match="dim 1"):
        fold_state_dict(state, dims={"weight": 1})
    with pytest.raises(ValueError, match="dims names wieght"):
        fold_state_dict(state, dims={"wieght": -2})  # a typo never falls back to the shapes silently


def test_stateful_parametrization_stacked_on_weight_norm_is_refused():
    """Regression: the stacked parametrization's state was left behind and its effect dropped."""
    torch.manual_seed(0)
    module = nn.utils.parametrizations.weight_norm(nn.Linear(6, 6))
    nn.utils.parametrizations.spectral_norm(module)  # stacked on top: stores parametrizations.weight.1._u/_v
    state = module.state_dict()
    assert "parametrizations.weight.1._u" in state
    with pytest.raises(StackedStateError, match=r"parametrizations\.weight\.1\._u.*stacked"):
        fold_state_dict(state)


def test_ordinary_g_v_tensors_whose_shapes_fit_no_weight_norm_are_kept():
    """Regression: an ordinary state dict with gain_g/gain_v raised ShapeMismatchError."""
    state = {"block.gain_g": torch.ones(4, 2), "block.gain_v": torch.randn(4, 3), "block.weight": torch.randn(4, 3)}
    folded, names = fold_state_dict(state)
    assert names == [] and all(folded[key] is value for key, value in state.items())
    # Under a weight's name the same shapes are a broken pair, and still refused.
    with pytest.raises(ShapeMismatchError):
        fold_state_dict({"block.weight_g": torch.ones(4, 2), "block.weight_v": torch.randn(4, 3)})


class _Gain(nn.Module):
    """A user's module whose ordinary parameters happen to be called gain_g and gain_v."""

    def __init__(self) -> None:
        super().__init__()
        self.gain_g = nn.Parameter(torch.rand(4, 1))
        self.gain_v = nn.Parameter(torch.randn(4, 3))


def test_ordinary_g_v_parameters_of_the_model_load_as_themselves():
    """The shapes fit weight norm, but the model has the keys: the loaders must not merge them."""
    source, target = _Gain(), _Gain()
    for load in (load_unfolded_state_dict, wnaudit.load_state_dict):
        load(target, source.state_dict(), strict=True)
        assert torch.equal(target.gain_g, source.gain_g) and torch.equal(target.gain_v, source.gain_v)


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_vocoder_state_folds_to_the_live_weights_and_output(spelling):
    model = vocoder(spelling)
    folded, names = fold_state_dict(model.state_dict())
    assert len(names) == WEIGHT_NORMS
    reference = folded_copy(spelling)
    reference_state = reference.state_dict()
    assert list(folded) == list(reference_state)
    for key, value in reference_state.items():
        assert torch.equal(folded[key], value), key
    target = vocoder(None)
    target.load_state_dict(folded, strict=True)
    x = example_input(frames=8)
    assert torch.equal(target(x), model(x))


def test_other_entries_are_the_same_objects_and_positions_are_kept():
    state = vocoder_state("legacy")
    state["extra.buffer"] = torch.arange(3)
    folded, _ = fold_state_dict(state)
    for key, value in folded.items():
        if key in state:
            assert value is state[key]
    # Each folded entry sits where the first stored key of its pair was.
    expected_order = [k[: -len("_g")] if k.endswith("_g") else k for k in state if not k.endswith("_v")]
    assert list(folded) == expected_order
    assert list(folded)[-1] == "extra.buffer"


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_spectral_norm_folds_only_on_request_and_matches_eval_mode(spelling):
    model = trained_discriminator(spelling)
    state = model.state_dict()
    unchanged, names = fold_state_dict(state)
    assert names == [] and all(unchanged[k] is state[k] for k in state)
    folded, names = fold_state_dict(state, spectral_norm=True)
    assert names == ["convs.0.weight", "convs.1.weight", "convs.2.weight", "post.weight"]
    with torch.no_grad():
        reference = trained_discriminator(spelling)
        wnaudit.fold(reference, weight_norm=False, spectral_norm=True)
    for key, value in reference.state_dict().items():
        assert torch.equal(folded[key], value), key
    x = torch.randn(1, 1, 64)
    assert torch.equal(reference(x), model(x))


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_spectral_norm_square_weight_with_estimates_that_never_ran_on_it_is_refused(spelling):
    """Regression: short u/v that never ran a power iteration on this weight agreed with the
    wrong reshape by chance (seed 246: off by 21 in a weight of ones' scale)."""
    sn = nn.utils.parametrizations.spectral_norm if spelling == "modern" else nn.utils.spectral_norm
    for seed in (246, 356, 569, 588):
        torch.manual_seed(seed)
        module = sn(nn.Linear(2, 2)).eval()
        with torch.no_grad():
            (module.parametrizations.weight.original if spelling == "modern" else module.weight_orig).normal_()
        with pytest.raises(AmbiguousDimError, match="do not decide"):
            fold_state_dict(module.state_dict(), spectral_norm=True)
        # Told the dim, it folds, exactly as the module computes in eval mode.
        key = "weight"
        folded, _ = fold_state_dict(module.state_dict(), spectral_norm=True, dims={key: 0})
        with torch.no_grad():
            if spelling == "modern":
                expected = module.weight
            else:
                hook = next(iter(module._forward_pre_hooks.values()))
                expected = hook.compute_weight(module, do_power_iteration=False)
        assert torch.equal(folded[key], expected)


def test_spectral_norm_ambiguous_dim_is_refused():
    # A square 2-D weight: u/v fit dim 0 and dim 1, which give different matrices.
    torch.manual_seed(0)
    weight = torch.randn(4, 4)
    state = {"w.weight_orig": weight, "w.weight_u": torch.randn(4), "w.weight_v": torch.randn(4)}
    with pytest.raises(AmbiguousDimError, match="w.weight_orig"):
        fold_state_dict(state, spectral_norm=True)
    assert spectral_norm_dims((4, 4), (4,), (4,)) == [0, 1]


def test_g_that_fits_no_dim_is_a_clear_error_not_a_crash():
    state = {"conv.weight_g": torch.ones(3, 1, 1), "conv.weight_v": torch.randn(2, 3, 5)}
    with pytest.raises(ShapeMismatchError, match=r"conv.weight_g.*fits no dimension"):
        fold_state_dict(state)
    state = {"conv.parametrizations.weight.original0": torch.ones(7), "conv.parametrizations.weight.original1": torch.randn(2, 3)}
    with pytest.raises(ValueError, match="original0"):
        fold_state_dict(state)


def test_orphan_half_is_a_clear_error():
    state = {"conv.weight_g": torch.ones(2, 1, 1), "conv.bias": torch.zeros(2)}
    with pytest.raises(OrphanKeyError, match=r"conv.weight_g.*conv.weight_v"):
        fold_state_dict(state)
    assert issubclass(OrphanKeyError, StoredStateError) and issubclass(StoredStateError, ValueError)


@pytest.mark.parametrize("dim", [0, 1])
def test_ambiguous_weight_norm_dim_is_refused_not_guessed(dim):
    # Conv1d(1, 1, k): g of shape (1, 1, 1) fits dim 0 and dim 1, computed by different kernels.
    for seed in range(50):
        torch.manual_seed(seed)
        module = _weight_normed(torch.randn(1, 1, 37, dtype=torch.float16), dim, "modern")
        state = module.state_dict()
        g, v = state["parametrizations.weight.original0"], state["parametrizations.weight.original1"]
        if not torch.equal(torch._weight_norm(v, g, 0), torch._weight_norm(v, g, 1)):
            break
    else:  # pragma: no cover - the kernels always differ somewhere in 50 seeds
        pytest.fail("no seed where dim 0 and dim 1 differ")
    with pytest.raises(AmbiguousDimError, match=r"fits dims \[0, 1\]"):
        fold_state_dict(state)


def test_empty_pair_is_refused_before_the_kernel():
    # torch's kernel divides by zero here (SIGFPE kills the process).
    state = {"conv.weight_g": torch.ones(0, 1, 1), "conv.weight_v": torch.ones(0, 3, 5)}
    with pytest.raises(ShapeMismatchError, match="empty"):
        fold_state_dict(state)


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_load_unfolded_state_dict_into_a_folded_module(spelling):
    source = vocoder(spelling)
    target = folded_copy(spelling, seed=5)
    result = load_unfolded_state_dict(target, source.state_dict(), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    x = example_input(frames=8)
    assert torch.equal(target(x), source(x))


def test_load_unfolded_state_dict_strict_still_reports_real_mismatches():
    target = folded_copy("modern")
    state = dict(vocoder_state("legacy"))
    del state["conv_pre.bias"]
    with pytest.raises(RuntimeError, match="conv_pre.bias"):
        load_unfolded_state_dict(target, state, strict=True)


def test_exported_from_the_package():
    assert wnaudit.fold_state_dict is fold_state_dict
    assert wnaudit.load_unfolded_state_dict is load_unfolded_state_dict


def test_key_clashes_and_mixed_dtypes_are_refused():
    from wnaudit.core.shapes import KeyClashError

    with pytest.raises(KeyClashError, match="already stored"):
        fold_state_dict({"w.weight": torch.zeros(2, 3), "w.weight_g": torch.ones(2, 1), "w.weight_v": torch.ones(2, 3)})
    both = {
        "weight_g": torch.ones(2, 1),
        "weight_v": torch.ones(2, 3),
        "parametrizations.weight.original0": torch.ones(2, 1),
        "parametrizations.weight.original1": torch.ones(2, 3),
    }
    with pytest.raises(KeyClashError, match="as weight_g"):
        fold_state_dict(both)
    with pytest.raises(StoredStateError, match="different dtypes"):
        fold_state_dict({"weight_g": torch.ones(2, 1), "weight_v": torch.ones(2, 3, dtype=torch.float64)})


def test_a_small_first_dim_fold_runs_on_one_thread_with_the_same_bits(monkeypatch):
    """Issue 23 item 6: waking the thread pool per small pair dominated a 25,000-pair fold."""
    from wnaudit.core import state_dict_fold

    torch.manual_seed(0)
    v, g = torch.randn(8, 4, 3), torch.rand(8, 1, 1) + 0.5
    threads = torch.get_num_threads()
    seen: list[int] = []
    real = state_dict_fold.torch_api.weight_norm_kernel
    monkeypatch.setattr(state_dict_fold.torch_api, "weight_norm_kernel", lambda *a: (seen.append(torch.get_num_threads()), real(*a))[1])
    folded = state_dict_fold._kernel(v, g, 0)
    assert seen == [1] and torch.get_num_threads() == threads
    assert torch.equal(folded.view(torch.uint8), torch._weight_norm(v, g, 0).view(torch.uint8))
    state_dict_fold._kernel(v.transpose(0, 2).contiguous(), g.reshape(1, 1, 8), 2)  # the last-dim kernel keeps the pool
    assert seen[-1] == threads
