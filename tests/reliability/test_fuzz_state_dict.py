"""Fuzzing ``fold_state_dict``: arbitrary keys and shapes, and agreement with the live fold.

Properties:
* on any state dict it returns or raises a ``ValueError`` (its documented error
  for pairs it cannot fold) -- never another exception;
* it never kills the process: every small shape, zero sizes included, runs in a
  child process (torch's kernel divides by zero on some shapes);
* when it folds a state dict taken from a weight-normed module, every entry is
  bit-identical to ``fold_weight_norm(module).state_dict()``.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import warnings
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

import wnaudit

from .fuzzing import SHAPES_NONZERO, fuzz_settings, related_shape, state_dict_keys

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]


def _tensor(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator, dtype=torch.float64)
    return values.to(dtype)


@st.composite
def arbitrary_state_dicts(draw: Any) -> dict[str, torch.Tensor]:
    keys = draw(st.lists(state_dict_keys(), min_size=1, max_size=8, unique=True))
    state: dict[str, torch.Tensor] = {}
    base = draw(SHAPES_NONZERO)
    for index, key in enumerate(keys):
        shape = draw(st.one_of(st.just(base), related_shape(base), SHAPES_NONZERO))
        dtype = draw(st.sampled_from(DTYPES))
        state[key] = _tensor(shape, dtype, index)
    return state


@fuzz_settings(100)
@given(arbitrary_state_dicts())
def test_fold_state_dict_never_raises_anything_but_value_error(state: dict[str, torch.Tensor]) -> None:
    snapshot = {key: value.clone() for key, value in state.items()}
    try:
        folded, names = wnaudit.fold_state_dict(state)
    except ValueError:
        pass
    else:
        # Each weight-norm pair becomes one entry; everything else is kept.
        assert len(folded) == len(state) - len(names)
        assert all(name in folded for name in names)
    # The input is never modified, folded or not.
    assert state.keys() == snapshot.keys()
    assert all(torch.equal(state[k], snapshot[k]) for k in state)


# --------------------------------------------------------------------------
# Every small shape, zero sizes included, in a child process
# --------------------------------------------------------------------------

_GRID_CHILD = r"""
import json, sys
import torch
import wnaudit

cases = json.loads(sys.stdin.read())
outcomes = []
for index, (spelling, v_shape, g_shape, dtype) in enumerate(cases):
    print(index, flush=True)  # the last index printed names the case that killed us
    if spelling == "legacy":
        keys = ("layer.weight_g", "layer.weight_v")
    else:
        keys = ("layer.parametrizations.weight.original0", "layer.parametrizations.weight.original1")
    state = {keys[0]: torch.ones(g_shape, dtype=getattr(torch, dtype)), keys[1]: torch.ones(v_shape, dtype=getattr(torch, dtype))}
    try:
        wnaudit.fold_state_dict(state)
        outcomes.append("folded")
    except ValueError:
        outcomes.append("ValueError")
    except Exception as error:
        outcomes.append(f"{type(error).__name__}: {error}")
