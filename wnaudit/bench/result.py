"""What one benchmark measured, and its text and JSON renderings (torch-free)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .stats import PairedSummary, Verdict


@dataclass(frozen=True)
class Settings:
    """How the benchmark ran; reported with every result so that it can be rerun."""

    model: str
    input_shapes: list[list[int]]
    device: str
    dtype: str
    threads: int
    warmup: int
    iterations: int
    seed: int
    second_arm: str  # "rebuilt" or "deep copy"


@dataclass(frozen=True)
class BenchResult:
    """Paired timings of the live and folded arms (all times in seconds)."""

    settings: Settings
    summary: PairedSummary
    weight_norms_folded: int
    folded_names: list[str]
    max_abs_difference: float
    live_times: list[float] = field(repr=False)
    folded_times: list[float] = field(repr=False)
    warnings: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        return self.summary.verdict

    @property
    def verdict_text(self) -> str:
        summary = self.summary
        percent = 100.0 * abs(summary.saving_fraction)
        if summary.verdict is Verdict.SAVES:
            return f"folding saves {format_ms(summary.saving_median)} per call ({percent:.1f}%)"
        if summary.verdict is Verdict.COSTS:
            return f"folding costs {format_ms(-summary.saving_median)} per call ({percent:.1f}%)"
        if not summary.interval.crosses_zero():
            return "not resolvable: the paired interval and the arms' medians disagree"
        return "not resolvable: the interval crosses zero"

    def to_dict(self) -> dict[str, Any]:
        """The JSON report: the same numbers as the text, times in milliseconds."""
        summary = self.summary
        settings = self.settings
        return {
            "model": settings.model,
            "settings": {
                "input_shapes": settings.input_shapes,
                "device": settings.device,
                "dtype": settings.dtype,
                "threads": settings.threads,
                "warmup": settings.warmup,
                "iterations": settings.iterations,
                "seed": settings.seed,
                "second_arm": settings.second_arm,
            },
            "weight_norms_folded": self.weight_norms_folded,
            "max_abs_difference": self.max_abs_difference,
            "live": {"median_ms": _ms(summary.baseline_median)},
            "folded": {"median_ms": _ms(summary.treated_median)},
            "paired_saving": {
                "median_ms": _ms(summary.saving_median),
                "ci_low_ms": _ms(summary.interval.low),
                "ci_high_ms": _ms(summary.interval.high),
                "confidence": summary.interval.confidence,
                "fraction_of_live": summary.saving_fraction,
                "pairs": summary.pairs,
            },
            "ratio": summary.ratio,
            "verdict": {"kind": summary.verdict.value, "text": self.verdict_text},
            "warnings": list(self.warnings),
        }


def _ms(seconds: float) -> float:
    return seconds * 1e3


def format_ms(seconds: float) -> str:
    """Milliseconds with four significant digits: 12.35 ms, 0.04213 ms."""
    return f"{seconds * 1e3:.4g} ms"


#: How the folded copy was made, in plain words (``Settings.second_arm``).
_FOLDED_COPY = {
    "rebuilt": "a model built again from the factory",
    "deep copy": "a deep copy of the model",
    "folded program": "a copy of the exported program",
}


def render_text(result: BenchResult) -> str:
    """A short report in plain words: what ran, the two medians, one saving with its interval, the verdict."""
    s, summary = result.settings, result.summary
    shapes = ", ".join("x".join(str(d) for d in shape) for shape in s.input_shapes)
    interval = summary.interval
    live = summary.baseline_median
    percent = (lambda seconds: f"{100.0 * seconds / live:.1f}%") if live else (lambda seconds: "n/a")
    lines = [
        f"model:    {s.model}",
        f"input:    {shapes}  {s.dtype} on {s.device}, {s.threads} threads",
        f"timing:   {summary.pairs} pairs of calls, live and folded in turn, after {s.warmup} warm-up pairs",
        f"folded:   {result.weight_norms_folded} weight norms folded in {_FOLDED_COPY.get(s.second_arm, s.second_arm)}; "
        f"outputs match (max abs difference {result.max_abs_difference:.3g})",
        f"live:     median {format_ms(live)} per call",
        f"folded:   median {format_ms(summary.treated_median)} per call",
        f"saving:   {format_ms(summary.saving_median)} per call ({percent(summary.saving_median)} of the live call), "
        f"{interval.confidence:.0%} interval {format_ms(interval.low)} to {format_ms(interval.high)} "
        f"({percent(interval.low)} to {percent(interval.high)})",
        f"verdict:  {result.verdict_text}",
    ]
    lines += [f"warning:  {warning}" for warning in result.warnings]
    return "\n".join(lines) + "\n"


def render_json(result: BenchResult) -> str:
    return json.dumps(result.to_dict(), indent=2) + "\n"
