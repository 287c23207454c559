"""The two arms: the folded twin never touches the model as loaded; outputs are checked first."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from wnaudit import fold_weight_norm
from wnaudit.bench import BenchError, independent_copy, measure
from wnaudit.bench.arms import build_arms, count_live_weight_norms
from wnaudit.bench.runner import _synchronizer, _time_pairs
from wnaudit.testing.vocoder import build_vocoder, example_input, expected_weight_norms

FRAMES = 8


def _forward(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.inference_mode():
        return model(x)


def test_premise_plain_deepcopy_shares_the_generated_class_and_torchs_remover_breaks_the_original() -> None:
    """Why the twin needs care (torch 2.13): if the torch half starts failing, torch changed.
    wnaudit's fold never changes the shared class, so folding a plain deepcopy is safe."""
    from torch.nn.utils import parametrize

    original = build_vocoder("modern")
    x = example_input(FRAMES)
    before = _forward(original, x)
    duplicate = copy.deepcopy(original)
    assert type(duplicate.conv_pre) is type(original.conv_pre)
    fold_weight_norm(duplicate)
    assert torch.equal(_forward(original, x), before)
    parametrize.remove_parametrizations(copy.deepcopy(original).conv_pre, "weight")
    with pytest.raises(AttributeError):
        _forward(original, x)


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_independent_copy_folds_without_touching_the_original(spelling: str) -> None:
    original = build_vocoder(spelling)
    x = example_input(FRAMES)
    before = _forward(original, x)
    classes = [type(m) for m in original.modules()]

    duplicate = independent_copy(original)
    assert fold_weight_norm(duplicate)
    assert count_live_weight_norms(duplicate) == 0

    assert count_live_weight_norms(original) == expected_weight_norms()
    assert [type(m) for m in original.modules()] == classes
    assert torch.equal(_forward(original, x), before)
    assert torch.equal(_forward(duplicate, x), before)


def test_rebuilt_twin_loads_the_original_state_not_the_factorys() -> None:
    original = build_vocoder("modern", seed=0)
    x = example_input(FRAMES)
    arms = build_arms(original, rebuild=lambda: build_vocoder("modern", seed=7))
    assert len(arms.folded_names) == expected_weight_norms()
    assert torch.equal(_forward(arms.folded, x), _forward(original, x))
    assert count_live_weight_norms(original) == expected_weight_norms()


@pytest.mark.parametrize("rebuild", [None, lambda: build_vocoder("modern", seed=9)], ids=["deep-copy", "rebuilt"])
def test_measure_leaves_the_model_live_and_reports_the_fold(rebuild) -> None:  # type: ignore[no-untyped-def]
    model = build_vocoder("modern")
    x = example_input(FRAMES)
    before = _forward(model, x)
    result = measure(model, x, rebuild=rebuild, warmup=1, iterations=3, resamples=50, threads=1)
    assert result.weight_norms_folded == expected_weight_norms()
    assert result.max_abs_difference == 0.0
    assert len(result.live_times) == len(result.folded_times) == 3
    assert result.settings.second_arm == ("deep copy" if rebuild is None else "rebuilt")
    assert count_live_weight_norms(model) == expected_weight_norms()
    assert torch.equal(_forward(model, x), before)


def test_measure_detects_a_twin_that_shares_state_with_the_original(monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain deepcopy no longer shares anything the fold changes; a shallow copy shares
    # every submodule with the original.
    monkeypatch.setattr("wnaudit.bench.arms.independent_copy", copy.copy)
    with pytest.raises(BenchError, match="changed the original|broke the original"):
        measure(build_vocoder("modern"), example_input(FRAMES), warmup=0, iterations=2, resamples=10, threads=1)


class _Holder(nn.Module):
    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


def test_measure_detects_a_rebuild_that_reuses_the_originals_submodules() -> None:
    """Folding shared submodules is exact, so the outputs still agree: the live count catches it."""
    model = _Holder(build_vocoder("modern"))
    with pytest.raises(BenchError, match="live weight norms"):
        measure(model, example_input(FRAMES), rebuild=lambda: _Holder(model.inner), warmup=0, iterations=2, resamples=10)


class _NoisyBuffer(nn.Module):
    """A model whose non-persistent buffer differs per build: a rebuilt twin computes something else."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 4, 3, padding=1))
        self.register_buffer("offset", torch.randn(1, 4, 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) + self.offset


def test_measure_refuses_to_time_arms_whose_outputs_differ() -> None:
    with pytest.raises(BenchError, match="differs"):
        measure(_NoisyBuffer(), torch.randn(1, 4, 16), rebuild=_NoisyBuffer, warmup=0, iterations=2, resamples=10, threads=1)


def test_measure_warns_when_there_is_nothing_to_fold() -> None:
    result = measure(build_vocoder(None), example_input(FRAMES), warmup=0, iterations=2, resamples=10, threads=1)
    assert result.weight_norms_folded == 0
    assert any("no live weight norm" in warning for warning in result.warnings)


def test_measure_casts_model_and_input() -> None:
    model = build_vocoder("legacy")
    result = measure(model, example_input(FRAMES), dtype="float64", warmup=0, iterations=2, resamples=10, threads=1)
    assert result.settings.dtype == "float64"
    assert next(model.parameters()).dtype == torch.float64
    with pytest.raises(BenchError, match="dtype"):
        measure(model, example_input(FRAMES), dtype="int8", warmup=0, iterations=2)


def test_measure_sets_threads_for_the_run_only() -> None:
    before = torch.get_num_threads()
    wanted = 2 if before != 2 else 1
    tiny = nn.utils.parametrizations.weight_norm(nn.Linear(4, 4))
    result = measure(tiny, torch.randn(2, 4), threads=wanted, warmup=0, iterations=2, resamples=10)
    assert result.settings.threads == wanted
    assert torch.get_num_threads() == before


def test_pairs_alternate_which_arm_runs_first_and_are_synchronised() -> None:
    calls: list[str] = []
    syncs: list[int] = []

    def arm(name: str):  # type: ignore[no-untyped-def]
        return lambda *_: calls.append(name)

    live, folded = _time_pairs(torch, arm("L"), arm("F"), (), 2, 4, lambda: syncs.append(len(calls)))
    assert calls[:4] == ["L", "F", "F", "L"]  # warm-up pairs alternate too
    assert calls[4:] == ["L", "F", "F", "L", "L", "F", "F", "L"]
    assert len(live) == len(folded) == 4 and all(t >= 0 for t in live + folded)
    timed_calls = range(5, 13)
    for count in timed_calls:  # a sync just before and just after every timed call
        assert count - 1 in syncs and count in syncs


def test_cpu_needs_no_synchronisation_and_unknown_devices_are_refused() -> None:
    assert _synchronizer(torch, torch.device("cpu"))() is None
    with pytest.raises(BenchError, match="synchronise"):
        _synchronizer(torch, torch.device("meta"))


def test_output_comparison_accepts_matching_non_finite_values_only() -> None:
    from wnaudit.bench.runner import _max_abs_difference

    expected = [torch.tensor([1.0, float("nan"), float("inf")])]
    assert _max_abs_difference(torch, expected, [expected[0].clone()]) == (0.0, 1.0)
    difference, _ = _max_abs_difference(torch, expected, [torch.tensor([1.5, float("nan"), float("inf")])])
    assert difference == 0.5
    difference, _ = _max_abs_difference(torch, expected, [torch.tensor([1.0, 0.0, float("inf")])])
    assert difference == float("inf")  # NaN against a number never passes
    with pytest.raises(BenchError, match="shape"):
        _max_abs_difference(torch, expected, [torch.zeros(2)])
