"""WN110's examples for weight norm a constructor parameter guards: applied only if a construction selects it.

moshi's shape: ``apply_parametrization_norm(conv, norm)`` applies weight norm
for ``norm == "weight_norm"`` only, and the loader builds the encoder with
``**`` of a constant module-level config whose ``"norm"`` is ``"none"``; and
a HiFi-GAN-style ``use_weight_norm`` flag every construction leaves off.
"""

from __future__ import annotations

from .base import LOCAL_FOLD_TEXT, Invalid, Valid

_HEADER = "import torch\nimport torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
_FIXED_HEADER = _HEADER + LOCAL_FOLD_TEXT + "\n\n"
_ENCODER = (
    'def apply_norm(module, norm="none"):\n'
    '    if norm == "weight_norm":\n'
    "        return weight_norm(module)\n"
    "    return module\n\n\n"
    "class Encoder(nn.Module):\n"
    '    def __init__(self, channels=1, norm="none"):\n'
    "        super().__init__()\n"
    "        self.conv = apply_norm(nn.Conv1d(channels, 4, 7, padding=3), norm)\n\n"
    "    def forward(self, x):\n"
    "        return self.conv(x)\n\n\n"
)
_CONFIG = 'CONFIG = {{"encoder": {{"channels": 1, "norm": "{norm}"}}}}\n\n\n'
_LOAD = (
    "def load(path):\n    model = Encoder(**CONFIG[\"encoder\"])\n"
    "    model.load_state_dict(torch.load(path, weights_only=True))\n    model.eval()\n{fold}    return model\n"
)
_FLAGGED = (
    "class Block(nn.Module):\n"
    "    def __init__(self, use_weight_norm=False):\n"
    "        super().__init__()\n"
    "        self.conv = nn.Conv1d(4, 4, 3, padding=1)\n"
    "        if use_weight_norm:\n"
    "            self.conv = weight_norm(self.conv)\n\n"
    "    def forward(self, x):\n"
    "        return self.conv(x)\n\n\n"
    "def serve(x):\n"
    "    model = Block(use_weight_norm=False).eval()\n"
    "    with torch.no_grad():\n"
    "        return model(x)\n"
)

VALID = (
    # Every construction passes "none" (here ``**`` of a constant module-level dict): no weight norm is applied.
    Valid(_HEADER + _ENCODER + _CONFIG.format(norm="none") + _LOAD.format(fold="")),
    # A flag every construction leaves off.
    Valid(_HEADER + _FLAGGED),
)
INVALID = (
    # The same loader with "weight_norm" in its config: applied and served unfolded.
    Invalid(
        _HEADER + _ENCODER + _CONFIG.format(norm="weight_norm") + _LOAD.format(fold=""),
        _FIXED_HEADER + _ENCODER + _CONFIG.format(norm="weight_norm") + _LOAD.format(fold="    _fold_weight_norm_for_inference(model)\n"),
    ),
)
