"""The paired statistics behind ``wnaudit bench``'s verdict (pure Python, no timing)."""

from __future__ import annotations

import random

import pytest

from wnaudit.bench.stats import (
    Interval,
    Verdict,
    bootstrap_median_interval,
    median,
    paired_differences,
    summarize,
    verdict,
)


def test_median_of_odd_and_even_counts() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(ValueError):
        median([])


def test_paired_differences_refuse_unpaired_samples() -> None:
    assert paired_differences([3.0, 5.0], [1.0, 1.5]) == [2.0, 3.5]
    with pytest.raises(ValueError, match="unpaired"):
        paired_differences([1.0, 2.0], [1.0])


def test_reported_saving_is_median_of_paired_differences_not_difference_of_medians() -> None:
    live = [1.0, 2.0, 3.0, 4.0, 5.0]
    folded = [0.0, 1.0, 9.0, 9.0, 9.0]
    summary = summarize(live, folded, resamples=200)
    assert median(live) - median(folded) == -6.0
    assert summary.saving_median == -4.0  # median of [1, 1, -6, -5, -4]
    assert summary.baseline_median == 3.0 and summary.treated_median == 9.0
    assert summary.ratio == 3.0


def _noisy_pairs(effect: float, pairs: int, seed: int) -> tuple[list[float], list[float]]:
    """Timings whose noise is shared by the two calls of a pair (machine drift) plus jitter."""
    rng = random.Random(seed)
    live, folded = [], []
    for _ in range(pairs):
        drift = rng.uniform(10.0, 30.0)
        live.append(drift + effect + rng.gauss(0.0, 0.5))
        folded.append(drift + rng.gauss(0.0, 0.5))
    return live, folded


def test_known_effect_is_resolved_and_covered_by_the_interval() -> None:
    live, folded = _noisy_pairs(effect=1.0, pairs=200, seed=3)
    summary = summarize(live, folded, resamples=1000, seed=0)
    assert summary.verdict is Verdict.SAVES
    assert 0.0 < summary.interval.low < 1.0 < summary.interval.high
    assert summary.saving_median == pytest.approx(1.0, abs=0.2)
    assert summary.saving_fraction == pytest.approx(summary.saving_median / summary.baseline_median)


def test_no_effect_is_not_resolvable() -> None:
    live, folded = _noisy_pairs(effect=0.0, pairs=200, seed=5)
    summary = summarize(live, folded, resamples=1000)
    assert summary.interval.crosses_zero()
    assert summary.verdict is Verdict.NOT_RESOLVABLE


def test_a_slower_treated_arm_is_reported_as_a_cost() -> None:
    live, folded = _noisy_pairs(effect=-2.0, pairs=100, seed=7)
    assert summarize(live, folded, resamples=500).verdict is Verdict.COSTS


def test_bootstrap_is_deterministic_for_a_seed_and_orders_its_bounds() -> None:
    data = [random.Random(2).gauss(0.0, 1.0) for _ in range(50)]
    first = bootstrap_median_interval(data, resamples=300, seed=4)
    assert first == bootstrap_median_interval(data, resamples=300, seed=4)
    assert first.low <= median(data) <= first.high
    wider = bootstrap_median_interval(data, confidence=0.99, resamples=300, seed=4)
    assert wider.low <= first.low and wider.high >= first.high


def test_bootstrap_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        bootstrap_median_interval([1.0], confidence=1.0)
    with pytest.raises(ValueError):
        bootstrap_median_interval([1.0], resamples=0)
    with pytest.raises(ValueError):
        bootstrap_median_interval([])


def test_a_paired_verdict_contradicted_by_the_medians_is_withdrawn() -> None:
    """Bursty load: most pairs show +1, the rest are hit hard; the medians say the opposite."""
    live, folded = [], []
    for i in range(200):
        live.append(float(i))
        folded.append(i - 1.0 if i % 5 < 3 else i + 1000.0)
    summary = summarize(live, folded, resamples=500)
    assert summary.saving_median == 1.0 and summary.interval.low > 0.0  # the interval alone would say "saves"
    assert summary.ratio > 1.0
    assert summary.verdict is Verdict.NOT_RESOLVABLE
    assert verdict(summary.interval) is Verdict.SAVES


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.1, 0.3, Verdict.SAVES),
        (-0.3, -0.1, Verdict.COSTS),
        (-0.1, 0.1, Verdict.NOT_RESOLVABLE),
        (0.0, 0.2, Verdict.NOT_RESOLVABLE),
    ],
)
def test_verdict_needs_the_whole_interval_on_one_side_of_zero(low: float, high: float, expected: Verdict) -> None:
    assert verdict(Interval(low, high, 0.95)) is expected


def test_report_text_and_warning_for_a_withdrawn_verdict() -> None:
    from wnaudit.bench.result import BenchResult, Settings
    from wnaudit.bench.runner import _warnings

    live = [float(i) for i in range(200)]
    folded = [i - 1.0 if i % 5 < 3 else i + 1000.0 for i in range(200)]
    summary = summarize(live, folded, resamples=200)
    settings = Settings("m", [[1]], "cpu", "float32", 1, 0, 200, 0, "rebuilt")
    result = BenchResult(settings, summary, 3, ["a", "b", "c"], 0.0, live, folded, _warnings(summary, 3))
    assert result.verdict_text == "not resolvable: the paired interval and the arms' medians disagree"
    assert result.to_dict()["verdict"]["kind"] == "not resolvable"
    assert len(result.warnings) == 1 and "point the other way" in result.warnings[0]
