"""What weight norm costs an exported program, and what folding recovers (issue 24).

The issue's stack: 8 x (weight_norm(Conv1d(256, 256, 7, padding=3)) + LeakyReLU)
on a (1, 256, 50) input, CPU, one thread.  Arms, all with identical effective weights:

* export live:    ``torch.export.export(model).module()``, weight norm in the graph
* export folded:  the model folded with ``wnaudit.fold_weight_norm`` before exporting
* export fixed:   the live program folded after export, as ``wnaudit --fix`` writes it
* AOTI live / AOTI folded: ``aoti_compile_and_package`` of the live and folded programs

Every arm's output is checked against the live program's first.  Then each
round times a block of calls of every arm, in a rotated order; reported are
per-arm medians (per call) and the median of the per-round paired ratios.

    python benchmarks/export_speed.py --rounds 15 --calls 30
    python benchmarks/export_speed.py --no-aoti      # skip the two AOTInductor compiles
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

import wnaudit
from wnaudit.exported.archive import read_archive
from wnaudit.exported.graph import find_weight_norms
from wnaudit.exported.program_fold import fold_program


def stack() -> nn.Module:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(8):
        layers += [weight_norm(nn.Conv1d(256, 256, 7, padding=3)), nn.LeakyReLU(0.1)]
    return nn.Sequential(*layers).eval()


def _fixed_program(live: torch.export.ExportedProgram, directory: Path) -> torch.export.ExportedProgram:
    path = directory / "live.pt2"
    torch.export.save(live, path)
    sites = find_weight_norms(read_archive(path).models[0].program)
    folded, names = fold_program(torch.export.load(path), sites)
    assert len(names) == 8, names
    return folded


def build_arms(x: torch.Tensor, aoti: bool, directory: Path) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    live_model, folded_model = stack(), stack()
    wnaudit.fold_weight_norm(folded_model)
    live = torch.export.export(live_model, (x,))
    folded = torch.export.export(folded_model, (x,))
    arms: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "export live": live.module(),
        "export folded": folded.module(),
        "export fixed": _fixed_program(live, directory).module(),
    }
    if aoti:
        for name, program in (("AOTI live", live), ("AOTI folded", folded)):
            started = time.perf_counter()
            path = torch._inductor.aoti_compile_and_package(program, package_path=str(directory / f"{name.replace(' ', '_')}.pt2"))
            arms[name] = torch._inductor.aoti_load_package(path)
            print(f"compiled {name} in {time.perf_counter() - started:.0f} s")
    return arms


def measure(arms: dict[str, Callable[[torch.Tensor], torch.Tensor]], x: torch.Tensor, rounds: int, calls: int) -> dict[str, list[float]]:
    names = list(arms)
    times: dict[str, list[float]] = {name: [] for name in names}
    with torch.inference_mode():
        reference = arms["export live"](x)
        for name in names:
            difference = (arms[name](x) - reference).abs().max().item()
            print(f"{name}: max |diff| to export live = {difference:.3g}")
            for _ in range(3):
                arms[name](x)
        for index in range(rounds):
            order = names[index % len(names):] + names[: index % len(names)]
            for name in order:
                start = time.perf_counter_ns()
                for _ in range(calls):
                    arms[name](x)
                times[name].append((time.perf_counter_ns() - start) / calls / 1e6)
    return times


def report(times: dict[str, list[float]]) -> None:
    print("| arm | median per call | paired ratio to its live arm |")
    print("|---|---|---|")
    for name, values in times.items():
        base = "AOTI live" if name.startswith("AOTI") else "export live"
        ratios = [a / b for a, b in zip(values, times[base])]
        print(f"| {name} | {statistics.median(values):.3f} ms | {statistics.median(ratios):.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-aoti", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    x = torch.randn(1, 256, 50, generator=torch.Generator().manual_seed(0))
    with tempfile.TemporaryDirectory() as directory:
        arms = build_arms(x, not args.no_aoti, Path(directory))
        report(measure(arms, x, args.rounds, args.calls))


if __name__ == "__main__":
    main()
