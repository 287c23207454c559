"""Spectral norm: reported, folded only on request, eval-mode semantics, never perturbed."""

from __future__ import annotations


import pytest
import torch
from torch import nn
from torch.nn.utils import parametrizations

import wnaudit


def _modern(module: nn.Module) -> nn.Module:
    return parametrizations.spectral_norm(module)


def _legacy(module: nn.Module) -> nn.Module:
    return nn.utils.spectral_norm(module)


def _state(module: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("apply", [_modern, _legacy], ids=["modern", "legacy"])
def test_audit_never_runs_a_power_iteration(apply):
    torch.manual_seed(0)
    module = apply(nn.Conv1d(4, 5, 3)).train()
    before = _state(module)
    findings = wnaudit.audit_module(module)
    assert [f.code for f in findings] == ["WN203"]
    after = module.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("apply", [_modern, _legacy], ids=["modern", "legacy"])
@pytest.mark.parametrize("layer", [lambda: nn.Conv1d(4, 5, 3), lambda: nn.ConvTranspose1d(4, 5, 3), lambda: nn.Linear(6, 3)])
def test_spectral_fold_on_request_uses_eval_semantics(apply, layer):
    torch.manual_seed(1)
    module = apply(layer())
    x = torch.randn(2, 4, 7) if not isinstance(module, nn.Linear) else torch.randn(2, 6)
    module.train()
    module(x)  # a few power iterations, as in training
    module(x)
    module.eval()
    with torch.no_grad():
        expected = module.weight.detach().clone()
        expected_out = module(x)
    module.train()  # the fold must still use eval semantics
    assert wnaudit.fold_weight_norm(module) == []
    assert wnaudit.fold(module, weight_norm=False, spectral_norm=True) == ["weight"]
    assert torch.equal(module.weight, expected)
    assert isinstance(module.weight, nn.Parameter)
    assert torch.equal(module.eval()(x), expected_out)
    assert wnaudit.audit_module(module) == []
    assert sorted(module.state_dict()) == ["bias", "weight"]
    assert not module._state_dict_hooks and not module._load_state_dict_pre_hooks
