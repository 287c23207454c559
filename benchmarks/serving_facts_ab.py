"""Does a change to the serving-facts code make a parse's serving walk slower? Two checkouts, one process.

Times ``read_serving_facts`` (decode, parse, walk, link) on each ``.py`` file
of a tree with the worktree's ``wnaudit`` and with another checkout's
(``--base``: the ``wnaudit`` folder of, say, ``git archive main wnaudit | tar
-x -C /tmp/base``), copied as the package ``wnaudit_base`` so both load side
by side.  Per file, the two arms alternate ``--repeats`` times (the order
swapped each time) and each keeps its fastest run: on a busy machine the
minimum is what the code costs, and alternating file by file leaves no arm
the quieter minutes.  Reports each arm's sum of per-file minima and the ratio
(new / base); ``--largest K`` keeps the K largest files.

    python benchmarks/serving_facts_ab.py --base /tmp/base/wnaudit --tree /tmp/tree --repeats 7
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent


def _reader(package: str) -> tuple[Callable[..., Any], tuple[type[BaseException], ...]]:
    """``read_serving_facts`` and the errors it may raise, wherever the checkout defines them."""
    facts = importlib.import_module(f"{package}.source.serving.facts")
    try:
        read = importlib.import_module(f"{package}.source.serving.reader").read_serving_facts
    except ImportError:
        read = facts.read_serving_facts  # a checkout from before the split
    return read, facts.READ_ERRORS


def _files(tree: Path, largest: int | None) -> list[tuple[str, bytes]]:
    found = []
    for folder, _, names in os.walk(tree):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                found.append((path, Path(path).read_bytes()))
    found.sort(key=lambda item: (-len(item[1]), item[0]))
    return found[:largest] if largest else found


def _once(read: Callable[..., Any], errors: tuple[type[BaseException], ...], path: str, data: bytes) -> float:
    start = time.perf_counter()
    try:
        read(data, path, "pkg.mod", False)
    except errors:
        pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="the other checkout's wnaudit package folder")
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--largest", type=int, default=None, help="only the K largest files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copytree(args.base, Path(scratch) / "wnaudit_base")
        sys.path[:0] = [scratch, str(ROOT)]
        arms = {"base": _reader("wnaudit_base"), "new": _reader("wnaudit")}
        files = _files(args.tree, args.largest)
        sums = {"base": 0.0, "new": 0.0}
        gc.disable()  # as the readers run (``cyclic_gc_paused``); a collection would land on one arm
        for path, data in files:
            best = {"base": float("inf"), "new": float("inf")}
            for repeat in range(args.repeats):
                for name in ("base", "new") if repeat % 2 == 0 else ("new", "base"):
                    best[name] = min(best[name], _once(*arms[name], path, data))
            gc.collect()
            for name in sums:
                sums[name] += best[name]
    print(json.dumps({
        "tree": str(args.tree), "files": len(files), "repeats": args.repeats,
        "base s (sum of per-file minima)": round(sums["base"], 3), "new s": round(sums["new"], 3),
        "ratio new/base": round(sums["new"] / sums["base"], 4),
    }, indent=1))


if __name__ == "__main__":
    main()
