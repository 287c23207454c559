"""Partial folds (issue 34, item 4): fold all but some submodules now, the rest later.

The CosyVoice3 seed serves a HiFT generator whose 77 weight norms fold at load,
while its F0 predictor (5 norms) is moved to CPU/float32 first and folded then.
"""

from __future__ import annotations

import logging

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import wnaudit
from wnaudit.core.catalogue import PARAMETRIZATIONS_ATTR
from wnaudit.core.live import find_reparametrizations

from core_helpers import apply_weight_norm, perturb_magnitudes


class F0Predictor(nn.Module):
    def __init__(self, spelling: str) -> None:
        super().__init__()
        self.conv = nn.Sequential(*(apply_weight_norm(nn.Conv1d(8, 8, 3, padding=1), spelling) for _ in range(4)))
        self.classifier = apply_weight_norm(nn.Linear(8, 1), spelling)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.conv(x).transpose(1, 2)).squeeze(-1)


class HiFTGenerator(nn.Module):
    """HiFT's layout in small: upsampling ConvTranspose1d, resblocks, an f0_predictor child,
    and a sibling whose name starts with ``f0`` (``f0_upsamp``), which ``exclude="f0"`` must not match."""

    def __init__(self, spelling: str = "modern") -> None:
        super().__init__()
        self.conv_pre = apply_weight_norm(nn.Conv1d(8, 8, 3, padding=1), spelling)
        self.ups = nn.ModuleList(apply_weight_norm(nn.ConvTranspose1d(8, 8, 4, stride=2, padding=1), spelling) for _ in range(2))
        self.resblocks = nn.ModuleList(apply_weight_norm(nn.Conv1d(8, 8, 3, padding=1), spelling) for _ in range(2))
        self.f0_upsamp = apply_weight_norm(nn.Conv1d(1, 8, 1), spelling)
        self.f0_predictor = F0Predictor(spelling)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f0 = self.f0_predictor(x).unsqueeze(1)
        h = self.conv_pre(x) + self.f0_upsamp(f0)
        for up, block in zip(self.ups, self.resblocks):
            h = up(h)
            h = h + block(h)
        return h


def _model(spelling: str = "modern", seed: int = 0) -> HiFTGenerator:
    torch.manual_seed(seed)
    model = HiFTGenerator(spelling).eval()
    perturb_magnitudes(model)
    return model


def _live_names(model: nn.Module) -> list[str]:
    return [live.qualified_name for live in find_reparametrizations(model)]


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _assert_bit_identical(left: dict[str, torch.Tensor], right: dict[str, torch.Tensor]) -> None:
    assert left.keys() == right.keys()
    for key in left:
        assert left[key].dtype == right[key].dtype and torch.equal(left[key], right[key]), key


SPELLINGS = ["modern", "legacy"]
F0_TENSORS = ["f0_predictor.conv.0.weight", "f0_predictor.conv.1.weight", "f0_predictor.conv.2.weight",
              "f0_predictor.conv.3.weight", "f0_predictor.classifier.weight"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_exclude_leaves_the_named_submodule_parametrized(spelling: str) -> None:
    model = _model(spelling)
    folded = wnaudit.fold_weight_norm(model, exclude=["f0_predictor"])
    assert "ups.0.weight" in folded and "f0_upsamp.weight" in folded
    assert not any(name.startswith("f0_predictor.") for name in folded)
    assert _live_names(model) == F0_TENSORS
    assert isinstance(model.ups[0].weight, nn.Parameter)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_prefix_matches_whole_components_only(spelling: str) -> None:
    """``f0`` is not a submodule: it must not match ``f0_predictor`` nor ``f0_upsamp``."""
    model = _model(spelling)
    before = _state(model)
    with pytest.raises(wnaudit.ExcludeError, match="'f0' names no submodule of HiFTGenerator"):
        wnaudit.fold_weight_norm(model, exclude=["f0"])
    _assert_bit_identical(_state(model), before)  # refused before anything changed
    wnaudit.fold_weight_norm(model, exclude="f0_predictor.conv")  # a single string is one name
    assert _live_names(model) == F0_TENSORS[:4]


def test_a_typo_is_an_error_not_a_full_fold() -> None:
    model = _model()
    with pytest.raises(ValueError, match="did you mean 'f0_predictor'"):
        wnaudit.fold(model, exclude=("f0_predictr",))
    assert len(_live_names(model)) == 11


def test_exclude_with_other_kinds() -> None:
    torch.manual_seed(1)
    model = nn.Sequential(nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4)), nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4))).eval()
    folded = wnaudit.fold(model, weight_norm=False, spectral_norm=True, exclude=["1"])
    assert folded == ["0.weight"] and _live_names(model) == ["1.weight"]


