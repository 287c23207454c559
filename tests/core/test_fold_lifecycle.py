"""No leftovers, idempotence, order, logging, sharing, stacking, caching."""

from __future__ import annotations

import logging

import pytest
import torch
from torch import nn
from torch.nn.utils import parametrizations, parametrize

import wnaudit
from wnaudit.testing.vocoder import MEDIUM, SMALL, build_vocoder, example_input, expected_weight_norms
from core_helpers import apply_weight_norm, effective_weight, perturb_magnitudes


def test_modern_fold_leaves_nothing_behind():
    module = apply_weight_norm(nn.Conv1d(2, 3, 3), "modern")
    assert len(module._load_state_dict_pre_hooks) == 1
    wnaudit.fold_weight_norm(module)
    assert type(module) is nn.Conv1d
    assert not hasattr(module, "parametrizations")
    assert len(module._load_state_dict_pre_hooks) == 0
    assert sorted(module.state_dict()) == ["bias", "weight"]
    # A plain state dict loads strictly, and legacy keys are no longer renamed.
    module.load_state_dict(nn.Conv1d(2, 3, 3).state_dict(), strict=True)


def test_users_own_load_hooks_survive_the_fold():
    module = apply_weight_norm(nn.Conv1d(2, 3, 3), "modern")

    def _weight_norm_compat_hook(*args):  # same name as torch's, different closure
        return None

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    module.register_load_state_dict_post_hook(lambda *args: None)
    wnaudit.fold_weight_norm(module)
    assert [h.hook for h in module._load_state_dict_pre_hooks.values()] == [_weight_norm_compat_hook]
    assert len(module._load_state_dict_post_hooks) == 1


def test_legacy_fold_leaves_nothing_behind():
    module = apply_weight_norm(nn.Conv1d(2, 3, 3), "legacy")
    wnaudit.fold_weight_norm(module)
    assert len(module._forward_pre_hooks) == 0
    assert sorted(module.state_dict()) == ["bias", "weight"]
    assert "weight" not in vars(module)
    module.load_state_dict(nn.Conv1d(2, 3, 3).state_dict(), strict=True)


def test_compat_hook_of_every_folded_tensor_is_removed_and_other_modules_untouched():
    module = nn.LSTM(3, 4)
    parametrizations.weight_norm(module, name="weight_hh_l0")
    parametrizations.weight_norm(module, name="weight_ih_l0")
    spectral = parametrizations.spectral_norm(nn.Linear(3, 3))
    wnaudit.fold_weight_norm(module)
    assert len(module._load_state_dict_pre_hooks) == 0
    assert type(module) is nn.LSTM
    assert wnaudit.fold_weight_norm(spectral) == []
    assert parametrize.is_parametrized(spectral, "weight")


def test_second_call_returns_empty_and_warns(caplog):
    module = apply_weight_norm(nn.Conv1d(2, 3, 3), "modern")
    with caplog.at_level(logging.INFO, logger="wnaudit.fold"):
        assert wnaudit.fold_weight_norm(module) == ["weight"]
        assert wnaudit.fold_weight_norm(module) == []
    messages = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "wnaudit.fold"]
    assert messages[0] == (logging.INFO, "wnaudit: folded 1 weight norm in Conv1d (1 modern, 0 legacy)")
    assert messages[1][0] == logging.WARNING and "folded 0 weight norms" in messages[1][1]


def test_strict_fold_that_finds_nothing_raises():
    with pytest.raises(wnaudit.FoldError, match="nothing to fold"):
        wnaudit.fold_weight_norm(nn.Conv1d(2, 3, 3), strict=True)


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_vocoder_every_weight_norm_found_and_folded_exactly(spelling):
    for config in (SMALL, MEDIUM):
        model = build_vocoder(spelling, config=config)
        x = example_input(24, config)
        before = model(x).detach() if config is SMALL else None
        findings = wnaudit.audit_module(model)
        expected_code = "WN201" if spelling == "modern" else "WN202"
        assert [f.code for f in findings] == [expected_code] * expected_weight_norms(config)
        folded = wnaudit.fold_weight_norm(model)
        assert folded == [f.object for f in findings]
        assert len(folded) == expected_weight_norms(config)
        assert any(name.startswith("ups.") for name in folded)
        if before is not None:
            assert torch.equal(model(x), before)
        wnaudit.assert_folded(model)
        # The folded model's state dict is a never-normed model's state dict.
        plain = build_vocoder(None, config=config)
        assert sorted(model.state_dict()) == sorted(plain.state_dict())
        plain.load_state_dict(model.state_dict(), strict=True)


def test_names_come_in_module_order():
    model = nn.Sequential(
        apply_weight_norm(nn.Conv1d(2, 2, 1), "legacy"),
        nn.Sequential(apply_weight_norm(nn.Conv1d(2, 2, 1), "modern")),
        apply_weight_norm(nn.Linear(2, 2), "modern"),
    )
    assert wnaudit.fold_weight_norm(model) == ["0.weight", "1.0.weight", "2.weight"]


def test_shared_submodule_is_folded_once():
    shared = apply_weight_norm(nn.Conv1d(2, 2, 1), "modern")
    perturb_magnitudes(shared)
    expected = effective_weight(shared)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert wnaudit.fold_weight_norm(model) == ["0.weight"]
    assert model[0] is model[2]
    assert torch.equal(model[2].weight, expected)


class _Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


def test_weight_norm_stacked_with_another_parametrization_is_refused_untouched():
    module = apply_weight_norm(nn.Linear(3, 3), "modern")
    parametrize.register_parametrization(module, "weight", _Scale())
    with pytest.raises(wnaudit.FoldError, match="stacked"):
        wnaudit.fold_weight_norm(module)
    assert parametrize.is_parametrized(module, "weight")
    assert len(module.parametrizations.weight) == 2


def test_weight_norm_stacked_with_another_parametrization_folds_whole_on_request():
    torch.manual_seed(5)
    module = apply_weight_norm(nn.Linear(3, 3), "modern")
    perturb_magnitudes(module)
    parametrize.register_parametrization(module, "weight", _Scale())
    expected = module.weight.detach().clone()
    finding = wnaudit.audit_module(module)[0]
    assert finding.code == "WN201" and "stacked" in finding.message
    assert wnaudit.fold(module, other=True) == ["weight"]
    assert torch.equal(module.weight, expected)
    assert type(module) is nn.Linear


def test_fold_inside_cached_is_refused():
    module = apply_weight_norm(nn.Linear(3, 3), "modern")
    with parametrize.cached():
        _ = module.weight
        with pytest.raises(wnaudit.FoldError, match="cached"):
            wnaudit.fold_weight_norm(module)
    assert parametrize.is_parametrized(module, "weight")
    assert wnaudit.fold_weight_norm(module) == ["weight"]


def test_other_parametrizations_fold_only_on_request():
    module = nn.Linear(3, 3)
    parametrize.register_parametrization(module, "weight", _Scale())
    assert wnaudit.fold_weight_norm(module) == []
    assert [f.code for f in wnaudit.audit_module(module)] == ["WN204"]
    expected = module.weight.detach().clone()
    assert wnaudit.fold(module, weight_norm=False, other=True) == ["weight"]
    assert torch.equal(module.weight, expected)
