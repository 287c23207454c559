"""A torch.compile'd model under the watch: seen as the eager module is, results unchanged.

The default backend (inductor) needs a C compiler and, on this suite's 2-core machines, about a minute to
compile even a tiny model; ``aot_eager`` goes through dynamo and AOTAutograd without generating code, which is
what decides what the watch sees (torch runs a compiled module's frames eagerly under a dispatch mode).
"""

from __future__ import annotations

import pytest
import torch
from runtime_helpers import legacy_weight_norm
from torch import nn

import wnaudit


@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
def test_a_compiled_module_under_the_watch(mode: object):
    model = nn.Sequential(
        nn.utils.parametrizations.weight_norm(nn.Conv1d(3, 4, 3)), nn.ReLU(), legacy_weight_norm(nn.ConvTranspose1d(4, 2, 4, stride=2))
    ).eval()
    compiled = torch.compile(model, backend="aot_eager")
    x = torch.randn(1, 3, 8)
    with mode():  # type: ignore[operator]
        expected = compiled(x)  # compiled outside the watch first
        with wnaudit.watch(compiled) as watched:
            out = compiled(x)
    assert torch.equal(out, expected)
    assert [(f.object, c.calls) for f, c in zip(watched.findings, watched.computations)] == [("0.weight", 1), ("2.weight", 1)]
    torch._dynamo.reset()
