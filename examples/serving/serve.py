"""Serving the example vocoder: eval mode and inference_mode, but the vocoder is never folded."""

import torch
import wnaudit

from .vocoder import Denoiser, Vocoder


def load_vocoder(path=None) -> Vocoder:
    vocoder = Vocoder()
    if path is not None:
        vocoder.load_state_dict(torch.load(path, weights_only=True))
    return vocoder.eval()


def load_denoiser() -> Denoiser:
    denoiser = Denoiser()
    wnaudit.fold_weight_norm(denoiser)
    return denoiser.eval()


@torch.inference_mode()
def synthesize(mel: torch.Tensor) -> torch.Tensor:
    return load_denoiser()(load_vocoder()(mel))
