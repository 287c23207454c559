"""WN109's examples of removal targets that hold no norm, or hold it deeper, each a small copy of a shape from real code.

Every example ends with the call that runs the removal, so executing it under
torch shows what it does (``tests/source/test_removal_targets.py``): the
INVALID ones raise ``ValueError``, the VALID ones and the fixed texts fold.

- wrapper: ``SConv1d(..., norm="weight_norm")`` -> ``NormConv1d(..., norm=norm)`` ->
  ``apply_parametrization_norm(nn.Conv1d(...), norm)`` (encodec's layers), then a removal on the ``SConv1d``;
- flag: a HiFi-GAN generator whose ``__init__`` removes ``conv_pre``'s norm when built with
  ``conv_pre_weight_norm=False`` and whose ``remove_weight_norm()`` removes it again (XTTS's decoder);
- never normed: ``source_downs`` built of plain ``Conv1d`` and removed one by one (a HiFT generator).
"""

from __future__ import annotations

MODERN_IMPORTS = (
    "import torch.nn as nn\n"
    "from torch.nn.utils.parametrizations import spectral_norm, weight_norm\n"
    "from torch.nn.utils.parametrize import remove_parametrizations\n"
)
LEGACY_IMPORTS = "import torch.nn as nn\nfrom torch.nn.utils import remove_weight_norm, spectral_norm, weight_norm\n"

_LAYERS = (
    "\n\n"
    'def apply_parametrization_norm(module, norm="none"):\n'
    '    if norm == "weight_norm":\n'
    "        return weight_norm(module){noqa}\n"
    '    elif norm == "spectral_norm":\n'
    "        return spectral_norm(module)\n"
    "    return module\n"
    "\n\n"
    "class NormConv1d(nn.Module):\n"
    '    def __init__(self, *args, norm="none", **kwargs):\n'
    "        super().__init__()\n"
    "        self.conv = apply_parametrization_norm(nn.Conv1d(*args, **kwargs), norm)\n"
    "\n"
    "    def forward(self, x):\n"
    "        return self.conv(x)\n"
    "{inner_removal}"
    "\n\n"
    "class SConv1d(nn.Module):\n"
    '    def __init__(self, in_channels, out_channels, kernel_size, stride=1, norm="none"):\n'
    "        super().__init__()\n"
    "        self.conv = NormConv1d(in_channels, out_channels, kernel_size, stride, norm=norm)\n"
    "\n"
    "    def forward(self, x):\n"
    "        return self.conv(x)\n"
    "{outer_removal}"
)
#: Removal methods on the layers themselves: ``SConv1d.remove_weight_norm()`` reaches the conv that holds the norm.
_LAYER_REMOVALS = {
    "inner_removal": '\n    def remove_weight_norm(self):\n        remove_parametrizations(self.conv, "weight")\n',
    "outer_removal": "\n    def remove_weight_norm(self):\n        self.conv.remove_weight_norm()\n",
}


def wrapper(removal: str, norm: str = '"weight_norm"', legacy: bool = False, extra: str = "", methods: bool = False) -> str:
    """A WaveNet block whose ``cond_layer`` is an ``SConv1d`` normed (or not) by the string ``norm``."""
    removals = _LAYER_REMOVALS if methods else {name: "" for name in _LAYER_REMOVALS}
    return (
        (LEGACY_IMPORTS if legacy else MODERN_IMPORTS)
        + _LAYERS.format(noqa="  # noqa: WN103" if legacy else "", **removals)
        + extra
        + "\n\n"
        "class WN(nn.Module):\n"
        "    def __init__(self, hidden=4, gin_channels=2):\n"
        "        super().__init__()\n"
        f"        self.cond_layer = SConv1d(gin_channels, 2 * hidden, 1, norm={norm})\n"
        "\n"
        "    def remove_weight_norm(self):\n"
        f"        {removal}\n"
        "\n\n"
        "WN().remove_weight_norm()\n"
    )


