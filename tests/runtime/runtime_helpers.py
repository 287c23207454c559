"""Small real modules for the watch's tests: weight-normed layers of every spelling, hand-written norms."""

from __future__ import annotations

import warnings

import torch
from torch import nn
from torch.nn import functional as F

from wnaudit.testing.vocoder import Vocoder, VocoderConfig, build_vocoder, example_input

GRAD_MODES = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}


def legacy_weight_norm(module: nn.Module, **kwargs: object) -> nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return nn.utils.weight_norm(module, **kwargs)  # type: ignore[arg-type]


class MPConv(nn.Module):
    """EDM2's magnitude-preserving convolution: the weight is normalized by hand on every call."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel))

    def forward(self, x: torch.Tensor, gain: float = 1.0) -> torch.Tensor:
        w = self.weight.to(torch.float32)
        norm = torch.linalg.vector_norm(w, dim=[1, 2], keepdim=True, dtype=torch.float32)
        norm = torch.add(1e-4, norm, alpha=(norm.numel() / w.numel()) ** 0.5)
        w = w / norm.to(w.dtype)
        w = w * (gain / w[0].numel() ** 0.5)
        return F.conv1d(x, w.to(x.dtype), padding=w.shape[-1] // 2)


class NormalizedLinear(nn.Module):
    """A linear layer whose rows are normalized by hand (F.normalize) on every call."""

    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features, features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, F.normalize(self.weight, dim=1))


class HandCalledOnCopies(nn.Module):
    """torch's kernel called by hand on copies of the parameters (cast to the input's dtype), and on the input."""

    def __init__(self) -> None:
        super().__init__()
        self.weight_v = nn.Parameter(torch.randn(4, 3, 3, dtype=torch.float64))
        self.weight_g = nn.Parameter(torch.rand(4, 1, 1, dtype=torch.float64) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = torch._weight_norm(self.weight_v.to(x.dtype), self.weight_g.to(x.dtype), 0)
        gate = torch._weight_norm(x, x.abs().amax(dim=(1, 2), keepdim=True), 0)  # depends on the input: not reported
        return F.conv1d(x * gate, weight)


class HandCalledKernel(nn.Module):
    """Weight norm written by hand with torch's own kernel, as some vocoders do."""

    def __init__(self) -> None:
        super().__init__()
        self.weight_v = nn.Parameter(torch.randn(4, 3, 3))
        self.weight_g = nn.Parameter(torch.rand(4, 1, 1) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv1d(x, torch._weight_norm(self.weight_v, self.weight_g, 0))


#: The test vocoder, narrow: every weight norm of the SMALL config (31), at a fraction of its cost.
TINY = VocoderConfig(mel_channels=8, channels=8, f0_channels=4)


def tiny_vocoder(spelling: str | None = "modern") -> Vocoder:
    return build_vocoder(spelling, config=TINY)  # type: ignore[arg-type]


def tiny_input(frames: int = 8) -> torch.Tensor:
    return example_input(frames, TINY)
