"""Time a model with its weight norms live against a folded twin, in one process.

Protocol: one fixed input; both arms checked to compute the same output before
any timing (and the original checked to be untouched by the fold of its twin);
warm-up pairs; then pairs of calls in alternating order (live-folded,
folded-live, ...) so that neither arm always runs second, each call timed on
its own with ``time.perf_counter_ns`` inside ``torch.inference_mode()``, the
device synchronised around each call when it is not the CPU.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from typing import Any, Callable, Iterator, Sequence

from ..common.gc_pause import cyclic_gc_paused
from ..common.progress import logger as progress_logger
from ..core import torch_api
from .arms import Rebuild, build_arms, count_live_weight_norms
from .errors import BenchError
from .result import BenchResult, Settings
from .stats import Verdict, summarize

logger = logging.getLogger("wnaudit.bench")

#: Output agreement demanded of the folded twin, relative to the output's scale.
#: The fold is bit-exact, so outputs normally agree exactly; the slack covers
#: kernels that are not run-to-run deterministic on accelerators.
_RELATIVE_TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 4e-3, "bfloat16": 3e-2}


def measure(
    model: Any,
    example_input: Any,
    *,
    rebuild: Rebuild | None = None,
    warmup: int = 10,
    iterations: int = 100,
    device: str | Any = "cpu",
    dtype: str | Any | None = None,
    threads: int | None = None,
    seed: int = 0,
    confidence: float = 0.95,
    resamples: int = 2000,
    label: str | None = None,
) -> BenchResult:
    """Measure what folding the weight norms of ``model`` saves per forward call.

    ``example_input`` is a tensor or a tuple of positional tensors.  ``model``
    is moved to ``device``/``dtype`` and put in eval mode, but never folded: the
    folded arm is a twin, rebuilt with ``rebuild()`` and loaded with
    ``model``'s state dict when given, else a deep copy made safe to fold.
    Raises :class:`BenchError` when the arms disagree or the fold of the twin
    changed ``model``.
    """
    if iterations < 2:
        raise BenchError(f"iterations must be at least 2, got {iterations}")
    if warmup < 0:
        raise BenchError(f"warmup must not be negative, got {warmup}")
    torch = torch_api.import_torch()
    device = torch.device(device)
    dtype = _resolve_dtype(torch, dtype)
    with _threads(torch, threads):
        model.to(device=device, dtype=dtype).eval()
        inputs = _prepare_inputs(torch, example_input, device, dtype)
        with torch.inference_mode():
            reference = _tensors(model(*inputs))
        live_before = count_live_weight_norms(model)
        arms = build_arms(model, rebuild, device=device, dtype=dtype)
        arms.folded.eval()
        max_abs = _check_arms(torch, model, arms.folded, inputs, reference, live_before)
        synchronize = _synchronizer(torch, device)
        # Long work starts here (the timing): say so, so a CI log shows life; a line every 10 s follows.
        progress_logger.info("bench %s: timing %d pairs of calls after %d warm-up pairs", label or "model", iterations, warmup)
        live_times, folded_times = _time_pairs(torch, model, arms.folded, inputs, warmup, iterations, synchronize)
        used_threads = torch.get_num_threads()
    summary = summarize(live_times, folded_times, confidence=confidence, resamples=resamples, seed=seed)
    settings = Settings(
        model=label or type(model).__name__,
        input_shapes=[list(t.shape) for t in inputs],
        device=str(device),
        dtype=_dtype_name(dtype or _model_dtype(model)),
        threads=used_threads,
        warmup=warmup,
        iterations=iterations,
        seed=seed,
        second_arm="deep copy" if rebuild is None else "rebuilt",
    )
    return BenchResult(
        settings=settings,
        summary=summary,
        weight_norms_folded=len(arms.folded_names),
        folded_names=arms.folded_names,
        max_abs_difference=max_abs,
        live_times=live_times,
        folded_times=folded_times,
        warnings=_warnings(summary, len(arms.folded_names)),
    )


def _warnings(summary: Any, folded: int) -> list[str]:
    notes = []
    if folded == 0:
        notes.append("the model has no live weight norm: both arms run the same computation")
    if summary.verdict is Verdict.NOT_RESOLVABLE and not summary.interval.crosses_zero():
        notes.append(
            f"the {summary.interval.confidence:.0%} interval of the paired saving excludes zero but the arms' medians "
            f"(ratio folded/live {summary.ratio:.3f}) point the other way: the timings are dominated by noise "
            "(other load on the machine?); rerun with more --iterations or on a quieter machine"
        )
    elif summary.verdict is Verdict.NOT_RESOLVABLE:
        notes.append(
            f"the {summary.interval.confidence:.0%} interval of the paired saving crosses zero: "
            f"the difference is within the noise of {summary.pairs} pairs; "
            "more --iterations, fewer --threads or a quieter machine may resolve it"
        )
    return notes


def _resolve_dtype(torch: Any, dtype: str | Any | None) -> Any:
    if dtype is None or not isinstance(dtype, str):
        return dtype
    resolved = getattr(torch, dtype, None)
    if not isinstance(resolved, torch.dtype) or not resolved.is_floating_point:
        raise BenchError(f"unknown floating dtype {dtype!r}")
    return resolved


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def _model_dtype(model: Any) -> Any:
    for tensor in model.parameters():
        if tensor.is_floating_point():
            return tensor.dtype
    return "float32"


def _prepare_inputs(torch: Any, example_input: Any, device: Any, dtype: Any) -> tuple[Any, ...]:
    inputs = tuple(example_input) if isinstance(example_input, (tuple, list)) else (example_input,)
    prepared = []
    for item in inputs:
        if not isinstance(item, torch.Tensor):
            raise BenchError(f"example inputs must be tensors, got {type(item).__name__}")
        item = item.to(device=device)
        if dtype is not None and item.is_floating_point():
            item = item.to(dtype=dtype)
        prepared.append(item)
    return tuple(prepared)


def _tensors(output: Any) -> list[Any]:
    """Every tensor in a model output: a tensor, nested tuples/lists, or a mapping."""
    torch = torch_api.import_torch()
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, dict):
        return [t for value in output.values() for t in _tensors(value)]
    if isinstance(output, (tuple, list)):
        return [t for value in output for t in _tensors(value)]
    return []


def _max_abs_difference(torch: Any, expected: Sequence[Any], actual: Sequence[Any]) -> tuple[float, float]:
    """(max abs difference, max abs value of ``expected``) over all output tensors."""
    if len(expected) != len(actual) or any(e.shape != a.shape for e, a in zip(expected, actual)):
        raise BenchError("the folded model returns outputs of a different structure or shape")
    difference, scale = 0.0, 0.0
    for e, a in zip(expected, actual):
        if e.numel() == 0:
            continue
        e64, a64 = e.detach().double(), a.detach().double()
        same = (e64 == a64) | (e64.isnan() & a64.isnan())  # NaN or inf in the same place agree
        gap = torch.where(same, torch.zeros_like(e64), (e64 - a64).abs().nan_to_num(nan=math.inf))
        difference = max(difference, gap.max().item())
        finite = e64[e64.isfinite()]
        if finite.numel():
            scale = max(scale, finite.abs().max().item())
    return difference, scale


def _check_arms(torch: Any, live: Any, folded: Any, inputs: tuple[Any, ...], reference: list[Any], live_before: int) -> float:
    """Fail unless the original is untouched by the fold and the twin computes its output."""
    if count_live_weight_norms(live) != live_before:
        raise BenchError("folding the second arm changed the original model (its live weight norms)")
    with torch.inference_mode():
        try:
            again = _tensors(live(*inputs))
        except Exception as error:  # noqa: BLE001 - any failure here means the arms are entangled
            raise BenchError(f"folding the second arm broke the original model: {error}") from error
        folded_output = _tensors(folded(*inputs))
    if not reference:
        raise BenchError("the model returned no tensor to compare")
    dtype = _dtype_name(reference[0].dtype)
    tolerance = _RELATIVE_TOLERANCE.get(dtype, 1e-4)
    drift, scale = _max_abs_difference(torch, reference, again)
    if drift > tolerance * max(scale, 1.0):
        raise BenchError(f"folding the second arm changed the original model's output (max abs difference {drift:.3g})")
    difference, scale = _max_abs_difference(torch, reference, folded_output)
    if not difference <= tolerance * max(scale, 1.0):  # also catches NaN
        raise BenchError(
            f"the folded model's output differs from the live model's (max abs difference {difference:.3g}); "
            "not timing two different computations"
        )
    return difference


def _synchronizer(torch: Any, device: Any) -> Callable[[], None]:
    """Wait for queued device work, so a call's time is its execution, not its launch."""
    if device.type == "cpu":
        return lambda: None
    backend = getattr(torch, device.type, None)
    synchronize = getattr(backend, "synchronize", None)
    if synchronize is None:
        raise BenchError(f"cannot synchronise device type {device.type!r}")
    return lambda: synchronize(device)


def _time_pairs(
    torch: Any,
    live: Any,
    folded: Any,
    inputs: tuple[Any, ...],
    warmup: int,
    iterations: int,
    synchronize: Callable[[], None],
) -> tuple[list[float], list[float]]:
    """Per-call seconds of each arm, pair by pair, alternating which arm runs first."""
    arms = (live, folded)
    times: tuple[list[float], list[float]] = ([], [])
    with torch.inference_mode(), cyclic_gc_paused(collect_first=True):
        for index in range(warmup):
            for arm in (0, 1) if index % 2 == 0 else (1, 0):
                arms[arm](*inputs)
        synchronize()
        for index in range(iterations):
            for arm in (0, 1) if index % 2 == 0 else (1, 0):
                synchronize()
                start = time.perf_counter_ns()
                arms[arm](*inputs)
                synchronize()
                times[arm].append((time.perf_counter_ns() - start) * 1e-9)
    return times


@contextlib.contextmanager
def _threads(torch: Any, threads: int | None) -> Iterator[None]:
    """Set torch's intra-op thread count for the run, then restore it."""
    if threads is None:
        yield
        return
    if threads < 1:
        raise BenchError(f"threads must be at least 1, got {threads}")
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