def flag(removal: str, built_with: str, legacy: bool = False, guard: str = "") -> str:
    """A HiFi-GAN generator whose ``__init__`` removes ``conv_pre``'s norm when ``conv_pre_weight_norm`` is off."""
    applier = "weight_norm({})  # noqa: WN103" if legacy else "weight_norm({})"
    first = "remove_weight_norm(self.conv_pre)" if legacy else 'remove_parametrizations(self.conv_pre, "weight")'
    post = "remove_weight_norm(self.conv_post)" if legacy else 'remove_parametrizations(self.conv_post, "weight")'
    body = f"        {removal}\n" if not guard else f"        {guard}\n            {removal}\n"
    if guard == "try:":
        body += "        except ValueError:\n            pass\n"
    return (
        (LEGACY_IMPORTS if legacy else MODERN_IMPORTS)
        + "\n\n"
        "class HifiganGenerator(nn.Module):\n"
        "    def __init__(self, channels=4, conv_pre_weight_norm=True):\n"
        "        super().__init__()\n"
        f"        self.conv_pre = {applier.format('nn.Conv1d(channels, 8, 7, padding=3)')}\n"
        f"        self.conv_post = {applier.format('nn.Conv1d(8, 1, 7, padding=3)')}\n"
        "        if not conv_pre_weight_norm:\n"
        f"            {first}\n"
        "\n"
        "    def remove_weight_norm(self):\n"
        f"{body}"
        f"        {post}\n"
        "\n\n"
        "class HifiDecoder(nn.Module):\n"
        "    def __init__(self, flag=True):\n"
        "        super().__init__()\n"
        f"        self.waveform_decoder = HifiganGenerator({', '.join(filter(None, ('4', built_with)))})\n"
        "\n\n"
        "HifiDecoder().waveform_decoder.remove_weight_norm()\n"
    )


def never_normed(removal: str, downs: str, legacy: bool = False, extra: str = "") -> str:
    """A HiFT generator whose ``source_downs`` are built as ``downs`` and removed one by one."""
    applier = "weight_norm(nn.ConvTranspose1d(8, 8, 2 * u, u, padding=u // 2)))" + ("  # noqa: WN103" if legacy else "")
    ups = "remove_weight_norm(up)" if legacy else 'remove_parametrizations(up, "weight")'
    return (
        (LEGACY_IMPORTS if legacy else MODERN_IMPORTS)
        + "\n\n"
        "class HiFTGenerator(nn.Module):\n"
        "    def __init__(self, rates=(8, 1)):\n"
        "        super().__init__()\n"
        "        self.ups = nn.ModuleList()\n"
        "        for u in rates:\n"
        f"            self.ups.append({applier}\n"
        f"{downs}"
        f"{extra}"
        "\n"
        "    def remove_weight_norm(self):\n"
        "        for up in self.ups:\n"
        f"            {ups}\n"
        "        for down in self.source_downs:\n"
        f"            {removal}\n"
        "\n\n"
        "HiFTGenerator().remove_weight_norm()\n"
    )


APPENDED_DOWNS = (
    "        self.source_downs = nn.ModuleList()\n"
    "        for u in rates:\n"
    "            if u == 1:\n"
    "                self.source_downs.append(nn.Conv1d(18, 8, 1, 1))\n"
    "            else:\n"
    "                self.source_downs.append(nn.Conv1d(18, 8, 2 * u, u, padding=u // 2))\n"
)
LISTED_DOWNS = "        self.source_downs = nn.ModuleList([nn.Conv1d(18, 8, 2 * u, u) for u in rates])\n"
NORMED_DOWNS = "        self.source_downs = nn.ModuleList([weight_norm(nn.Conv1d(18, 8, 2 * u, u)) for u in rates])\n"
NORMED_IN_A_LOOP = "        for down in self.source_downs:\n            weight_norm(down)\n"