def test_the_log_line_names_the_top_model_and_what_it_left(caplog: pytest.LogCaptureFixture) -> None:
    model = _model()
    with caplog.at_level(logging.INFO, logger="wnaudit.fold"):
        wnaudit.fold_weight_norm(model, exclude=["f0_predictor"])
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("wnaudit: folded")]
    assert lines == ["wnaudit: folded 6 weight norms in HiFTGenerator (6 modern, 0 legacy); left 5 in f0_predictor"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="wnaudit.fold"):
        wnaudit.fold_weight_norm(model, exclude=["f0_predictor"])
    (record,) = [r for r in caplog.records if r.getMessage().startswith("wnaudit: folded")]
    assert record.getMessage() == (
        "wnaudit: folded 0 weight norms in HiFTGenerator (nothing live outside the excluded submodules); left 5 in f0_predictor"
    )
    assert record.levelno == logging.INFO


def test_strict_says_what_was_excluded() -> None:
    model = _model()
    wnaudit.fold_weight_norm(model, exclude=["f0_predictor"])
    with pytest.raises(wnaudit.FoldError, match="outside the excluded submodules"):
        wnaudit.fold_weight_norm(model, exclude=["f0_predictor"], strict=True)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_assert_folded_allows_the_named_submodules_only(spelling: str) -> None:
    model = _model(spelling)
    wnaudit.fold_weight_norm(model, exclude=["f0_predictor"])
    wnaudit.assert_folded(model, allow=["f0_predictor"])
    with pytest.raises(AssertionError) as failed:
        wnaudit.assert_folded(model, allow=["f0_predictor.conv"])
    assert "1 reparametrization leftover(s)" in str(failed.value)
    assert "f0_predictor.classifier.weight" in str(failed.value) and "f0_predictor.conv.0" not in str(failed.value)
    with pytest.raises(AssertionError) as failed:
        wnaudit.assert_folded(model)
    assert all(name in str(failed.value) for name in F0_TENSORS)
    with pytest.raises(wnaudit.ExcludeError, match="allow='f0'"):
        wnaudit.assert_folded(model, allow="f0")


def test_assert_folded_still_fails_on_a_half_done_fold_in_an_allowed_submodule() -> None:
    model = _model()
    with torch.no_grad():  # torch's remover leaves a buffer here (WN205)
        nn.utils.parametrize.remove_parametrizations(model.f0_predictor.classifier, "weight")
    wnaudit.fold_weight_norm(model, exclude=["f0_predictor"])
    with pytest.raises(AssertionError, match="WN205 f0_predictor.classifier.weight"):
        wnaudit.assert_folded(model, allow=["f0_predictor"])


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_cosyvoice3_recipe(spelling: str) -> None:
    """Fold all but the F0 predictor; later move it to CPU/float32 and fold it: same weights as one fold."""
    model = _model(spelling).to(torch.float64)
    reference = _model(spelling).to(torch.float64)  # the same weights (a legacy-normed model cannot be deep-copied)
    x = torch.randn(1, 8, 10, dtype=torch.float64)
    expected = reference(x)
    wnaudit.fold_weight_norm(model, exclude=["f0_predictor"])
    wnaudit.assert_folded(model, allow=["f0_predictor"])
    assert torch.equal(model(x), expected)
    model.f0_predictor.to(device="cpu", dtype=torch.float32)
    assert wnaudit.fold_weight_norm(model.f0_predictor) == [name.removeprefix("f0_predictor.") for name in F0_TENSORS]
    wnaudit.assert_folded(model)
    reference.f0_predictor.to(device="cpu", dtype=torch.float32)
    wnaudit.fold_weight_norm(reference)
    _assert_bit_identical(_state(model), _state(reference))
    assert model.f0_predictor.classifier.weight.dtype == torch.float32


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("stored", SPELLINGS + ["folded"])
def test_load_state_dict_keeps_the_excluded_submodules_parametrized(spelling: str, stored: str) -> None:
    """Bit-identical to loading everything then folding (the full load's own contract: as torch would, then fold)."""
    source = _model("modern" if stored == "folded" else stored, seed=3)
    if stored == "folded":
        wnaudit.fold_weight_norm(source, exclude=["f0_predictor"])  # the excluded part stays stored unfolded
    checkpoint = _state(source)
    model = _model(spelling)
    wnaudit.load_state_dict(model, checkpoint, exclude=["f0_predictor"])
    assert _live_names(model) == F0_TENSORS
    wnaudit.assert_folded(model, allow="f0_predictor")
    reference = _model(spelling)
    wnaudit.load_state_dict(reference, checkpoint)
    x = torch.randn(1, 8, 6)
    assert torch.equal(model(x), reference(x))
    wnaudit.fold_weight_norm(model)
    _assert_bit_identical(_state(model), _state(reference))