print(json.dumps(outcomes), flush=True)
"""


def _small_shape_grid() -> list[tuple[str, list[int], list[int], str]]:
    cases = []
    for ndim in range(0, 4):
        for v_shape in itertools.product((0, 1, 2), repeat=ndim):
            g_shapes = {(), tuple(1 for _ in v_shape), tuple(v_shape)}
            for dim in range(ndim):
                g_shapes.add(tuple(size if i == dim else 1 for i, size in enumerate(v_shape)))
                g_shapes.add(tuple(0 if i == dim else 1 for i, size in enumerate(v_shape)))
            for g_shape in sorted(g_shapes):
                for spelling in ("legacy", "modern"):
                    cases.append((spelling, list(v_shape), list(g_shape), "float32"))
    return cases


def _run_grid(cases: list[Any]) -> tuple[list[Any], list[Any]]:
    """Outcomes of every case, and the cases that killed the child (it restarts after each, at most 3)."""
    outcomes: list[Any] = []
    killers: list[Any] = []
    start = 0
    while start < len(cases) and len(killers) < 3:
        completed = subprocess.run(
            [sys.executable, "-c", _GRID_CHILD], input=json.dumps(cases[start:]), capture_output=True, text=True, timeout=120
        )
        printed = completed.stdout.strip().splitlines()
        if completed.returncode == 0:
            outcomes.extend(json.loads(printed[-1]))
            break
        last = int(printed[-1]) if printed and printed[-1].isdigit() else 0
        killers.append((cases[start + last], f"exit {completed.returncode}"))
        outcomes.extend(["(not run)"] * (last + 1))
        start += last + 1
    return outcomes, killers


def test_every_small_shape_pair_folds_or_is_refused_without_killing_the_process() -> None:
    cases = _small_shape_grid()
    outcomes, killers = _run_grid(cases)
    assert not killers, f"fold_state_dict killed the process on (spelling, v shape, g shape, dtype): {killers}"
    unexpected = [(case, outcome) for case, outcome in zip(cases, outcomes) if outcome not in ("folded", "ValueError")]
    assert not unexpected, unexpected[:5]


# --------------------------------------------------------------------------
# Agreement with the live module's fold, bit for bit
# --------------------------------------------------------------------------


def _layer(kind: str, a: int, b: int, k: int) -> nn.Module:
    if kind == "conv1d":
        return nn.Conv1d(a, b, k)
    if kind == "conv2d":
        return nn.Conv2d(a, b, (k, 2))
    if kind == "convtranspose1d":
        return nn.ConvTranspose1d(a, b, k, stride=2)
    return nn.Linear(a, b)


@st.composite
def weight_normed_modules(draw: Any) -> nn.Module:
    torch.manual_seed(draw(st.integers(0, 2**16)))
    count = draw(st.integers(1, 3))
    layers = []
    for _ in range(count):
        kind = draw(st.sampled_from(["conv1d", "conv2d", "convtranspose1d", "linear"]))
        a, b, k = (draw(st.integers(1, 5)) for _ in range(3))
        layer = _layer(kind, a, b, k)
        ndim = layer.weight.dim()
        dim = draw(st.sampled_from([*range(-ndim, ndim), None]))
        spelling = draw(st.sampled_from(["modern", "legacy", "none"]))
        if spelling == "modern":
            layer = nn.utils.parametrizations.weight_norm(layer, dim=dim)
        elif spelling == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                layer = nn.utils.weight_norm(layer, dim=dim)  # noqa: WN103 - the legacy spelling under test
        layers.append(layer)
    model = nn.Sequential(*layers)
    dtype = draw(st.sampled_from([torch.float32, torch.float64, torch.float16, torch.bfloat16]))
    model = model.to(dtype)
    with torch.no_grad():  # g away from ||v||, so a fold that ignores g shows
        for name, parameter in model.named_parameters():
            if name.endswith(("_g", "original0")):
                parameter.mul_(torch.rand_like(parameter) + 0.5)
    return model


def _module_dims(model: nn.Module, prefix: str) -> dict[str, int]:
    """Each weight norm's dim as the module stores it (what a state dict does not)."""
    dims = {}
    for name, module in model.named_modules():
        for hook in module._forward_pre_hooks.values():
            if hasattr(hook, "dim") and hasattr(hook, "compute_weight"):
                dims[f"{prefix}{name}.{hook.name}"] = hook.dim
        if hasattr(module, "parametrizations"):
            dims[f"{prefix}{name}.weight"] = module.parametrizations.weight[0].dim
    return dims


def _fitting_dims(g_shape: tuple[int, ...], v_shape: tuple[int, ...]) -> list[int]:
    """The dims for which weight norm stores a g of this shape (the state dict does not say which)."""
    if not g_shape:
        return [-1]
    return [
        d
        for d in range(len(v_shape))
        if len(g_shape) == len(v_shape) and g_shape == tuple(v_shape[d] if i == d else 1 for i in range(len(v_shape)))
    ]


def _ambiguous(stored: dict[str, torch.Tensor]) -> bool:
    g_keys = [k for k in stored if k.endswith(("_g", "original0"))]
    pairs = [(k, k[: -len("_g")] + "_v" if k.endswith("_g") else k[: -len("0")] + "1") for k in g_keys]
    return any(len(_fitting_dims(tuple(stored[g].shape), tuple(stored[v].shape))) > 1 for g, v in pairs)


