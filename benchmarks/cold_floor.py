"""How far a cold source lint is from its floor, and where the rest goes (issue 21's cold ratio).

Issue 21 asks a cold run (``--no-cache``, every rule on, WN110 included) to be
no slower than ``ruff check --no-cache``.  This puts three measured runs beside
the least any linter built on CPython's ``ast`` must spend on the same tree:

Runs (fresh processes, the arms alternating in each round; wall time, and the
CPU time of the process and every worker it started, from ``getrusage``):

- ``ruff check --no-cache --isolated``;
- ``wnaudit --no-cache --select ALL --ignore WN110`` (every rule but the
  project-wide one);
- ``wnaudit --no-cache --select ALL``.

Floors (in this process, one core, CPU time, median of the rounds), for each of
the two wnaudit lints:

- *bytes*: read every source file the lint finds in the tree (``discover``),
  digest it and take its byte facts (``content.facts_of``): what the prefilter
  needs before deciding;
- *parse*: ``ast.parse`` of every file a cold ``-j 1`` run of that lint parses
  under the file's name (the candidates, the modules their imports reach and,
  with WN110, its serving files; a parse of a source without its name, a few
  helpers' second look at a file, is not counted), each tree dropped before
  the next one is built;
- *walk*: one ``ast.walk`` over each of those trees: less than any visitor.

The sum of a lint's floors, shared perfectly between ``--cores`` cores, is the
best a cold run could do with one parse and one walk per file and nothing else:
the room left for every rule, WN110's linking and the report is the target's
wall time minus it.

    python benchmarks/cold_floor.py --tree /tmp/tree --ruff "$(command -v ruff)" --runs 3
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections
import contextlib
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from wnaudit.cli.discovery import discover
from wnaudit.common.config import Config
from wnaudit.source.content import facts_of
from wnaudit.common.cache import digest_of


def run_arm(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (the process and its waited-for workers) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


#: The two lints measured, each with its own floor: every rule, and every rule but the project-wide one.
SELECTIONS = {"every rule": ["--select", "ALL"], "without WN110": ["--select", "ALL", "--ignore", "WN110"]}


def record_parsed(tree: Path, out: Path, selection: list[str]) -> None:
    """Run the cold lint in this process with ``-j 1`` (no workers) and write the files it parsed to ``out``."""
    parsed: set[str] = set()
    real_compile = builtins.compile

    def observed_compile(source, filename, mode, flags=0, *args, **kwargs):  # type: ignore[no-untyped-def]
        if flags & ast.PyCF_ONLY_AST:
            parsed.add(os.fspath(filename))
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    builtins.compile = observed_compile  # ``ast.parse`` calls it too
    from wnaudit.cli.command import main

    os.chdir(tree)
    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["--no-cache", "--exit-zero", "-q", *selection, "-j", "1", "."], standalone_mode=False)
    files = sorted({str((tree / name).resolve()) for name in parsed if (tree / name).is_file()})  # one name per file
    out.write_text(json.dumps(files))


def parsed_files(tree: Path, selection: str) -> list[Path]:
    """The files a cold ``-j 1`` lint with ``selection`` parses (recorded in a fresh process)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "parsed.json"
        command = [sys.executable, __file__, "--tree", str(tree), "--record-parsed", str(out), "--selection", selection]
        subprocess.run(command, check=True)
        return [Path(name) for name in json.loads(out.read_text())]


