"""A small vocoder for the serving example: weight norm at construction, and a correct fold method."""

import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class Vocoder(nn.Module):
    def __init__(self, mels: int = 80, channels: int = 32) -> None:
        super().__init__()
        self.pre = weight_norm(nn.Conv1d(mels, channels, 7, padding=3))
        self.post = weight_norm(nn.Conv1d(channels, 1, 7, padding=3))

    def forward(self, mel):
        return self.post(nn.functional.leaky_relu(self.pre(mel), 0.1)).tanh()

    def remove_weight_norm(self) -> None:
        """Correct, but nothing on the serving path calls it."""
        for conv in (self.pre, self.post):
            remove_parametrizations(conv, "weight")


class Denoiser(nn.Module):
    """Served too, and folded on its way: WN110 stays silent about it."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(1, 1, 5, padding=2))

    def forward(self, audio):
        return audio - 0.1 * self.conv(audio)
