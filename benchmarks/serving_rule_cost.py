"""What WN110's project-wide search costs on a whole tree: the lint with the rule and without it.

WN110 reads, besides the linted files and what they import, the files of the
project that import them (the serving code).  This measures that price on the
transformers wheel tree (``lint_speed.ensure_tree``): ``wnaudit -q --no-cache``
with every rule, and with ``--ignore WN110`` (the rule then does not run at
all), as fresh processes, the two arms alternating in each round; the median
ratio is the cost.  It also checks that the two runs differ by WN110 findings
only.

    python benchmarks/serving_rule_cost.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lint_speed import TRANSFORMERS_VERSION, ensure_tree, measure  # noqa: E402


def _findings(tree: Path, extra: list[str]) -> list[tuple]:
    out = subprocess.run(
        [sys.executable, "-m", "wnaudit.cli", "--no-cache", "--exit-zero", "--output-format", "json", *extra, "transformers"],
        cwd=tree, capture_output=True, text=True, check=True,
    ).stdout
    return sorted((f["code"], f["path"], f["line"]) for f in json.loads(out)["findings"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--version", default=TRANSFORMERS_VERSION)
    args = parser.parse_args()
    tree = ensure_tree(args.version)
    with_rule = [sys.executable, "-m", "wnaudit.cli", "-q", "--no-cache", "--exit-zero", "transformers"]
    without = [*with_rule[:-1], "--ignore", "WN110", "transformers"]
    walls: dict[str, list[float]] = {"with": [], "without": []}
    peaks: dict[str, list[float]] = {"with": [], "without": []}
    ratios = []
    for _ in range(args.runs):
        pair = {}
        for name, command in (("without", without), ("with", with_rule)):
            wall, peak = measure(command, tree)
            walls[name].append(wall)
            peaks[name].append(peak)
            pair[name] = wall
        ratios.append(pair["with"] / pair["without"])
    everything, rest = _findings(tree, []), _findings(tree, ["--ignore", "WN110"])
    extra = [f for f in everything if f not in rest]
    assert all(code == "WN110" for code, _, _ in extra) and all(f in everything for f in rest)
    print(json.dumps({
        "tree": f"transformers {args.version} wheel",
        "runs": args.runs,
        "median wall with WN110 (s)": round(statistics.median(walls["with"]), 2),
        "median wall without WN110 (s)": round(statistics.median(walls["without"]), 2),
        "median paired ratio": round(statistics.median(ratios), 3),
        "median peak RSS with / without (MiB)": [round(statistics.median(peaks["with"]), 1), round(statistics.median(peaks["without"]), 1)],
        "WN110 findings": len(extra),
        "other findings unchanged": len(rest),
    }, indent=2))


if __name__ == "__main__":
    main()