# -- shapes from packages WN109 was not developed on (wrappers chosen by a flag, resblock lists) ----------------
def chosen_wrapper(removal: str, norm: str = '"weight_norm"') -> str:
    """A block choosing its conv class by a flag (``conv1d_type = SConv1d if causal else NormConv1d``), each a
    wrapper of the SEANet/EnCodec ``NormConv1d`` family, built with ``norm=<norm>``."""
    return (
        MODERN_IMPORTS
        + _LAYERS.format(noqa="", inner_removal="", outer_removal="")
        + "\n\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, dim=4, causal=False):\n"
        "        super().__init__()\n"
        "        conv1d_type = SConv1d if causal else NormConv1d\n"
        f"        self.conv = conv1d_type(dim, dim, 3, norm={norm})\n"
        "\n"
        "    def remove_weight_norm(self):\n"
        f"        {removal}\n"
        "\n\n"
        "Block().remove_weight_norm()\n"
    )


_RESBLOCKS = (
    "\n\n"
    "class ResBlock1(nn.Module):\n"
    "    def __init__(self, channels):\n"
    "        super().__init__()\n"
    "        self.convs = nn.ModuleList([weight_norm(nn.Conv1d(channels, channels, 3, padding=1)) for _ in range(2)])\n"
    "\n"
    "    def remove_weight_norm(self):\n"
    "        for conv in self.convs:\n"
    '            remove_parametrizations(conv, "weight")\n'
    "\n\n"
    "class ResBlock2(nn.Module):\n"
    "    def __init__(self, channels):\n"
    "        super().__init__()\n"
    "        self.conv = weight_norm(nn.Conv1d(channels, channels, 3, padding=1))\n"
    "\n"
    "    def remove_weight_norm(self):\n"
    '        remove_parametrizations(self.conv, "weight")\n'
)
#: The HiFi-GAN way of building the blocks: the class chosen by a config string, appended one by one.
CHOSEN_RESBLOCKS = (
    '        resblock = ResBlock1 if kind == "1" else ResBlock2\n'
    "        self.resblocks = nn.ModuleList()\n"
    "        for _ in range(3):\n"
    "            self.resblocks.append(resblock(4))\n"
)
LISTED_RESBLOCKS = "        self.resblocks = nn.ModuleList([ResBlock1(4) for _ in range(3)])\n"


def resblocks(removal: str, built: str = LISTED_RESBLOCKS) -> str:
    """A HiFi-GAN generator whose ``resblocks`` (a ``ModuleList`` of blocks holding normed convs) are removed from
    one by one with ``removal`` (``l``: each block)."""
    return (
        MODERN_IMPORTS
        + _RESBLOCKS
        + "\n\n"
        "class Generator(nn.Module):\n"
        '    def __init__(self, kind="1"):\n'
        "        super().__init__()\n"
        f"{built}"
        "\n"
        "    def remove_weight_norm(self):\n"
        "        for l in self.resblocks:\n"
        f"            {removal}\n"
        "\n\n"
        "Generator().remove_weight_norm()\n"
    )


def never_applied(built_with: str) -> str:
    """A generator whose constructor flag applies the norm or not (``use_weight_norm``), built with ``built_with``
    by the vocoder that folds it."""
    return (
        MODERN_IMPORTS
        + "\n\n"
        "class Generator(nn.Module):\n"
        "    def __init__(self, channels=4, use_weight_norm=True):\n"
        "        super().__init__()\n"
        "        self.conv_post = (\n"
        "            weight_norm(nn.Conv1d(channels, 1, 3, padding=1)) if use_weight_norm else nn.Conv1d(channels, 1, 3, padding=1)\n"
        "        )\n"
        "\n"
        "    def remove_weight_norm(self):\n"
        '        remove_parametrizations(self.conv_post, "weight")\n'
        "\n\n"
        "class Vocoder(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.generator = Generator({built_with})\n"
        "\n"
        "    def fold(self):\n"
        "        self.generator.remove_weight_norm()\n"
        "\n\n"
        "Vocoder().fold()\n"
    )
