"""wnaudit.watch (WN206): every reparametrized weight a call computes, named, counted, results unchanged."""

from __future__ import annotations

import copy
import re
import threading
from pathlib import Path

import pytest
import torch
from runtime_helpers import (
    GRAD_MODES,
    HandCalledKernel,
    HandCalledOnCopies,
    legacy_weight_norm,
    tiny_input,
    tiny_vocoder,
)
from torch import nn
from torch.utils._python_dispatch import _get_current_dispatch_mode

import wnaudit
from wnaudit.testing.vocoder import expected_weight_norms


def _weight_norm_names(model: nn.Module) -> set[str]:
    return {f.object for f in wnaudit.audit_module(model) if f.code in {"WN201", "WN202"}}


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
@pytest.mark.parametrize("mode", sorted(GRAD_MODES))
def test_every_live_weight_norm_of_a_vocoder_once_per_call_results_unchanged(spelling: str, mode: str):
    model, mel = tiny_vocoder(spelling), tiny_input()
    with GRAD_MODES[mode]():
        expected = model(mel)
        with wnaudit.watch(model) as watched:
            first, second = model(mel), model(mel)
    assert torch.equal(first, expected) and torch.equal(second, expected)
    assert len(watched.findings) == expected_weight_norms()
    assert {f.object for f in watched.findings} == _weight_norm_names(model)
    assert {f.code for f in watched.findings} == {"WN206"}
    assert {(c.calls, c.serving_calls) for c in watched.computations} == {(2, 2)}
    assert all(f"weight norm ({spelling})" in f.message and "2 times" in f.message for f in watched.findings)


def test_a_folded_model_gives_no_finding():
    model, mel = tiny_vocoder("modern"), tiny_input()
    wnaudit.fold_weight_norm(model)
    with wnaudit.watch(model) as watched:
        model(mel)
    assert watched.findings == []


def test_the_message_says_count_spelling_class_location_and_fold():
    model = nn.Sequential(nn.utils.parametrizations.weight_norm(nn.ConvTranspose1d(2, 3, 4, stride=2))).eval()
    with wnaudit.watch(model) as watched:
        for _ in range(3):
            model(torch.randn(1, 2, 5))
    [found] = watched.findings
    assert (found.object, found.path, found.fixable) == ("0.weight", "<Sequential>", True)
    assert "weight norm (modern)" in found.message and "3 times" in found.message
    assert "wnaudit.fold_weight_norm(model)" in found.message
    where = re.search(r"in ConvTranspose1d \(defined at (.+):(\d+)\)", found.message)
    assert where, found.message
    line = Path(where.group(1)).read_text(encoding="utf-8").splitlines()[int(where.group(2)) - 1]
    assert line.startswith("class ConvTranspose1d(")


class _F0Predictor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 2, 3, padding=1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class _Vocoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv_pre = legacy_weight_norm(nn.Conv1d(2, 2, 1))
        self.f0_predictor = _F0Predictor()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.f0_predictor(self.conv_pre(x))


def test_a_torch_layer_is_located_in_the_model_class_that_holds_it():
    """``in Conv1d (defined at .../torch/nn/modules/conv.py)`` sends the user into torch: name the project's class."""
    model = _Vocoder().eval()
    with wnaudit.watch(model) as watched:
        model(torch.randn(1, 2, 5))
    where = {f.object: f.message for f in watched.findings}
    for name, owner in [("conv_pre.weight", _Vocoder), ("f0_predictor.net.0.weight", _F0Predictor)]:
        found = re.search(rf"in Conv1d of {owner.__name__} \(defined at (.+):(\d+)\)", where[name])
        assert found, where[name]
        line = Path(found.group(1)).read_text(encoding="utf-8").splitlines()[int(found.group(2)) - 1]
        assert line.startswith(f"class {owner.__name__}("), line


