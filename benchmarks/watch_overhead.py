"""What a call costs under wnaudit.watch(): watched vs unwatched, paired.

The model is wnaudit.testing.vocoder (SMALL config by default: 31 weight-normed convolutions, a HiFT-style
F0 predictor), live (modern weight norm) and folded.  For each model, three arms run alternately in one
process, each round in a rotated order, on the same input under torch.inference_mode():

* plain:     model(x)
* watched:   with wnaudit.watch(model): model(x)   (a new watch per call, as the pytest plugin makes per test)
* re-entered: one watch entered again around each call (its indexes already built)
* bare mode: a pass-through TorchDispatchMode that records nothing (the floor any dispatch-mode tool pays,
  FlopCounterMode included)

Every watched output is checked equal to the unwatched one.  Reported: per-arm median and the median of
the per-round paired ratio watched / plain.

    python benchmarks/watch_overhead.py --frames 32 --rounds 40
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import wnaudit
from wnaudit.testing.vocoder import MEDIUM, SMALL, build_vocoder, example_input


def _time(call: Callable[[], object]) -> float:
    start = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - start) / 1e6


class _PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return func(*args, **(kwargs or {}))


def _arms(model: torch.nn.Module, x: torch.Tensor) -> dict[str, Callable[[], object]]:
    reused = wnaudit.watch(model)

    def watched() -> object:
        with wnaudit.watch(model):
            return model(x)

    def reentered() -> object:
        with reused:
            return model(x)

    def bare() -> object:
        with _PassThrough():
            return model(x)

    return {"plain": lambda: model(x), "watched": watched, "re-entered": reentered, "bare mode": bare}


def run(label: str, model: torch.nn.Module, x: torch.Tensor, rounds: int, warmup: int) -> None:
    arms = _arms(model, x)
    names = list(arms)
    with torch.inference_mode():
        reference = arms["plain"]()
        for name in names[1:]:
            assert torch.equal(arms[name](), reference), f"{name}: the watch changed the output"  # type: ignore[arg-type]
        for _ in range(warmup):
            for call in arms.values():
                call()
        times: dict[str, list[float]] = {name: [] for name in names}
        for round_index in range(rounds):
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                times[name].append(_time(arms[name]))
    print(f"\n{label}: {rounds} rounds, {torch.get_num_threads()} threads")
    for name in names:
        print(f"  {name:10s} median {statistics.median(times[name]):8.2f} ms")
    for name in names[1:]:
        ratios = [a / b for a, b in zip(times[name], times["plain"])]
        diffs = [a - b for a, b in zip(times[name], times["plain"])]
        print(f"  {name:10s} / plain: paired ratio median {statistics.median(ratios):.3f}, "
              f"paired diff median {statistics.median(diffs):+.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--medium", action="store_true", help="the serving-sized (MEDIUM, 83 weight norms) config")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = MEDIUM if args.medium else SMALL
    x = example_input(args.frames, config)
    live = build_vocoder("modern", config=config)
    folded = build_vocoder("modern", config=config)
    count = len(wnaudit.fold_weight_norm(folded))
    print(f"{count} weight norms; {args.frames} mel frames")
    run("live weight norm", live, x, args.rounds, args.warmup)
    run("folded", folded, x, args.rounds, args.warmup)


if __name__ == "__main__":
    main()