def cpu_of(work: Callable[[], None]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def bytes_floor(every_file: list[Path]) -> float:
    """CPU seconds to read, digest and take the byte facts of every file (what the prefilter decides from)."""

    def read_all() -> None:
        for path in every_file:
            data = path.read_bytes()
            digest_of(data)
            facts_of(data)

    return cpu_of(read_all)


def tree_floors(parsed: list[Path]) -> dict[str, float]:
    """CPU seconds to parse each file once and to walk each tree once (each tree dropped before the next)."""
    parse = walk = 0.0
    for path in parsed:
        data = path.read_bytes()
        start = time.process_time()
        built = ast.parse(data)
        parsed_at = time.process_time()
        collections.deque(ast.walk(built), maxlen=0)
        parse, walk = parse + parsed_at - start, walk + time.process_time() - parsed_at
    return {"parse": parse, "walk": walk}


def run_rounds(
    tree: Path, every_file: list[Path], ruff: str, runs: int, parsed: dict[str, list[Path]],
) -> tuple[dict, list[dict[str, float]]]:
    """The arms, alternating in each round, then the floors of that round."""
    scratch = Path(tempfile.mkdtemp(prefix="wnaudit-floor-"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # wnaudit from bytecode, as an installed package runs
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "bytecode")
    wnaudit = [sys.executable, "-m", "wnaudit.cli", "--no-cache", "-q", "--exit-zero"]
    arms = {"ruff check --no-cache": [ruff, "check", "--no-cache", "--isolated", "-q", "--exit-zero", "."]}
    arms.update({f"wnaudit cold, {name}": [*wnaudit, *selection, "."] for name, selection in SELECTIONS.items()})
    subprocess.run(arms["wnaudit cold, every rule"], cwd=tree, env=env, capture_output=True, check=False)  # compiles wnaudit
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
    floor_rounds: list[dict[str, float]] = []
    try:
        for _ in range(runs):
            for name, command in arms.items():
                samples[name].append(run_arm(command, tree, env))
            found = {"bytes": bytes_floor(every_file)}
            for name, files in parsed.items():
                found.update({f"{part} ({name})": cpu for part, cpu in tree_floors(files).items()})
            floor_rounds.append(found)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return samples, floor_rounds


def report(
    tree: Path, every_file: list[Path], cores: int, samples: dict, floor_rounds: list[dict[str, float]],
    parsed: dict[str, list[Path]],
) -> dict:
    """Medians, ratios to ruff paired by round, and each lint's floor as a wall time on ``cores`` cores."""
    ruff_walls = [wall for wall, _ in samples["ruff check --no-cache"]]
    summary: dict[str, object] = {
        "tree": f"{tree}: {len(every_file)} files, {sum(f.stat().st_size for f in every_file)} bytes",
        "runs": len(ruff_walls),
        "cores": cores,
        "load_average_1min_at_end": os.getloadavg()[0],
    }
    for name, runs in samples.items():
        summary[name] = {
            "wall_s_median": round(statistics.median(wall for wall, _ in runs), 2),
            "cpu_s_median": round(statistics.median(cpu for _, cpu in runs), 2),
            "wall / ruff (paired, median)": round(statistics.median(w / r for (w, _), r in zip(runs, ruff_walls)), 2),
        }
    floor = {key: round(statistics.median(r[key] for r in floor_rounds), 2) for key in floor_rounds[0]}
    summary["floors, cpu_s (median, one core)"] = floor
    for name, files in parsed.items():
        cpu = floor["bytes"] + floor[f"parse ({name})"] + floor[f"walk ({name})"]
        summary[f"floor, {name}"] = {
            "files parsed by a cold -j 1 run": f"{len(files)} files, {sum(f.stat().st_size for f in files)} bytes",
            "cpu_s (bytes + parse + walk)": round(cpu, 2),
            "wall on the cores (cpu / cores)": round(cpu / cores, 2),
            "wall / ruff wall (median)": round(cpu / cores / statistics.median(ruff_walls), 2),
        }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="a directory of packages, linted whole")
    parser.add_argument("--ruff", type=Path, help="a ruff executable (default: ruff on PATH)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="cores the floors are shared between")
    parser.add_argument("--record-parsed", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--selection", choices=sorted(SELECTIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    tree = args.tree.resolve()
    if args.record_parsed is not None:
        record_parsed(tree, args.record_parsed, SELECTIONS[args.selection])
        return
    every_file = discover([tree], Config()).sources
    parsed = {name: parsed_files(tree, name) for name in SELECTIONS}
    samples, floor_rounds = run_rounds(tree, every_file, str(args.ruff or "ruff"), args.runs, parsed)
    print(json.dumps(report(tree, every_file, args.cores, samples, floor_rounds, parsed), indent=2))


if __name__ == "__main__":
    main()