@pytest.mark.parametrize("dim", [0, 1, None, -1])
@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_any_dim_counts_once_per_call(spelling: str, dim: int | None):
    """dim 1 and None decompose into plain operators outside inference_mode: the module call still counts, once."""
    conv = nn.Conv1d(3, 4, 3)
    conv = nn.utils.parametrizations.weight_norm(conv, dim=dim) if spelling == "modern" else legacy_weight_norm(conv, dim=dim)
    for mode in GRAD_MODES.values():
        with mode(), wnaudit.watch(conv) as watched:
            conv(torch.randn(1, 3, 6))
        assert [(f.object, c.calls) for f, c in zip(watched.findings, watched.computations)] == [("weight", 1)]


@pytest.mark.parametrize("modern", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm(modern: bool, training: bool):
    apply = nn.utils.parametrizations.spectral_norm if modern else nn.utils.spectral_norm
    model = nn.Sequential(nn.Linear(3, 3), apply(nn.Conv1d(3, 4, 3))).train(training)
    twin, x = copy.deepcopy(model), torch.randn(1, 3, 3)
    with wnaudit.watch(model) as watched:
        out = [model(x) for _ in range(2)]
    assert all(torch.equal(a, twin(x)) for a in out)  # power iterations included: same state, same result
    assert [(f.object, c.calls, c.serving_calls) for f, c in zip(watched.findings, watched.computations)] == [
        ("1.weight", 2, 0 if training else 2)
    ]
    assert "spectral norm" in watched.findings[0].message and "spectral_norm=True" in watched.findings[0].message


def test_other_parametrization():
    class Symmetric(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.triu() + x.triu(1).transpose(-1, -2)

    model = nn.Linear(3, 3).eval()
    nn.utils.parametrize.register_parametrization(model, "weight", Symmetric())
    with torch.inference_mode(), wnaudit.watch(model) as watched:
        model(torch.randn(2, 3))
    [found] = watched.findings
    assert found.object == "weight" and "wnaudit.fold(model, other=True)" in found.message


def test_stacked_weight_and_spectral_norm_count_once_per_call():
    conv = nn.utils.parametrizations.spectral_norm(nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 2, 3))).eval()
    with wnaudit.watch(conv) as watched:
        conv(torch.randn(1, 2, 5))
    assert [(f.object, c.calls) for f, c in zip(watched.findings, watched.computations)] == [("weight", 1)]


@pytest.mark.parametrize("mode", sorted(GRAD_MODES))
def test_torchs_kernel_called_by_hand(mode: str):
    model = nn.Sequential(HandCalledKernel()).eval()
    with GRAD_MODES[mode](), wnaudit.watch(model) as watched:
        model(torch.randn(1, 3, 5))
    [found] = watched.findings
    assert found.code == "WN206" and found.object == "0.weight_v" and not found.fixable
    assert "torch._weight_norm called by hand" in found.message and "HandCalledKernel" in found.message


def test_torchs_kernel_called_by_hand_on_copies_of_parameters():
    """Named after the parameter v is made from; the kernel on the input is not a weight computed for nothing."""
    model = HandCalledOnCopies().eval()
    with wnaudit.watch(model) as watched:
        for _ in range(2):
            model(torch.randn(1, 3, 5))
    assert [(f.object, c.calls) for f, c in zip(watched.findings, watched.computations)] == [("weight_v", 2)]


def test_names_without_a_model_come_from_the_outermost_module_called():
    model, mel = tiny_vocoder("legacy"), tiny_input()
    with wnaudit.watch() as watched:
        model(mel)
    assert {f.object for f in watched.findings} == _weight_norm_names(model)
    assert {f.path for f in watched.findings} == {"<Vocoder>"}


def test_names_are_relative_to_the_model_given():
    model, mel = tiny_vocoder("modern"), tiny_input()
    with wnaudit.watch(model.f0_predictor) as watched:
        model(mel)
    names = {f.object for f in watched.findings}
    assert "condnet.0.weight" in names and "conv_pre.weight" in names  # the rest: from the model being called


def test_training_forwards_are_counted_apart():
    model, mel = tiny_vocoder("modern").train(), tiny_input()
    with wnaudit.watch(model) as watched:
        model(mel)
        with torch.inference_mode():
            model(mel)
    assert {(c.calls, c.serving_calls) for c in watched.computations} == {(2, 1)}
    assert "1 of them in eval mode or under inference_mode" in watched.findings[0].message


