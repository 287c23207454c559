"""Source-lint speed on a real tree: wnaudit vs ruff (a floor for reading the tree) vs TorchFix.

The tree is the ``transformers`` source from its pinned PyPI wheel, unpacked
(never installed) under ``benchmarks/.cache``.  ruff and TorchFix go into a
separate virtual environment there.  Each tool runs as a fresh process; wall
time and peak RSS come from ``/usr/bin/time``, reported as
the median of ``--runs`` runs, the arms alternating inside each round.

TorchFix is far slower (libcst metadata on every file), so by default it runs
on a deterministic sample of files and its time is extrapolated by line count;
the output says so.

wnaudit runs four ways: cold with ``--no-cache``, cold with an empty cache
(it writes the cache: a fresh ``WNAUDIT_CACHE_DIR`` each run), warm (the
cache has seen the tree as it is: one unmeasured run before each measured one,
since the round before edited a file) and warm after an edit (a comment added
to or removed from one weight-normed model file before each such run, as a
developer's next lint sees it; the file is restored at the end); the cache
never changes the output.
Every wnaudit arm imports wnaudit from compiled bytecode, as an installed
package does: ``PYTHONDONTWRITEBYTECODE`` is dropped and the bytecode goes to
a scratch ``PYTHONPYCACHEPREFIX`` (compiled by the priming run), never into
the repository.  ``--source-bytecode`` keeps the environment's setting instead.

``--tree DIR`` lints a directory of packages side by side instead (issue 21: at
least 2 M lines, e.g. the unpacked packages of ``benchmarks/serving_eval`` plus
another real package), every rule on (``--select ALL``, WN110 included);
``--one-file`` and ``--edit-file`` name files inside it, and ``--jobs 1,2``
adds one cold arm per worker count (how cold time scales with ``-j``).

    python benchmarks/lint_speed.py --runs 5
    python benchmarks/lint_speed.py --runs 7 --skip-torchfix --ruff /tmp/ruffenv/bin/ruff
    python benchmarks/lint_speed.py --runs 3 --skip-torchfix --ruff "$(command -v ruff)" --tree /tmp/tree \
        --one-file snac-1.2.1/snac/layers.py --edit-file snac-1.2.1/snac/layers.py --jobs 1,2
"""

from __future__ import annotations

import argparse
import os
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

TRANSFORMERS_VERSION = "5.24.0"
HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
TOOLS_VENV = CACHE / "tools-venv"


def ensure_tree(version: str) -> Path:
    tree = CACHE / f"transformers-{version}"
    if (tree / "transformers").is_dir():
        return tree
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", f"transformers=={version}", "-d", str(CACHE)],
        check=True,
    )
    wheel = next(CACHE.glob(f"transformers-{version}-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.namelist() if m.startswith("transformers/")]
        archive.extractall(tree, members)
    return tree


def ensure_tools() -> Path:
    bin_dir = TOOLS_VENV / "bin"
    if not (bin_dir / "ruff").exists() or not (bin_dir / "torchfix").exists():
        subprocess.run([sys.executable, "-m", "venv", str(TOOLS_VENV)], check=True)
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "ruff", "torchfix"], check=True)
    return bin_dir


