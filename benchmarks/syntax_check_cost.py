"""What reporting syntax errors in every file costs the source lint (issue 14).

Before, a file that names no weight-norm API was read, searched and decoded,
never parsed; now it is also parsed (``compile(..., ast.PyCF_ONLY_AST)``, the
parse the analysis itself uses) so that a syntax error in it is reported.  This
times both per-file paths on one tree, in-process, CPU time, arms alternating
in each round, and prints the medians and their ratio.

    python benchmarks/syntax_check_cost.py TREE [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from wnaudit.source.engine import check_syntax
from wnaudit.source.reading import decode, may_have_findings


def _prefilter_only(data: list[bytes]) -> None:
    for item in data:
        if not may_have_findings(item):
            decode(item)


def _prefilter_and_parse(data: list[bytes]) -> None:
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
    arms = {"prefilter (before)": _prefilter_only, "prefilter + parse (now)": _prefilter_and_parse}
    times: dict[str, list[float]] = {name: [] for name in arms}
    for round_ in range(args.runs):
        order = list(arms) if round_ % 2 == 0 else list(arms)[::-1]
        for name in order:
            start = time.process_time()
            arms[name](data)
            times[name].append(time.process_time() - start)
    size = sum(map(len, data))
    print(f"{len(data)} files, {size / 1e6:.1f} MB, {sum(not may_have_findings(d) for d in data)} without an API name")
    for name, values in times.items():
        print(f"{name:>26}: median {statistics.median(values):.3f} s CPU  {[round(v, 3) for v in values]}")
    before, now = (statistics.median(times[name]) for name in arms)
    print(f"added per MB: {(now - before) / (size / 1e6) * 1000:.0f} ms CPU (serial; the lint spreads it over -j workers)")


if __name__ == "__main__":
    main()