def test_load_state_dict_keeps_the_stored_pair_on_the_excluded_layer() -> None:
    source = _model(seed=5)
    checkpoint = _state(source)
    model = _model()
    wnaudit.load_state_dict(model, checkpoint, exclude="f0_predictor")
    plist = getattr(model.f0_predictor.classifier, PARAMETRIZATIONS_ATTR).weight
    assert torch.equal(plist.original0, checkpoint["f0_predictor.classifier.parametrizations.weight.original0"])
    assert torch.equal(plist.original1, checkpoint["f0_predictor.classifier.parametrizations.weight.original1"])
    with pytest.raises(wnaudit.ExcludeError):
        wnaudit.load_state_dict(_model(), checkpoint, exclude="f0")


@settings(max_examples=12, deadline=None)
@given(
    spelling=st.sampled_from(SPELLINGS),
    excluded=st.lists(st.sampled_from(["f0_predictor", "f0_predictor.conv", "ups", "ups.1", "resblocks.0", "f0_upsamp", "conv_pre"]),
                      max_size=3, unique=True),
    seed=st.integers(0, 3),
)
def test_fold_with_exclude_then_the_rest_equals_one_fold(spelling: str, excluded: list[str], seed: int) -> None:
    model = _model(spelling, seed)
    reference = _model(spelling, seed)
    wnaudit.fold_weight_norm(model, exclude=excluded)
    wnaudit.fold_weight_norm(model)
    wnaudit.fold_weight_norm(reference)
    _assert_bit_identical(_state(model), _state(reference))
    wnaudit.assert_folded(model)


def test_the_documented_partial_fold_log_line_is_the_real_one(caplog: pytest.LogCaptureFixture) -> None:
    from pathlib import Path

    from wnaudit.testing.vocoder import build_vocoder

    api = (Path(__file__).resolve().parents[2] / "docs" / "python-api.md").read_text(encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="wnaudit.fold"):
        wnaudit.fold_weight_norm(build_vocoder(weight_norm="modern"), exclude="f0_predictor")
    (line,) = [r.getMessage() for r in caplog.records if r.name == "wnaudit.fold"]
    assert f"`{line}`" in api


def test_a_wrapped_model_suggests_the_wrapped_name() -> None:
    wrapped = nn.Sequential()
    wrapped.add_module("module", _model())  # as DataParallel or torch.compile's _orig_mod nests it
    with pytest.raises(wnaudit.ExcludeError, match="did you mean 'module.f0_predictor'"):
        wnaudit.fold_weight_norm(wrapped, exclude="f0_predictor")
    assert len(wnaudit.fold_weight_norm(wrapped, exclude="module.f0_predictor")) == 6


def test_a_shared_submodule_excluded_under_either_name_stays_parametrized() -> None:
    model = _model()
    model.tied = model.ups[1]  # the same layer reachable as ups.1 and as tied
    folded = wnaudit.fold_weight_norm(model, exclude=["tied"])
    assert "ups.1.weight" not in folded and "ups.0.weight" in folded
    assert _live_names(model) == ["ups.1.weight"]
    wnaudit.assert_folded(model, allow=["tied"])


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_folded_checkpoint_with_exclude_says_why_and_changes_nothing(spelling: str) -> None:
    """A checkpoint folded whole (``wnaudit --fix g.pt``) has no pair to keep the excluded layers parametrized:
    one clear error before any change, not torch's missing keys after the rest was folded."""
    source = _model(seed=7)
    wnaudit.fold_weight_norm(source)
    model = _model(spelling)
    before = _state(model)
    with pytest.raises(ValueError, match=r"exclude=\['f0_predictor'\] keeps f0_predictor\.classifier\.weight, .* and 2 more"):
        wnaudit.load_state_dict(model, _state(source), exclude=["f0_predictor"])
    _assert_bit_identical(_state(model), before)
    assert len(_live_names(model)) == 11
