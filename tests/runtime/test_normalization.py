"""WN207: a parameter normalized by hand on every call (EDM2-style), and only what is computed from parameters alone."""

from __future__ import annotations

import copy

import pytest
import torch
from runtime_helpers import GRAD_MODES, MPConv, NormalizedLinear
from torch import nn
from torch.nn import functional as F

import wnaudit


def _watched(model: nn.Module, x: torch.Tensor, mode: str = "no_grad", calls: int = 1) -> list[wnaudit.Finding]:
    twin = copy.deepcopy(model)  # a spectral norm in training mode changes its state on every call
    with GRAD_MODES[mode]():
        expected = [twin(x) for _ in range(calls)]
        with wnaudit.watch(model) as watched:
            outputs = [model(x) for _ in range(calls)]
    assert all(torch.equal(out, want) for out, want in zip(outputs, expected))
    return watched.findings


@pytest.mark.parametrize("mode", sorted(GRAD_MODES))
def test_an_edm2_magnitude_preserving_convolution(mode: str):
    model = nn.Sequential(nn.Conv1d(4, 4, 1), MPConv(4, 6, 3)).eval()
    [found] = _watched(model, torch.randn(1, 4, 7), mode, calls=2)
    assert (found.code, found.object, found.fixable) == ("WN207", "1.weight", False)
    assert "linalg_vector_norm" in found.message and "2 times" in found.message and "MPConv" in found.message


@pytest.mark.parametrize("mode", sorted(GRAD_MODES))
def test_f_normalize_into_a_linear_layer(mode: str):
    [found] = _watched(nn.Sequential(NormalizedLinear(5)).eval(), torch.randn(2, 5), mode)
    assert (found.code, found.object) == ("WN207", "0.weight")
    assert "norm ->" in found.message


class _InputScaled(nn.Module):
    """A weight that depends on the input: recomputing it on every call is the point."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight * x.mean()
        return F.conv1d(x, w / torch.linalg.vector_norm(w, dim=[1, 2], keepdim=True), padding=1)


class _MixedInPlace(nn.Module):
    """Normalized from parameters, then changed in place by the input: not from parameters alone any more."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = F.normalize(self.weight, dim=0)
        w.add_(x.mean())
        return F.conv1d(x, w, padding=1)


class _BufferScaled(nn.Module):
    """A weight divided by a buffer (running statistics): not a parameter alone."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4, 3))
        self.register_buffer("scale", torch.rand(4, 1, 1) + 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv1d(x, F.normalize(self.weight * self.scale, dim=0), padding=1)


class _NormNotAWeight(nn.Module):
    """A norm of a parameter that feeds the activations, not a layer's weight, and an input normalized."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3, padding=1)
        self.gain = nn.Parameter(torch.randn(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.normalize(x, dim=1)) * torch.linalg.vector_norm(self.gain)


@pytest.mark.parametrize("module", [_InputScaled, _MixedInPlace, _BufferScaled, _NormNotAWeight])
@pytest.mark.parametrize("mode", ["grad", "inference_mode"])
def test_what_is_not_from_parameters_alone_is_not_reported(module: type, mode: str):
    assert _watched(module().eval(), torch.randn(1, 4, 6), mode) == []


@pytest.mark.parametrize("dim", [1, None])
def test_norms_inside_a_catalogued_reparametrization_are_wn206_only(dim: int | None):
    """Weight norm over dim 1 or None decomposes into norm/div/mul on g and v: WN206's, not a WN207 too."""
    model = nn.Sequential(nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 4, 3), dim=dim),
                          nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4)))
    for training in (True, False):
        findings = _watched(model.train(training), torch.randn(1, 4, 6), "grad")
        assert [(f.code, f.object) for f in findings] == [("WN206", "0.weight"), ("WN206", "1.weight")]


def test_a_normalized_weight_computed_once_at_load_is_clean():
    model = MPConv(4, 4, 3).eval()
    with torch.no_grad():
        w = model.weight
        model.weight = nn.Parameter(w / torch.linalg.vector_norm(w, dim=[1, 2], keepdim=True))

    def forward(x: torch.Tensor) -> torch.Tensor:
        return F.conv1d(x, model.weight, padding=1)

    with wnaudit.watch(model) as watched:
        forward(torch.randn(1, 4, 6))
    assert watched.findings == []
