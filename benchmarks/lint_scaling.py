"""Source-lint cost as the input grows: time per doubling, and memory per byte of source.

Two generated inputs:

* ``helpers``: one file of n small functions ``def f_i(layer): remove_weight_norm(layer)``
  (the shape that was quadratic: every removal looked at every unit of its file);
* ``model``: ``examples/hift_vocoder.py`` repeated until the file has about the
  requested size (classes, loops, weight-norm applications and removals).

Each measurement is a fresh process that imports wnaudit, lints one small
example file (so the modules the lint loads lazily are in), records its peak
RSS (the interpreter with wnaudit loaded), lints the one file in-process
(``jobs=1``, no cache: every round analyses the file) and records the lint's wall time and the new peak RSS; the
extra RSS divided by the file's size is the "bytes per byte" figure.  Sizes
alternate inside each round; medians of ``--runs`` rounds are reported with
the ratio of each size's time to the previous (half) size's.

    python benchmarks/lint_scaling.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODEL_EXAMPLE = REPO / "examples" / "hift_vocoder.py"

PROBE = r"""
import json, resource, sys, time
from pathlib import Path
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
warm = Path(sys.argv[2])  # a tiny file first: modules the lint imports lazily count as the interpreter
lint_files([warm], RunOptions(jobs=1, cache=False))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
result = lint_files([Path(sys.argv[1])], RunOptions(jobs=1, cache=False))  # no cache: every round analyses
wall = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "extra_kib": after - before, "findings": len(result.findings)}))
"""


def write_helpers(path: Path, count: int) -> None:
    lines = ["from torch.nn.utils import remove_weight_norm\n\n"]
    lines.extend(f"def f{i}(layer):\n    remove_weight_norm(layer)\n\n" for i in range(count))
    path.write_text("".join(lines))


def write_model(path: Path, size: int) -> None:
    unit = MODEL_EXAMPLE.read_text()
    path.write_text("\n".join([unit] * max(1, size // len(unit))))


def probe(path: Path) -> dict:
    env_path = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), str(MODEL_EXAMPLE)], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--helpers", type=int, nargs="+", default=[2000, 4000, 8000, 16000])
    parser.add_argument("--model-bytes", type=int, nargs="+", default=[600_000, 1_200_000, 2_400_000, 4_800_000])
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        inputs: dict[str, list[tuple[int, Path]]] = {"helpers": [], "model": []}
        # Each input in a directory of its own: WN110 reads the linted file's project, and the
        # other inputs (same class names, megabytes of them) must not be part of it.
        for count in args.helpers:
            path = Path(scratch) / f"helpers_{count}" / "helpers.py"
            path.parent.mkdir()
            write_helpers(path, count)
            inputs["helpers"].append((count, path))
        for size in args.model_bytes:
            path = Path(scratch) / f"model_{size}" / "model.py"
            path.parent.mkdir()
            write_model(path, size)
            inputs["model"].append((size, path))
        samples: dict[tuple[str, int], list[dict]] = {(k, n): [] for k, items in inputs.items() for n, _ in items}
        for _ in range(args.runs):
            for kind, items in inputs.items():
                for n, path in items:
                    samples[(kind, n)].append(probe(path))
        report: dict[str, list[dict]] = {}
        for kind, items in inputs.items():
            rows = []
            previous: float | None = None
            for n, path in items:
                runs = samples[(kind, n)]
                wall = statistics.median(r["wall_s"] for r in runs)
                extra = statistics.median(r["extra_kib"] for r in runs) * 1024
                size = path.stat().st_size
                rows.append({
                    "n": n,
                    "file_bytes": size,
                    "findings": runs[0]["findings"],
                    "lint_wall_s": round(wall, 3),
                    "ratio_to_half": round(wall / previous, 2) if previous else None,
                    "extra_rss_mib": round(extra / 2**20, 1),
                    "extra_bytes_per_source_byte": round(extra / size, 1),
                })
                previous = wall
            report[kind] = rows
    print(json.dumps({"runs": args.runs, **report}, indent=2))


if __name__ == "__main__":
    main()
