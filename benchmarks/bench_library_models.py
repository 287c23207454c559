"""No-argument factories of real library architectures for ``wnaudit bench``.

Each builds the model from its default config with seeded random weights:
nothing is downloaded.  Needs ``transformers`` (not a wnaudit dependency):

    wnaudit bench benchmarks/bench_library_models.py:build_encodec --input-shape 1,1,24000
"""

from __future__ import annotations

import torch


def build_encodec() -> torch.nn.Module:
    """EnCodec 24 kHz (encoder, RVQ, decoder): every convolution weight-normed at construction."""
    from transformers import EncodecConfig, EncodecModel

    torch.manual_seed(0)
    return EncodecModel(EncodecConfig()).eval()


def build_speecht5_hifigan_training() -> torch.nn.Module:
    """SpeechT5's HiFi-GAN with weight norm applied, as a generator restored from training is.

    ``SpeechT5HifiGan`` is built without weight norm; its ``apply_weight_norm()``
    is what training code calls, and what a checkpoint saved mid-training carries.
    """
    from transformers import SpeechT5HifiGan, SpeechT5HifiGanConfig

    torch.manual_seed(0)
    model = SpeechT5HifiGan(SpeechT5HifiGanConfig())
    model.apply_weight_norm()
    return model.eval()


def build_speecht5_hifigan() -> torch.nn.Module:
    """SpeechT5's HiFi-GAN as transformers constructs it for inference: no weight norm.

    Nothing to fold, so the two arms run the same computation: a calibration
    case whose true saving is exactly zero.
    """
    from transformers import SpeechT5HifiGan, SpeechT5HifiGanConfig

    torch.manual_seed(0)
    return SpeechT5HifiGan(SpeechT5HifiGanConfig()).eval()