def test_a_fold_inside_the_block_stops_the_count():
    model, mel = tiny_vocoder("legacy"), tiny_input()
    with wnaudit.watch(model) as watched:
        model(mel)
        wnaudit.fold_weight_norm(model)  # computes each weight once more, with torch's kernel: not counted
        model(mel)
    assert {c.calls for c in watched.computations} == {1}


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_a_model_folded_inside_the_watch_gives_no_finding(spelling: str):
    """A test that loads, folds and serves, all under the pytest plugin's watch, passes."""
    with wnaudit.watch() as watched:
        model = tiny_vocoder(spelling)
        wnaudit.fold(model, weight_norm=True, spectral_norm=True)
        model(tiny_input())
    assert watched.findings == []


def test_nested_and_repeated_watches():
    model, mel = tiny_vocoder("modern"), tiny_input()
    with wnaudit.watch(model) as outer:
        model(mel)
        with wnaudit.watch(model) as inner:
            model(mel)
    assert {c.calls for c in outer.computations} == {2} and {c.calls for c in inner.computations} == {1}
    again = wnaudit.watch(model)
    for _ in range(2):
        with again, again:  # re-entered: still one record, counted once
            model(mel)
    assert {c.calls for c in again.computations} == {2}


def test_as_a_decorator():
    model, mel = tiny_vocoder("modern"), tiny_input()
    watched = wnaudit.watch(model)

    @watched
    def serve(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    serve(mel)
    serve(mel)
    assert {c.calls for c in watched.computations} == {2}


def test_an_exception_inside_the_block_leaves_nothing_behind():
    model, mel = tiny_vocoder("modern"), tiny_input()
    watched = wnaudit.watch(model)
    with pytest.raises(ZeroDivisionError), watched:
        model(mel)
        raise ZeroDivisionError("inside the block")
    assert len(watched.findings) == expected_weight_norms()
    assert _get_current_dispatch_mode() is None
    model(mel)  # neither the mode nor the module hook records any more
    assert {c.calls for c in watched.computations} == {1}


def test_another_threads_forward_is_not_seen_and_not_changed():
    """torch keeps dispatch modes per thread: a watch sees the threads that entered it, and only those."""
    model, mel = tiny_vocoder("modern"), tiny_input()
    expected = model(mel)
    results: dict[str, object] = {}

    def other() -> None:
        results["out"] = model(mel)
        with wnaudit.watch(model) as own:
            model(mel)
        results["own"] = own

    with wnaudit.watch(model) as watched:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert watched.findings == []
    assert torch.equal(results["out"], expected)  # type: ignore[arg-type]
    assert len(results["own"].findings) == expected_weight_norms()  # type: ignore[attr-defined]


def test_a_model_built_from_yaml_through_a_registry(tmp_path: Path):
    """The class comes from a config file, as CosyVoice's HiFT does: no static rule sees it, the watch does."""
    yaml = pytest.importorskip("yaml")
    from wnaudit.testing.vocoder import Vocoder, VocoderConfig

    registry = {"hifigan": Vocoder}
    (tmp_path / "model.yaml").write_text(
        "vocoder:\n  class: hifigan\n  config: {mel_channels: 8, channels: 8, f0_channels: 4}\n  weight_norm: legacy\n"
    )
    spec = yaml.safe_load((tmp_path / "model.yaml").read_text())["vocoder"]
    model = registry[spec.pop("class")](VocoderConfig(**spec.pop("config")), **spec).eval()
    with torch.inference_mode(), wnaudit.watch() as watched:
        model(tiny_input(4))
    assert len(watched.findings) == expected_weight_norms() and "ups.1.weight" in {f.object for f in watched.findings}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_on_cuda():
    model, mel = tiny_vocoder("modern").cuda(), tiny_input().cuda()
    expected = model(mel)
    with wnaudit.watch(model) as watched:
        assert torch.equal(model(mel), expected)
    assert len(watched.findings) == expected_weight_norms()
