"""What reporting syntax errors in every file costs the source lint (issue 14, issue 16).

Before issue 14, a file that names no weight-norm API was read, searched and
decoded, never parsed; issue 14 parsed it too, building the tree
(``compile(..., ast.PyCF_ONLY_AST)``, ``engine.parse_syntax``), so that a syntax
error in it is reported; now ``engine.check_syntax`` lets the bytecode compiler
accept it (no Python objects for the tree) and builds the tree only when the
compiler objects or warns.  This times the three per-file paths on one tree,
in-process, CPU time, arms alternating in each round, and prints the medians
and the cost per MB over the prefilter alone.

    python benchmarks/syntax_check_cost.py TREE [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from wnaudit.source.engine import check_syntax, parse_syntax
from wnaudit.source.reading import decode, may_have_findings


def _prefilter_only(data: list[bytes]) -> None:
    for item in data:
        if not may_have_findings(item):
            decode(item)


def _prefilter_and_parse(data: list[bytes]) -> None:
    for item in data:
        if not may_have_findings(item):
            try:
                parse_syntax(decode(item).text, "<bench>")
            except ValueError:
                pass


def _prefilter_and_check(data: list[bytes]) -> None:
    for item in data:
        if not may_have_findings(item):
            try:
                check_syntax(decode(item).text, "<bench>")
            except ValueError:
                pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    data = [path.read_bytes() for path in sorted(args.tree.rglob("*.py"))]
    arms = {
        "prefilter (before issue 14)": _prefilter_only,
        "prefilter + tree parse (14)": _prefilter_and_parse,
        "prefilter + check (now)": _prefilter_and_check,
    }
    times: dict[str, list[float]] = {name: [] for name in arms}
    for round_ in range(args.runs):
        order = list(arms)[round_ % len(arms):] + list(arms)[: round_ % len(arms)]
        for name in order:
            start = time.process_time()
            arms[name](data)
            times[name].append(time.process_time() - start)
    size = sum(map(len, data))
    print(f"{len(data)} files, {size / 1e6:.1f} MB, {sum(not may_have_findings(d) for d in data)} without an API name")
    for name, values in times.items():
        print(f"{name:>26}: median {statistics.median(values):.3f} s CPU  {[round(v, 3) for v in values]}")
    before, tree, now = (statistics.median(times[name]) for name in arms)
    for name, value in (("tree parse", tree), ("check", now)):
        print(f"{name} added per MB: {(value - before) / (size / 1e6) * 1000:.0f} ms CPU (serial; the lint spreads it over -j workers)")
    print(f"check / tree parse (medians): {(now - before) / max(tree - before, 1e-9):.2f}")


if __name__ == "__main__":
    main()
