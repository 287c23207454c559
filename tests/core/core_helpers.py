"""Builders shared by the fold-core tests: real layers with either weight-norm spelling."""

from __future__ import annotations

import warnings
from typing import Callable

import torch
from torch import nn
from torch.nn.utils import parametrizations, parametrize


def apply_weight_norm(module: nn.Module, spelling: str, name: str = "weight", dim: int | None = 0) -> nn.Module:
    if spelling == "modern":
        return parametrizations.weight_norm(module, name=name, dim=dim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return nn.utils.weight_norm(module, name=name, dim=dim)


def effective_weight(module: nn.Module, name: str = "weight") -> torch.Tensor:
    """The weight the module computes in its forward, by torch's own code path."""
    if parametrize.is_parametrized(module, name):
        return getattr(module, name).detach().clone()
    for hook in module._forward_pre_hooks.values():
        if getattr(hook, "name", None) == name and hasattr(hook, "compute_weight"):
            return hook.compute_weight(module).detach().clone()
    raise AssertionError(f"{name} is not reparametrized")


def perturb_magnitudes(module: nn.Module) -> None:
    """Move g away from ||v|| so that a fold ignoring g cannot pass."""
    with torch.no_grad():
        for pname, parameter in module.named_parameters():
            if pname.endswith(("original0", "_g")):
                parameter.mul_(torch.linspace(0.5, 1.5, parameter.numel()).reshape(parameter.shape).to(parameter.dtype))


class Kernel(nn.Module):
    """A user's own module with an unusual parameter name."""

    def __init__(self) -> None:
        super().__init__()
        self.kernel = nn.Parameter(torch.randn(6, 4, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.conv1d(x, self.kernel)


#: (label, factory, tensor name, input factory or None, valid dims)
LAYERS: list[tuple[str, Callable[[], nn.Module], str, Callable[[], torch.Tensor] | None, tuple]] = [
    ("conv1d", lambda: nn.Conv1d(4, 6, 3), "weight", lambda: torch.randn(2, 4, 9), (0, 1, 2, None)),
    ("conv2d", lambda: nn.Conv2d(3, 5, (3, 2)), "weight", lambda: torch.randn(1, 3, 6, 5), (0, 1, 2, None)),
    ("conv3d", lambda: nn.Conv3d(2, 3, 2), "weight", lambda: torch.randn(1, 2, 4, 4, 4), (0, 1, None)),
    ("convtranspose1d", lambda: nn.ConvTranspose1d(6, 4, 4, stride=2), "weight", lambda: torch.randn(2, 6, 7), (0, 1, 2, None)),
    ("convtranspose2d", lambda: nn.ConvTranspose2d(3, 2, 3, stride=2), "weight", lambda: torch.randn(1, 3, 4, 4), (0, 1, None)),
    ("linear", lambda: nn.Linear(7, 5), "weight", lambda: torch.randn(3, 7), (0, 1, None)),
    ("embedding", lambda: nn.Embedding(11, 4), "weight", lambda: torch.tensor([[1, 5, 10]]), (0, 1, None)),
    ("lstm_hh", lambda: nn.LSTM(4, 5), "weight_hh_l0", lambda: torch.randn(3, 1, 4), (0, 1, None)),
    ("user_kernel", Kernel, "kernel", lambda: torch.randn(1, 4, 8), (0, 1, 2, None)),
]


def output_of(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    out = module(x)
    return out[0] if isinstance(out, tuple) else out
