"""CI, the porting scenario's last steps, run in a copy of ``examples/`` after ``wnaudit --fix --unsafe-fixes``.

Uses only what README command 1 installed (``.[torch]``): the served example
imports and runs, now folded; each folded checkpoint loads with
``wnaudit.load_state_dict`` into the model that wrote it and computes what the
unfolded checkpoint computed.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from safetensors.torch import load_file

import wnaudit
from wnaudit.testing.vocoder import build_vocoder

sys.path.insert(0, str(Path.cwd()))
from make_example_checkpoint import EXAMPLE_CONFIG  # noqa: E402  (the copy's own examples)
from serving.serve import load_vocoder, synthesize  # noqa: E402


def check_served_example() -> None:
    audio = synthesize(torch.randn(1, 80, 16))
    assert audio.shape == (1, 1, 16), audio.shape
    wnaudit.assert_folded(load_vocoder())  # the fix put the fold on the serving path


def check_checkpoint(spelling: str, state_dict: dict[str, torch.Tensor]) -> None:
    """The folded file into a freshly built (still parametrized) model: folded, and the same output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the legacy spelling is deprecated in torch
        reference = build_vocoder(spelling, seed=0, config=EXAMPLE_CONFIG)  # the weights the example was saved with
        model = build_vocoder(spelling, seed=1, config=EXAMPLE_CONFIG)
    assert not any(key.endswith(("_g", "_v", "original0", "original1")) for key in state_dict), "not folded on disk"
    wnaudit.load_state_dict(model, state_dict)
    wnaudit.assert_folded(model)
    mel = torch.randn(1, EXAMPLE_CONFIG.mel_channels, 8, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        assert torch.equal(model(mel), reference(mel)), f"{spelling}: the folded checkpoint computes something else"


def main() -> None:
    check_served_example()
    check_checkpoint("modern", load_file("checkpoints/vocoder.safetensors"))
    check_checkpoint("legacy", torch.load("checkpoints/g_00100000", weights_only=True)["generator"])
    print("porting scenario: served example runs folded; both folded checkpoints load with wnaudit.load_state_dict")


if __name__ == "__main__":
    main()
