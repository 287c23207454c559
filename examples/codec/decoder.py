"""The codec decoder: reuses the blocks from layers.py and folds them for export."""

import torch.nn as nn
import torch.nn.utils as U

from .layers import DecoderBlock


class Decoder(nn.Module):
    def __init__(self, channels: int = 8, depth: int = 2) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(DecoderBlock(channels) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x

    def remove_weight_norm(self) -> None:
        for block in self.blocks:
            U.remove_weight_norm(block.conv)