@fuzz_settings(60)
@given(weight_normed_modules(), st.sampled_from(["", "generator.", "state_dict.module."]))
def test_fold_state_dict_matches_folding_the_live_module(model: nn.Module, prefix: str) -> None:
    """Bit-identical whenever it folds.  It may refuse (ValueError) only when a g's
    shape fits several dims that compute different weights: the stored state alone
    cannot tell which one the module used."""
    stored = {prefix + key: value.detach().clone() for key, value in model.state_dict().items()}
    dims = _module_dims(model, prefix)
    told, _ = wnaudit.fold_state_dict(stored, dims=dims)  # told each module's dim: never refused
    try:
        folded, names = wnaudit.fold_state_dict(stored)
    except ValueError:
        assert _ambiguous(stored), "refused a state dict whose dims are not ambiguous"
        folded = names = None
    expected_names = wnaudit.fold_weight_norm(model)
    live = {prefix + key: value for key, value in model.state_dict().items()}
    for key, value in live.items():
        assert told[key].dtype == value.dtype and torch.equal(told[key], value), f"{key} (told its dim) differs"
    if folded is None or any(dim < -1 for dim in dims.values()):
        return  # from shapes alone a dim below -1 reads as dim + ndim: another torch kernel
    live = {prefix + key: value for key, value in model.state_dict().items()}
    assert sorted(names) == sorted(prefix + name for name in expected_names)
    assert sorted(folded) == sorted(live)
    for key, value in live.items():
        assert folded[key].dtype == value.dtype, key
        assert torch.equal(folded[key], value), f"{key} differs from the live fold"


def test_fold_state_dict_never_guesses_an_ambiguous_dim() -> None:
    """Found by the fuzzer: a Conv1d(1, 1, 2) weight-normed with dim=1 stores g of shape
    (1, 1, 1), which fits dims 0 and 1; torch computes them by different kernels whose
    last bits differ here.  Folding with dim 0 is not what the module computes: the fold
    must refuse (ValueError) rather than guess."""
    torch.manual_seed(14)
    module = nn.utils.parametrizations.weight_norm(nn.Conv1d(1, 1, 2), dim=1)
    with torch.no_grad():
        module.parametrizations.weight.original0.mul_(1.37)
    stored = {key: value.detach().clone() for key, value in module.state_dict().items()}
    wnaudit.fold_weight_norm(module)
    try:
        folded, _ = wnaudit.fold_state_dict(stored)
    except ValueError:
        return
    assert torch.equal(folded["weight"], module.weight), "folded with a guessed dim: not the module's weight"


# --------------------------------------------------------------------------
# Regressions found by the long run (WNAUDIT_FUZZ_EXAMPLES=5000)
# --------------------------------------------------------------------------

_CLASHES = {
    "plain-entry-already-there": {
        "w.weight": torch.zeros(2, 3),
        "w.weight_g": torch.ones(2, 1),
        "w.weight_v": torch.ones(2, 3),
    },
    "both-spellings-for-one-weight": {
        "weight_g": torch.ones(2, 1),
        "weight_v": torch.ones(2, 3),
        "parametrizations.weight.original0": torch.full((2, 1), 2.0),
        "parametrizations.weight.original1": torch.ones(2, 3),
    },
}


@pytest.mark.parametrize("case", sorted(_CLASHES))
def test_fold_state_dict_never_drops_an_entry_on_a_key_clash(case: str) -> None:
    """Two entries would end up under one key: folding must refuse, not keep one silently."""
    with pytest.raises(ValueError):
        wnaudit.fold_state_dict(dict(_CLASHES[case]))


def test_fold_state_dict_mismatched_dtypes_raise_value_error() -> None:
    """g and v of different dtypes: torch's kernel raises RuntimeError; the documented error is ValueError."""
    with pytest.raises(ValueError):
        wnaudit.fold_state_dict({"weight_g": torch.ones(2, 1), "weight_v": torch.ones(2, 3, dtype=torch.float64)})