def measure(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one run of ``command``."""
    timer = shutil.which("time") or "/usr/bin/time"
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        start = time.perf_counter()
        subprocess.run(
            [timer, "-f", "%M", "-o", report.name, *command], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - start
        peak_kib = float(report.read().strip().splitlines()[-1])
    return wall, peak_kib / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--version", default=TRANSFORMERS_VERSION)
    parser.add_argument("--torchfix-sample", type=int, default=40, help="files for TorchFix (0: whole tree, very slow)")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--ruff", type=Path, help="a ruff executable to use (then nothing is installed when --skip-torchfix)")
    parser.add_argument("--source-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as the environment has it")
    parser.add_argument("--tree", type=Path, help="a directory of packages to lint whole, instead of the transformers wheel")
    parser.add_argument("--one-file", default="transformers/models/univnet/modeling_univnet.py", help="the one-file arm's file")
    parser.add_argument("--edit-file", default="transformers/models/univnet/modeling_univnet.py", help="the file edited between runs")
    parser.add_argument("--select", default="", help="rule selection for every wnaudit arm (default: ALL with --tree)")
    parser.add_argument("--jobs", default="", help="comma-separated -j values, one extra cold --no-cache arm each")
    args = parser.parse_args()

    tree = args.tree.resolve() if args.tree is not None else ensure_tree(args.version)
    tools = args.ruff.parent if args.ruff is not None and args.skip_torchfix else ensure_tools()
    target = "." if args.tree is not None else "transformers"
    files = sorted((tree / target).rglob("*.py"))
    lines = {f: f.read_bytes().count(b"\n") for f in files}
    total_lines = sum(lines.values())
    select = args.select or ("ALL" if args.tree is not None else "")
    selection = ["--select", select] if select else []
    wnaudit = [sys.executable, "-m", "wnaudit.cli", "-q", "--exit-zero", *selection, target]
    one_file = [sys.executable, "-m", "wnaudit.cli", "-q", "--exit-zero", *selection, args.one_file]
    ruff_bin = str(args.ruff or tools / "ruff")
    ruff = [ruff_bin, "check", "--no-cache", "--isolated", "-q", "--exit-zero", target]
    # ruff's default keeps its own cache (``.ruff_cache`` in the tree): primed once, like wnaudit's warm arm.
    ruff_cached = [ruff_bin, "check", "--isolated", "-q", "--exit-zero", target]
    scratch = Path(tempfile.mkdtemp(prefix="wnaudit-bench-cache-"))
    base_env = dict(os.environ)
    if not args.source_bytecode:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        base_env["PYTHONPYCACHEPREFIX"] = str(scratch / "bytecode")
    warm_env = {**base_env, "WNAUDIT_CACHE_DIR": str(scratch / "warm")}
    edited = tree / args.edit_file
    original = edited.read_bytes()
    edit_mark = b"\n# an edit between two lint runs\n"

    def toggle_edit() -> None:
        current = edited.read_bytes()
        edited.write_bytes(current[: -len(edit_mark)] if current.endswith(edit_mark) else current + edit_mark)

    subprocess.run(wnaudit, cwd=tree, env=warm_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # primes it
    subprocess.run(ruff_cached, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    arms = {
        "wnaudit (cold, --no-cache)": (wnaudit + ["--no-cache"], base_env),
        "wnaudit (cold, writes the cache)": (wnaudit, "fresh"),
        "wnaudit (warm)": (wnaudit, warm_env),
        "wnaudit (warm, one file edited)": (wnaudit, warm_env),
        "wnaudit (one file, warm)": (one_file, warm_env),
        "ruff check --no-cache": (ruff, None),
        "ruff check (its cache, warm)": (ruff_cached, None),
    }
    job_counts = [int(j) for j in args.jobs.split(",") if j.strip()]
    for jobs in job_counts:
        arms[f"wnaudit (cold, --no-cache, -j {jobs})"] = (wnaudit + ["--no-cache", "-j", str(jobs)], base_env)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
    try:
        for round_ in range(args.runs):
            for name, (command, env) in arms.items():
                if env == "fresh":
                    env = {**base_env, "WNAUDIT_CACHE_DIR": str(scratch / f"cold-{round_}")}
                if "edited" in name:
                    toggle_edit()
                if name == "wnaudit (warm)":  # warm: the cache has seen the tree as it is (the last round edited a file)
                    subprocess.run(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                results[name].append(measure(command, tree, env if isinstance(env, dict) else None))
    finally:
        edited.write_bytes(original)
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(tree / ".ruff_cache", ignore_errors=True)

    summary = {
        "tree": (f"{tree}: {len(files)} files, {total_lines} lines, {sum(f.stat().st_size for f in files)} bytes"
                 if args.tree is not None else f"transformers {args.version} wheel: {len(files)} files, {total_lines} lines"),
        "wnaudit selection": select or "default",
        "runs": args.runs,
        "bytecode": "environment's setting" if args.source_bytecode else "compiled once (scratch PYTHONPYCACHEPREFIX)",
        "load_average_1min_at_end": os.getloadavg()[0],
    }
    for name, samples in results.items():
        summary[name] = {
            "wall_s_median": round(statistics.median(s[0] for s in samples), 3),
            "peak_rss_mib_median": round(statistics.median(s[1] for s in samples), 1),
        }
    if not args.skip_torchfix:
        sample = files if args.torchfix_sample == 0 else sorted(random.Random(0).sample(files, args.torchfix_sample))
        sample_lines = sum(lines[f] for f in sample)
        torchfix = [str(tools / "torchfix"), *[str(f.relative_to(tree)) for f in sample]]
        wall, rss = measure(torchfix, tree)
        summary["torchfix"] = {
            "files": len(sample),
            "lines": sample_lines,
            "wall_s": round(wall, 2),
            "peak_rss_mib": round(rss, 1),
            "extrapolated_tree_wall_s": round(wall * total_lines / max(sample_lines, 1), 1),
            "note": "one run on a seeded sample, extrapolated by line count" if args.torchfix_sample else "whole tree",
        }
    ruff_wall = max(summary["ruff check --no-cache"]["wall_s_median"], 1e-9)
    compared = ("wnaudit (cold, --no-cache)", "wnaudit (warm)", "wnaudit (warm, one file edited)", "wnaudit (one file, warm)")
    for name in (*compared, *(f"wnaudit (cold, --no-cache, -j {jobs})" for jobs in job_counts)):
        summary[f"{name} / ruff wall ratio"] = round(summary[name]["wall_s_median"] / ruff_wall, 2)
        summary[f"{name} / ruff wall ratio (paired, median)"] = round(statistics.median(
            w[0] / r[0] for w, r in zip(results[name], results["ruff check --no-cache"])
        ), 3)
    summary["wnaudit (warm) / ruff warm wall ratio (paired, median)"] = round(statistics.median(
        w[0] / r[0] for w, r in zip(results["wnaudit (warm)"], results["ruff check (its cache, warm)"])
    ), 3)
    summary["warm / cold wall ratio (paired, median)"] = round(statistics.median(
        w[0] / c[0] for w, c in zip(results["wnaudit (warm)"], results["wnaudit (cold, --no-cache)"])
    ), 3)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
