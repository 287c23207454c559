"""HiFT-style neural vocoder: HiFi-GAN upsampler + F0 predictor + iSTFT head.

Modelled on the HiFT generator that CosyVoice (and the serving stacks that
vendor it) ship.  It carries the bug wnaudit exists for: ``weight_norm`` is
taken from ``torch.nn.utils.parametrizations`` whenever torch has it, but
``remove_weight_norm()`` calls the legacy remover, which raises
``ValueError: weight_norm of 'weight' not found`` on such a module, so the
model is never folded for inference.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Conv1d, ConvTranspose1d
from torch.nn.utils import remove_weight_norm

try:
    from torch.nn.utils.parametrizations import weight_norm
except ImportError:  # torch < 2.1
    from torch.nn.utils import weight_norm

LRELU_SLOPE = 0.1


def get_padding(kernel_size: int, dilation: int = 1) -> int:
    return (kernel_size * dilation - dilation) // 2


class ResBlock(nn.Module):
    """Residual block with dilated convolutions (HiFi-GAN type 1)."""

    def __init__(self, channels: int, kernel_size: int = 3, dilations: tuple[int, ...] = (1, 3, 5)) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(
            weight_norm(Conv1d(channels, channels, kernel_size, 1, dilation=d, padding=get_padding(kernel_size, d)))
            for d in dilations
        )
        self.convs2 = nn.ModuleList(
            weight_norm(Conv1d(channels, channels, kernel_size, 1, dilation=1, padding=get_padding(kernel_size, 1)))
            for _ in dilations
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = c1(F.leaky_relu(x, LRELU_SLOPE))
            xt = c2(F.leaky_relu(xt, LRELU_SLOPE))
            x = xt + x
        return x

    def remove_weight_norm(self) -> None:
        for layer in self.convs1:
            remove_weight_norm(layer)
        for layer in self.convs2:
            remove_weight_norm(layer)


class ConvRNNF0Predictor(nn.Module):
    """Predicts a per-frame F0 from the mel spectrogram."""

    def __init__(self, in_channels: int = 80, cond_channels: int = 32, num_layers: int = 2) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for index in range(num_layers):
            layers.append(weight_norm(Conv1d(in_channels if index == 0 else cond_channels, cond_channels, 3, padding=1)))
            layers.append(nn.ELU())
        self.condnet = nn.Sequential(*layers)
        self.classifier = nn.Linear(cond_channels, 1)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        hidden = self.condnet(mel).transpose(1, 2)
        return torch.abs(self.classifier(hidden).squeeze(-1))


class HiFTGenerator(nn.Module):
    """Mel spectrogram -> waveform through upsampling and an inverse STFT."""

    def __init__(
        self,
        in_channels: int = 80,
        base_channels: int = 64,
        upsample_rates: tuple[int, ...] = (4, 4),
        upsample_kernel_sizes: tuple[int, ...] = (8, 8),
        n_fft: int = 16,
        hop_length: int = 4,
    ) -> None:
        super().__init__()
        self.n_fft, self.hop_length = n_fft, hop_length
        self.f0_predictor = ConvRNNF0Predictor(in_channels)
        self.conv_pre = weight_norm(Conv1d(in_channels + 1, base_channels, 7, 1, padding=3))
        self.ups = nn.ModuleList()
        channels = base_channels
        for rate, kernel in zip(upsample_rates, upsample_kernel_sizes):
            self.ups.append(weight_norm(ConvTranspose1d(channels, channels // 2, kernel, rate, padding=(kernel - rate) // 2)))
            channels //= 2
        self.resblocks = nn.ModuleList(ResBlock(base_channels // 2 ** (i + 1)) for i in range(len(self.ups)))
        self.conv_post = weight_norm(Conv1d(channels, n_fft + 2, 7, 1, padding=3))
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        f0 = self.f0_predictor(mel)
        x = self.conv_pre(torch.cat([mel, f0.unsqueeze(1)], dim=1))
        for up, block in zip(self.ups, self.resblocks):
            x = block(up(F.leaky_relu(x, LRELU_SLOPE)))
        x = self.conv_post(F.leaky_relu(x))
        bins = self.n_fft // 2 + 1
        magnitude = torch.exp(x[:, :bins, :]).clamp(max=1e2)
        phase = torch.sin(x[:, bins:, :])
        spectrum = torch.complex(magnitude * torch.cos(phase), magnitude * torch.sin(phase))
        return torch.istft(spectrum, self.n_fft, self.hop_length, self.n_fft, window=self.window)

    def remove_weight_norm(self) -> None:
        """Fold every weight norm for inference."""
        for layer in self.ups:
            remove_weight_norm(layer)
        for block in self.resblocks:
            block.remove_weight_norm()
        remove_weight_norm(self.conv_pre)
        remove_weight_norm(self.conv_post)
        for layer in self.f0_predictor.condnet:
            if isinstance(layer, Conv1d):
                remove_weight_norm(layer)
