"""The live fold's regressions: deepcopies, pruning, failures mid-fold, training-mode parametrizations, WN205 names."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
from torch import nn
from torch.nn.utils import parametrizations, parametrize, prune
from torch.optim.swa_utils import AveragedModel

import wnaudit
from wnaudit.core import module_fold
from wnaudit.testing.vocoder import MEDIUM, build_vocoder, example_input
from core_helpers import perturb_magnitudes


# --------------------------------------------------------------------------
# 1. deepcopies share torch's generated Parametrized* class
# --------------------------------------------------------------------------


def test_folding_one_deepcopy_leaves_the_other_working():
    torch.manual_seed(0)
    original = parametrizations.weight_norm(nn.Conv1d(4, 4, 3))
    perturb_magnitudes(original)
    copied = copy.deepcopy(original)
    assert type(copied) is type(original)  # torch shares the generated class
    x = torch.randn(1, 4, 9)
    expected = original(x).detach()
    wnaudit.fold_weight_norm(copied)
    assert torch.equal(original(x), expected)  # raised AttributeError: no attribute 'weight'
    assert torch.equal(copied(x), expected)
    assert parametrize.is_parametrized(original, "weight")
    assert wnaudit.fold_weight_norm(original) == ["weight"]
    assert torch.equal(original(x), expected)


def test_partial_fold_of_a_deepcopy_does_not_touch_the_shared_class():
    # weight norm on weight, an unrequested parametrization on bias: the module
    # stays parametrized, so its class keeps a property for bias only.
    original = parametrizations.weight_norm(nn.Linear(3, 3))
    parametrize.register_parametrization(original, "bias", _Double())
    copied = copy.deepcopy(original)
    shared = type(original)
    x = torch.randn(2, 3)
    expected = original(x).detach()
    assert wnaudit.fold_weight_norm(copied) == ["weight"]
    assert "weight" in vars(shared) and type(original) is shared
    assert torch.equal(original(x), expected)
    assert torch.equal(copied(x), expected)
    assert isinstance(copied, nn.Linear) and "weight" not in vars(type(copied))
    assert parametrize.is_parametrized(copied, "bias") and not parametrize.is_parametrized(copied, "weight")
    assert wnaudit.fold(copied, weight_norm=False, other=True) == ["bias"]
    assert type(copied) is nn.Linear


def test_averaged_model_ema_copy_survives_folding_the_model():
    # (torch cannot deepcopy a legacy weight-normed model: its computed weight is not a leaf)
    model = build_vocoder("modern")
    ema = AveragedModel(model)
    x = example_input(8)
    expected = ema(x).detach()
    wnaudit.fold_weight_norm(model)
    assert torch.equal(ema(x), expected)
    assert torch.equal(model(x), expected)
    wnaudit.fold_weight_norm(ema)
    assert torch.equal(ema(x), expected)
    wnaudit.assert_folded(ema)


class _Double(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


# --------------------------------------------------------------------------
# 7. pruning plus legacy weight norm, and any failure mid-fold
# --------------------------------------------------------------------------


def _legacy(module: nn.Module) -> nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return nn.utils.weight_norm(module)


def _fingerprint(model: nn.Module) -> list:
    """Everything a fold may touch, by identity and order: classes, tables, hooks, attributes."""
    rows = []
    for name, module in model.named_modules(remove_duplicate=False):
        tables = {key: list(value.items()) if isinstance(value, dict) else sorted(value) for key, value in vars(module).items() if isinstance(value, (dict, set))}
        plain = {key: value for key, value in vars(module).items() if not isinstance(value, (dict, set))}
        rows.append((name, type(module), type(module).__dict__.copy(), tables, plain))
    return rows


def test_pruned_legacy_weight_norm_is_refused_and_left_untouched():
    torch.manual_seed(0)
    model = nn.Sequential(_legacy(nn.Conv1d(4, 4, 3)), _legacy(nn.Conv1d(4, 4, 3)))
    prune.l1_unstructured(model[1], "weight_v", amount=0.3)
    x = torch.randn(1, 4, 12)
    expected = model(x).detach()
    before = _fingerprint(model)
    with pytest.raises(wnaudit.FoldError, match=r"1\.weight_v .*prune\.remove"):
        wnaudit.fold_weight_norm(model)  # raised KeyError after removing the hook and weight_g
    assert _fingerprint(model) == before
    assert torch.equal(model(x), expected)
    prune.remove(model[1], "weight_v")
    expected = model(x).detach()
    assert wnaudit.fold_weight_norm(model) == ["0.weight", "1.weight"]
    assert torch.equal(model(x), expected)


class _Boom(RuntimeError):
    pass


def _fail_compute_at(owner: nn.Module, spelling: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make computing this owner's folded weight raise, as a broken parametrization would."""
    if spelling == "modern":
        monkeypatch.setattr(owner.parametrizations.weight, "forward", lambda *a: (_ for _ in ()).throw(_Boom()))
    else:
        hook = next(h for h in owner._forward_pre_hooks.values() if hasattr(h, "compute_weight"))
        monkeypatch.setattr(hook, "compute_weight", lambda module: (_ for _ in ()).throw(_Boom()))


