"""Weight-normed building blocks of the codec."""

import torch.nn as nn
from torch.nn.utils import parametrizations


def WNConv1d(*args, **kwargs) -> nn.Conv1d:
    return parametrizations.weight_norm(nn.Conv1d(*args, **kwargs))


class DecoderBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = WNConv1d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + self.conv(nn.functional.elu(x))
