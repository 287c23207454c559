"""Hypothesis settings and strategies for the reliability fuzzers.

Budget: ``WNAUDIT_FUZZ_EXAMPLES`` sets max_examples for every property (the
default keeps the suite fast; e.g. ``WNAUDIT_FUZZ_EXAMPLES=5000`` for a long
run).  No example database is written, so runs leave no files behind.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from wnaudit.core.catalogue import LEGACY_SPECTRAL_NORM_SUFFIXES, LEGACY_WEIGHT_NORM_SUFFIXES, MODERN_SPECTRAL_NORM_BUFFERS, ORIGINAL, PARAMETRIZATIONS_ATTR, WEIGHT_NORM_G_INDEX, WEIGHT_NORM_V_INDEX

ENV_BUDGET = "WNAUDIT_FUZZ_EXAMPLES"


def budget(default: int, long_share: float = 1.0) -> int:
    """max_examples for one property: ``default``, or with ``WNAUDIT_FUZZ_EXAMPLES=N``
    ``N * long_share`` (a slow generator runs a share of the long budget)."""
    value = os.environ.get(ENV_BUDGET)
    return max(default, int(int(value) * long_share)) if value else default


def fuzz_settings(default: int, long_share: float = 1.0) -> settings:
    """The default budget is derandomized (the same examples every run: no flaky CI);
    the long budget explores afresh each time."""
    return settings(
        max_examples=budget(default, long_share),
        derandomize=not os.environ.get(ENV_BUDGET),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


# --------------------------------------------------------------------------
# State-dict keys: arbitrary names, and the catalogue's own suffixes and patterns
# --------------------------------------------------------------------------

_SEGMENT = st.one_of(
    st.sampled_from(["weight", "bias", "conv", "ups", "0", "1", "generator", "state_dict", "v", "g", "u", "orig"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=0, max_size=6),
)

_TAILS = [
    *(f"weight{suffix}" for suffix in LEGACY_WEIGHT_NORM_SUFFIXES),
    *(f"weight{suffix}" for suffix in LEGACY_SPECTRAL_NORM_SUFFIXES),
    f"{PARAMETRIZATIONS_ATTR}.weight.{ORIGINAL}{WEIGHT_NORM_G_INDEX}",
    f"{PARAMETRIZATIONS_ATTR}.weight.{ORIGINAL}{WEIGHT_NORM_V_INDEX}",
    f"{PARAMETRIZATIONS_ATTR}.weight.{ORIGINAL}",
    *(f"{PARAMETRIZATIONS_ATTR}.weight.0.{buffer}" for buffer in MODERN_SPECTRAL_NORM_BUFFERS),
    f"{PARAMETRIZATIONS_ATTR}..{ORIGINAL}0",
    f"{PARAMETRIZATIONS_ATTR}.weight.{ORIGINAL}2",
    "_g",
    "_v",
    "weight",
]


@st.composite
def state_dict_keys(draw: Any) -> str:
    prefix = draw(st.lists(_SEGMENT, max_size=3))
    tail = draw(st.one_of(st.sampled_from(_TAILS), _SEGMENT))
    return ".".join([*prefix, tail])


SHAPES_NONZERO = st.lists(st.integers(1, 4), max_size=4).map(tuple)


@st.composite
def related_shape(draw: Any, base: tuple[int, ...]) -> tuple[int, ...]:
    """g-like shapes: mostly what weight norm stores for ``base``, sometimes not quite."""
    choice = draw(st.integers(0, 3))
    if choice == 0 or not base:
        return ()
    if choice == 1:
        dim = draw(st.integers(0, len(base) - 1))
        return tuple(size if i == dim else 1 for i, size in enumerate(base))
    if choice == 2:
        return tuple(1 for _ in base)
    return draw(SHAPES_NONZERO)


# --------------------------------------------------------------------------
# Python source: mutations of the real-looking example files
# --------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def example_sources() -> list[str]:
    return [p.read_text() for p in sorted(EXAMPLES.rglob("*.py"))]


#: Lines that bring weight-norm calls, aliases and removals into a file.
SNIPPETS = [
    "from torch.nn.utils import weight_norm",
    "from torch.nn.utils import weight_norm as wn",
    "from torch.nn.utils import remove_weight_norm as rwn",
    "from torch.nn.utils import spectral_norm, remove_spectral_norm",
    "from torch.nn.utils.parametrizations import weight_norm",
    "from torch.nn.utils.parametrizations import weight_norm as pwn",
    "from torch.nn.utils import parametrize",
    "import torch.nn.utils as U",
    "import torch.nn.utils.parametrizations as P",
    "import torch",
    "from torch import nn",
    "layer = weight_norm(nn.Conv1d(4, 4, 3))",
    "layer = wn(nn.Conv1d(4, 4, 3), dim=None)",
    "layer = U.weight_norm(nn.Linear(3, 3))",
    "layer = P.weight_norm(nn.Linear(3, 3))",
    "layer = torch.nn.utils.weight_norm(nn.Conv1d(1, 1, 1), name='weight')",
    "layer = spectral_norm(nn.Linear(2, 2))",
    "remove_weight_norm(layer)",
    "rwn(layer)",
    "U.remove_weight_norm(layer)",
    "remove_spectral_norm(layer)",
    "torch.nn.utils.remove_weight_norm(layer, 'weight')",
    "parametrize.remove_parametrizations(layer, 'weight')",
    "parametrize.remove_parametrizations(layer, 'weight', leave_parametrized=False)",
    "weight_norm = torch.nn.utils.weight_norm",
    "remove = torch.nn.utils.remove_weight_norm",
    "remove(layer)",
    "try:\n    remove_weight_norm(layer)\nexcept ValueError:\n    pass",
    "def remove_weight_norm(self):\n    remove_weight_norm(self.conv)",
    "for l in layers:\n    remove_weight_norm(l)",
    "layers = [weight_norm(c) for c in convs]",
    "# wnaudit: noqa",
    "x = remove_weight_norm  # noqa: WN101",
    "",
    "pass",
]


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


@st.composite
def mutated_examples(draw: Any, sources: list[str]) -> str:
    """An example file with a few lines inserted, deleted or duplicated, identifiers renamed."""
    lines = draw(st.sampled_from(sources)).splitlines()
    for _ in range(draw(st.integers(0, 6))):
        action = draw(st.sampled_from(["insert", "insert", "delete", "duplicate", "rename", "alias"]))
        index = draw(st.integers(0, max(len(lines) - 1, 0)))
        if action == "insert":
            indent = _indent_of(lines[index]) if lines else ""
            snippet = draw(st.sampled_from(SNIPPETS))
            lines[index:index] = [indent + part for part in snippet.split("\n")]
        elif action == "delete" and lines:
            del lines[index]
        elif action == "duplicate" and lines:
            lines.insert(index, lines[index])
        elif action == "rename":
            text = "\n".join(lines)
            names = sorted(set(_IDENT.findall(text)))
            if names:
                old = draw(st.sampled_from(names))
                new = draw(st.sampled_from(["weight_norm", "remove_weight_norm", "wn", "nn", "torch", "conv", "x1"]))
                lines = re.sub(rf"\b{re.escape(old)}\b", new, text).split("\n")
        elif action == "alias":
            target = draw(st.sampled_from(["weight_norm", "remove_weight_norm", "spectral_norm"]))
            alias = draw(st.sampled_from(["wn", "_wn", "norm_fn", "rm"]))
            lines.insert(0, f"{alias} = {target}")
    return "\n".join(lines) + "\n"