@pytest.fixture
def one_thread():
    """Hundreds of small folds: intra-op threads only contend with each other here."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_a_failure_at_any_module_leaves_the_whole_vocoder_untouched(spelling, monkeypatch, one_thread):
    """Inject a failure in the compute phase and in the swap phase at every weight-normed module."""
    model = build_vocoder(spelling, config=MEDIUM)
    x = example_input(2, MEDIUM)
    expected = model(x).detach()
    before = _fingerprint(model)
    owners = [live.owner for live in module_fold.find_reparametrizations(model)]
    assert len(owners) > 60
    real_register = nn.Module.register_parameter
    for index, owner in enumerate(owners):
        with monkeypatch.context() as patch:
            _fail_compute_at(owner, spelling, patch)
            with pytest.raises(_Boom):
                wnaudit.fold_weight_norm(model)
        assert _fingerprint(model) == before, f"compute failure at module {index} changed the model"

        def failing_register(self, name, value, _owner=owner):
            if self is _owner:
                raise _Boom(f"swap failure at module {index}")
            return real_register(self, name, value)

        with monkeypatch.context() as patch:
            patch.setattr(nn.Module, "register_parameter", failing_register)
            with pytest.raises(_Boom):
                wnaudit.fold_weight_norm(model)
        assert _fingerprint(model) == before, f"swap failure at module {index} changed the model"
    assert torch.equal(model(x), expected)
    assert len(wnaudit.fold_weight_norm(model)) == len(owners)
    assert torch.equal(model(x), expected)


# --------------------------------------------------------------------------
# 9. fold(..., other=True) of a training-mode-dependent parametrization
# --------------------------------------------------------------------------


class _ModeScale(nn.Module):
    """Doubles in training, triples in eval: a stand-in for dropout-like parametrizations."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * (2.0 if self.training else 3.0)


def test_other_parametrization_folds_to_its_eval_mode_value_whatever_the_mode():
    module = nn.Linear(3, 3)
    parametrize.register_parametrization(module, "weight", _ModeScale())
    original = module.parametrizations.weight.original.detach().clone()
    module.train()
    assert torch.equal(module.weight, original * 2.0)
    assert wnaudit.fold(module, weight_norm=False, other=True) == ["weight"]
    assert torch.equal(module.weight, original * 3.0)
    assert module.training  # the module's own mode is left as it was


# --------------------------------------------------------------------------
# 8. WN205 under names torch's modules use that do not look like "weight"
# --------------------------------------------------------------------------


def test_buffer_left_by_torch_remover_under_no_grad_is_reported_for_in_proj_weight():
    mha = nn.MultiheadAttention(8, 2)
    parametrizations.weight_norm(mha, "in_proj_weight")
    with torch.no_grad():
        parametrize.remove_parametrizations(mha, "in_proj_weight")
    assert "in_proj_weight" in dict(mha.named_buffers())
    assert [(f.code, f.object) for f in wnaudit.audit_module(mha)] == [("WN205", "in_proj_weight")]


def test_wnaudit_fold_of_in_proj_weight_is_clean():
    mha = nn.MultiheadAttention(8, 2)
    parametrizations.weight_norm(mha, "in_proj_weight")
    with torch.no_grad():
        assert wnaudit.fold_weight_norm(mha) == ["in_proj_weight"]
    assert wnaudit.audit_module(mha) == []


def test_ordinary_buffers_of_torch_modules_are_not_reported():
    model = nn.Sequential(nn.BatchNorm1d(4), nn.MultiheadAttention(8, 2))
    assert wnaudit.audit_module(model) == []


def test_pruning_and_spectral_norm_buffers_are_not_leftovers():
    conv = nn.utils.spectral_norm(nn.Conv1d(4, 4, 3))
    pruned = nn.Linear(3, 3)
    prune.l1_unstructured(pruned, "weight", amount=0.5)
    assert [f.code for f in wnaudit.audit_module(nn.Sequential(conv, pruned))] == ["WN203"]


def test_docs_say_what_other_true_folds():
    """Regression: the docs said "as it computes now" while the fold used eval mode."""
    from pathlib import Path

    api = (Path(__file__).resolve().parents[2] / "docs" / "python-api.md").read_text(encoding="utf-8")
    fold_section = api.split("## `fold(module", 1)[1].split("\n## ", 1)[0]
    assert "as it computes now" not in fold_section
    assert "in eval mode" in fold_section


def test_folded_load_hint_points_to_the_load_contract():
    from wnaudit.core.catalogue import FOLDED_LOAD_HINT

    assert "wnaudit.load_state_dict(model, state_dict)" in FOLDED_LOAD_HINT
