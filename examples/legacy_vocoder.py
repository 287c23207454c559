"""A vocoder that only ever uses the legacy weight norm (hook-based).

Its removals are correct (WN101 stays quiet), but applying the deprecated
legacy ``weight_norm`` is reported as WN103; ``wnaudit --fix`` migrates the
applications and the removals together, so the file keeps folding.
"""

import torch.nn as nn
from torch.nn.utils import remove_weight_norm, weight_norm


class Upsampler(nn.Module):
    def __init__(self, channels: int = 16) -> None:
        super().__init__()
        self.conv_pre = weight_norm(nn.Conv1d(8, channels, 7, padding=3))
        self.up = weight_norm(nn.ConvTranspose1d(channels, channels // 2, 4, 2, padding=1))

    def forward(self, x):
        return self.up(nn.functional.leaky_relu(self.conv_pre(x), 0.1))

    def remove_weight_norm(self) -> None:
        remove_weight_norm(self.conv_pre)
        remove_weight_norm(self.up, name="weight")
