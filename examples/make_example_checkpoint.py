"""Write the small example checkpoints in ``examples/checkpoints/`` (deterministic).

They store a HiFi-GAN-style test vocoder with its weight norms unfolded, the
way training code saves them:

* ``g_00100000``: a HiFi-GAN generator checkpoint (``{"generator": ..., "steps": ...}``,
  legacy ``weight_g``/``weight_v`` keys, no file extension);
* ``vocoder.safetensors``: the modern spelling (``parametrizations.weight.original0/1``)
  with safetensors metadata.

Try: ``wnaudit examples/checkpoints`` then ``wnaudit --fix -o /tmp/g.pt examples/checkpoints/g_00100000``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import torch
from safetensors.torch import save_file

from wnaudit.testing.vocoder import VocoderConfig, build_vocoder

#: Small enough to keep each file well under 200 KB, with every layer kind of the full model.
EXAMPLE_CONFIG = VocoderConfig(
    mel_channels=16,
    channels=16,
    upsample_rates=(4, 2),
    upsample_kernels=(8, 4),
    resblock_kernels=(3,),
    resblock_dilations=((1, 3),),
    f0_channels=8,
    f0_layers=2,
)


def main(directory: Path = Path(__file__).resolve().parent / "checkpoints") -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        legacy = build_vocoder("legacy", seed=0, config=EXAMPLE_CONFIG)
    modern = build_vocoder("modern", seed=0, config=EXAMPLE_CONFIG)
    hifigan = directory / "g_00100000"
    torch.save({"generator": legacy.state_dict(), "steps": 100000, "epoch": 42}, hifigan)
    safetensors = directory / "vocoder.safetensors"
    save_file(
        {key: value.contiguous() for key, value in modern.state_dict().items()},
        safetensors,
        metadata={"format": "pt", "model": "wnaudit example vocoder"},
    )
    return [hifigan, safetensors]


if __name__ == "__main__":
    for path in main():
        print(f"wrote {path} ({path.stat().st_size} bytes)")
