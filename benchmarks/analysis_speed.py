"""CPU time of the per-file analysis (``analysis.analyze``) over a tree's ``.py`` files: this checkout against a git ref.

Both analyzers are loaded in one process (the ref's ``wnaudit`` extracted with
``git archive`` and imported as ``wnaudit_base``) and run over every readable
``.py`` file of the tree in alternating rounds, each with the providers its
own rules declare; the files are read once, before timing.  Reported: each
arm's CPU seconds per round, the medians, the ratio of medians and the median
of the paired ratios (this checkout over the ref), and whether both gave the
same summaries (compared by ``repr``).  For a refactor of the analysis: the
summaries must be the same and the ratio about 1.

    python benchmarks/analysis_speed.py --tree /tmp/tree --base main --rounds 8
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _base_package(ref: str, into: Path) -> str:
    """The ref's ``wnaudit`` extracted under ``into`` as ``wnaudit_base`` (its imports are relative)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "wnaudit"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "wnaudit").rename(into / "wnaudit_base")
    return "wnaudit_base"


def _sources(tree: Path) -> list[tuple[str, str, str]]:
    out = []
    for path in sorted(tree.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.append((str(path), text, ".".join(path.relative_to(tree).with_suffix("").parts)))
    return out


def _arm(package: str) -> tuple[Any, tuple]:
    analysis = importlib.import_module(f"{package}.source.analysis")
    rules = importlib.import_module(f"{package}.source.rules")
    return analysis.analyze, rules.declared_providers()


def _run(arm: tuple[Any, tuple], sources: list[tuple[str, str, str]]) -> tuple[float, list[str]]:
    analyze, providers = arm
    out: list[Any] = []
    gc.collect()
    start = time.process_time()
    for path, text, module in sources:
        try:
            out.append(analyze(text, path, module, providers=providers))
        except (SyntaxError, ValueError) as error:
            out.append(error)
    elapsed = time.process_time() - start
    return elapsed, [repr(s) for s in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--base", default="main", help="git ref to compare with (default: main)")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    sources = _sources(args.tree)
    with tempfile.TemporaryDirectory() as scratch:
        sys.path[:0] = [str(REPO), scratch]
        arms = {"base": _arm(_base_package(args.base, Path(scratch))), "here": _arm("wnaudit")}
        times: dict[str, list[float]] = {"base": [], "here": []}
        seen: dict[str, list[str]] = {}
        for round_ in range(args.rounds):
            for name in ("base", "here") if round_ % 2 == 0 else ("here", "base"):
                elapsed, summaries = _run(arms[name], sources)
                times[name].append(elapsed)
                seen.setdefault(name, summaries)
    print(f"{len(sources)} files; same summaries: {seen['base'] == seen['here']}")
    for name, values in times.items():
        print(f"{name}: {' '.join(f'{t:.2f}' for t in values)} s; median {statistics.median(values):.3f} s")
    paired = statistics.median(h / b for h, b in zip(times["here"], times["base"]))
    print(f"here/base: medians {statistics.median(times['here']) / statistics.median(times['base']):.3f}, paired {paired:.3f}")


if __name__ == "__main__":
    main()
