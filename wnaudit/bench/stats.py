"""Paired statistics for two arms timed in alternation.

Pure Python (no torch, no numpy) so the statistics are testable on their own
and cost nothing to import.  Why paired: the two calls of one pair run seconds
apart at most, so slow drifts of the machine (frequency, other load) hit both
arms alike and cancel in the difference; a difference of two medians keeps
that drift in.  Why a bootstrap: per-call times are skewed and heavy-tailed,
so no normal-theory interval fits the median of their differences.
"""

from __future__ import annotations

import enum
import math
import random
from dataclasses import dataclass
from typing import Sequence


class Verdict(str, enum.Enum):
    """What the interval of the paired saving allows one to say."""

    SAVES = "saves"
    COSTS = "costs"
    NOT_RESOLVABLE = "not resolvable"


@dataclass(frozen=True)
class Interval:
    """A bootstrap confidence interval for the median of the paired differences."""

    low: float
    high: float
    confidence: float

    def crosses_zero(self) -> bool:
        return self.low <= 0.0 <= self.high


def median(values: Sequence[float]) -> float:
    """The median (mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def paired_differences(first: Sequence[float], second: Sequence[float]) -> list[float]:
    """``first[i] - second[i]`` for each pair; the arms must have been timed in pairs."""
    if len(first) != len(second):
        raise ValueError(f"unpaired samples: {len(first)} vs {len(second)} timings")
    return [a - b for a, b in zip(first, second)]


def bootstrap_median_interval(
    differences: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of the median of ``differences``.

    A fixed ``seed`` makes the interval a pure function of the data, so that
    re-rendering one measurement never changes its verdict.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive, got {resamples}")
    if not differences:
        raise ValueError("bootstrap of no values")
    rng = random.Random(seed)
    data = list(differences)
    medians = sorted(median(rng.choices(data, k=len(data))) for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    low_index = max(0, math.floor(tail * resamples))
    high_index = min(resamples - 1, math.ceil((1.0 - tail) * resamples) - 1)
    return Interval(low=medians[low_index], high=medians[high_index], confidence=confidence)


def verdict(interval: Interval, baseline_median: float | None = None, treated_median: float | None = None) -> Verdict:
    """SAVES/COSTS only when the whole interval lies on one side of zero.

    Given the arms' medians, a verdict they contradict (a "saving" while the
    treated arm's median call is no faster, or the reverse) is withdrawn: on a
    machine with bursty outside load the pairs are not independent and the
    interval can be too narrow; two summaries that disagree mean the noise won.
    """
    if interval.crosses_zero():
        return Verdict.NOT_RESOLVABLE
    found = Verdict.SAVES if interval.low > 0.0 else Verdict.COSTS
    if baseline_median is not None and treated_median is not None and medians_disagree(found, baseline_median, treated_median):
        return Verdict.NOT_RESOLVABLE
    return found


def medians_disagree(found: Verdict, baseline_median: float, treated_median: float) -> bool:
    """True when the arms' medians point the other way from (or not at all in the direction of) ``found``."""
    if found is Verdict.SAVES:
        return treated_median >= baseline_median
    if found is Verdict.COSTS:
        return treated_median <= baseline_median
    return False


@dataclass(frozen=True)
class PairedSummary:
    """Everything the report says about two arms timed in pairs (times in seconds)."""

    baseline_median: float
    treated_median: float
    saving_median: float
    interval: Interval
    ratio: float
    verdict: Verdict
    pairs: int

    @property
    def saving_fraction(self) -> float:
        """Median paired saving as a fraction of the baseline's median call."""
        return self.saving_median / self.baseline_median if self.baseline_median else 0.0


def summarize(
    baseline: Sequence[float],
    treated: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> PairedSummary:
    """Summarize paired timings; the saving is ``baseline - treated`` per pair."""
    savings = paired_differences(baseline, treated)
    interval = bootstrap_median_interval(savings, confidence=confidence, resamples=resamples, seed=seed)
    baseline_median, treated_median = median(baseline), median(treated)
    return PairedSummary(
        baseline_median=baseline_median,
        treated_median=treated_median,
        saving_median=median(savings),
        interval=interval,
        ratio=treated_median / baseline_median if baseline_median else math.nan,
        verdict=verdict(interval, baseline_median, treated_median),
        pairs=len(savings),
    )
