"""A HiFi-GAN / HiFT-style vocoder, buildable with either weight-norm spelling or none.

Architecture as in the vocoders wnaudit was made for: a weight-normed input
convolution, weight-normed ``ConvTranspose1d`` upsamplers, multi-receptive-field
residual blocks of dilated convolutions, a small F0 predictor (HiFT's
conv stack plus a linear head) and an output convolution.  Every convolution
is weight-normed, so the expected number of weight norms is known exactly
(:func:`expected_weight_norms`).

Usage from the command line: ``wnaudit bench wnaudit.testing.vocoder:build_vocoder``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import torch
from torch import nn
from torch.nn import functional as F

Spelling = Literal["modern", "legacy", None]


@dataclass(frozen=True)
class VocoderConfig:
    mel_channels: int = 80
    channels: int = 64
    upsample_rates: Sequence[int] = (4, 4)
    upsample_kernels: Sequence[int] = (8, 8)
    resblock_kernels: Sequence[int] = (3, 7)
    resblock_dilations: Sequence[Sequence[int]] = ((1, 3, 5), (1, 3, 5))
    f0_channels: int = 32
    f0_layers: int = 3


#: Test-sized (fast on a CPU) and serving-sized (HiFi-GAN V2-like) configurations.
SMALL = VocoderConfig()
MEDIUM = VocoderConfig(
    channels=128,
    upsample_rates=(8, 8, 2, 2),
    upsample_kernels=(16, 16, 4, 4),
    resblock_kernels=(3, 7, 11),
    resblock_dilations=((1, 3, 5), (1, 3, 5), (1, 3, 5)),
    f0_channels=64,
    f0_layers=5,
)


def weight_norm_function(spelling: Spelling) -> Callable[[nn.Module], nn.Module]:
    """The weight-norm applier for a spelling (identity for ``None``)."""
    if spelling == "modern":
        return nn.utils.parametrizations.weight_norm
    if spelling == "legacy":

        def legacy(module: nn.Module) -> nn.Module:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                return nn.utils.weight_norm(module)

        return legacy
    if spelling is None:
        return lambda module: module
    raise ValueError(f"unknown weight-norm spelling {spelling!r}")


class ResBlock(nn.Module):
    """HiFi-GAN ResBlock1: pairs of dilated and plain convolutions with residuals."""

    def __init__(self, channels: int, kernel: int, dilations: Sequence[int], wn: Callable[[nn.Module], nn.Module]):
        super().__init__()
        self.convs1 = nn.ModuleList(
            wn(nn.Conv1d(channels, channels, kernel, dilation=d, padding=d * (kernel - 1) // 2)) for d in dilations
        )
        self.convs2 = nn.ModuleList(
            wn(nn.Conv1d(channels, channels, kernel, padding=(kernel - 1) // 2)) for _ in dilations
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = c2(F.leaky_relu(c1(F.leaky_relu(x, 0.1)), 0.1))
            x = xt + x
        return x


class F0Predictor(nn.Module):
    """HiFT's ConvRNNF0Predictor, reduced: weight-normed conv stack and a linear head."""

    def __init__(self, in_channels: int, channels: int, layers: int, wn: Callable[[nn.Module], nn.Module]):
        super().__init__()
        convs: list[nn.Module] = []
        for index in range(layers):
            convs += [wn(nn.Conv1d(in_channels if index == 0 else channels, channels, 3, padding=1)), nn.ELU()]
        self.condnet = nn.Sequential(*convs)
        self.classifier = nn.Linear(channels, 1)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        hidden = self.condnet(mel).transpose(1, 2)
        return torch.abs(self.classifier(hidden).squeeze(-1))


class Vocoder(nn.Module):
    """Mel spectrogram (batch, mel, frames) -> waveform (batch, 1, frames * hop)."""

    def __init__(self, config: VocoderConfig = SMALL, weight_norm: Spelling = "modern"):
        super().__init__()
        wn = weight_norm_function(weight_norm)
        self.config = config
        self.f0_predictor = F0Predictor(config.mel_channels, config.f0_channels, config.f0_layers, wn)
        self.conv_pre = wn(nn.Conv1d(config.mel_channels + 1, config.channels, 7, padding=3))
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        channels = config.channels
        for rate, kernel in zip(config.upsample_rates, config.upsample_kernels):
            self.ups.append(
                wn(nn.ConvTranspose1d(channels, channels // 2, kernel, stride=rate, padding=(kernel - rate) // 2))
            )
            channels //= 2
            for res_kernel, dilations in zip(config.resblock_kernels, config.resblock_dilations):
                self.resblocks.append(ResBlock(channels, res_kernel, dilations, wn))
        self.conv_post = wn(nn.Conv1d(channels, 1, 7, padding=3))

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        f0 = self.f0_predictor(mel).unsqueeze(1)
        x = self.conv_pre(torch.cat([mel, torch.log1p(f0)], dim=1))
        per_level = len(self.config.resblock_kernels)
        for level, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, 0.1))
            blocks = self.resblocks[level * per_level : (level + 1) * per_level]
            x = sum(block(x) for block in blocks) / per_level
        return torch.tanh(self.conv_post(F.leaky_relu(x)))


def expected_weight_norms(config: VocoderConfig = SMALL) -> int:
    """How many weight norms a vocoder built with this config carries."""
    per_level = sum(2 * len(d) for d in config.resblock_dilations[: len(config.resblock_kernels)])
    return config.f0_layers + 1 + len(config.upsample_rates) * (1 + per_level) + 1


def build_vocoder(weight_norm: Spelling = "modern", seed: int = 0, config: VocoderConfig = SMALL) -> Vocoder:
    """Build a vocoder with deterministic random weights, in eval mode.

    The weight-norm magnitudes are perturbed away from ``||v||`` so that a fold
    which ignored ``g`` would be caught.
    """
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = Vocoder(config, weight_norm)
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if name.endswith(("original0", "weight_g")):
                    parameter.mul_(torch.empty_like(parameter).uniform_(0.5, 1.5))
    finally:
        torch.random.set_rng_state(generator_state)
    return model.eval()


def build_medium_vocoder(weight_norm: Spelling = "modern", seed: int = 0) -> Vocoder:
    """The serving-sized (MEDIUM) vocoder, as a no-argument factory for ``wnaudit bench``."""
    return build_vocoder(weight_norm, seed, MEDIUM)


def example_input(frames: int = 32, config: VocoderConfig = SMALL, seed: int = 1) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(1, config.mel_channels, frames, generator=generator)
