"""What a live weight norm costs a vocoder forward, and what folding recovers.

Four arms of the same HiFi-GAN/HiFT-style vocoder (wnaudit.testing.vocoder,
MEDIUM config: 83 weight-normed convolutions) with identical effective weights:

* live-modern: torch.nn.utils.parametrizations.weight_norm left in place
* live-legacy: torch.nn.utils.weight_norm (forward-pre-hook) left in place
* folded:      the live-modern model after wnaudit.fold_weight_norm
* plain:       the same architecture built without weight norm (the limit)

All arms run in one process, interleaved: each round calls every arm once, in
a rotated order, on the same input.  Reported: per-arm median, and for each
comparison the median of the per-round paired ratio and paired difference.

    python benchmarks/fold_speed.py --frames 24 50 300 --rounds 60
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import torch

import wnaudit
from wnaudit.testing.vocoder import MEDIUM, build_vocoder, example_input


def _arms() -> dict[str, torch.nn.Module]:
    live_modern = build_vocoder("modern", config=MEDIUM)
    live_legacy = build_vocoder("legacy", config=MEDIUM)
    folded = build_vocoder("modern", config=MEDIUM)
    count = len(wnaudit.fold_weight_norm(folded))
    plain = build_vocoder(None, config=MEDIUM)
    plain.load_state_dict(folded.state_dict(), strict=True)
    print(f"folded {count} weight norms")
    return {"live-modern": live_modern, "live-legacy": live_legacy, "folded": folded, "plain": plain}


def _time(call: Callable[[], torch.Tensor]) -> float:
    start = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - start) / 1e6


def run(frames: int, rounds: int, warmup: int) -> None:
    arms = _arms()
    x = example_input(frames, MEDIUM)
    names = list(arms)
    with torch.inference_mode():
        reference = arms["plain"](x)
        for name, model in arms.items():
            diff = (model(x) - reference).abs().max().item()
            print(f"  {name:12s} max |out - plain| = {diff:.3g}")
        for _ in range(warmup):
            for model in arms.values():
                model(x)
        times: dict[str, list[float]] = {name: [] for name in names}
        for round_index in range(rounds):
            order = names[round_index % len(names) :] + names[: round_index % len(names)]
            for name in order:
                times[name].append(_time(lambda: arms[name](x)))
    print(f"\n{frames} mel frames, {rounds} rounds, {torch.get_num_threads()} threads")
    for name in names:
        print(f"  {name:12s} median {statistics.median(times[name]):8.2f} ms")
    for a, b in (("folded", "live-modern"), ("folded", "live-legacy"), ("folded", "plain")):
        ratios = [x / y for x, y in zip(times[a], times[b])]
        diffs = [x - y for x, y in zip(times[a], times[b])]
        print(
            f"  {a} vs {b:12s} paired ratio median {statistics.median(ratios):.3f}"
            f"  paired diff median {statistics.median(diffs):+.2f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, nargs="+", default=[24, 50, 300])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, wnaudit {wnaudit.__version__}")
    for frames in args.frames:
        run(frames, args.rounds, args.warmup)


if __name__ == "__main__":
    main()
