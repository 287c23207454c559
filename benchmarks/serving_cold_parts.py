"""Where a cold lint's CPU goes when WN110 runs: the index's file reads, the flags, its linking, the rest.

WN110 (the project-wide serving-path rule) is most of a cold run's time, and
it runs in the main process.  This runs one cold lint (``--no-cache --select
ALL -j N``) in this process and charges each CPU second (``time.process_time``,
the main process only; the workers' total from ``getrusage``) to the innermost
of these parts running at the time:

- *index reads*: a file WN110's index needs and no worker gave it, read in the
  main process (``Analyses.read_serving``): one parse, the serving walk and the
  file's analysis;
- *flags*: whether the project turns on a flag a fold sits under
  (``FileFacts._flag_on``): the words of every project file, and a parse of
  each file holding a flag's word;
- *rules stage*: the rest of ``plan_fixes``: WN110's linking (names, instances,
  carriers, sites, folds) and every other rule;
- *scan*: reading, prefiltering and analysing the linted files (``scan_all``);
- *rest*: the rest of the source lint (``lint_run.lint_files``): its entry, the
  link stage, the report (discovery runs before it, and is not charged).

It also counts what those reads are for: files the index read, and how many of
their analyses anything asked for later (``Analyses.first`` / ``analysed``);
files the flags parsed, and how many of them the run analysed too.  Those are
not second parses: the analysis takes the flag reader's tree where it comes
second (``analysis/parsed_ahead.py``), and ``parse_count.py`` counts the parses
themselves.  Counted in the main process only, so with ``-j 2`` an analysis a
worker made is not seen.  A part whose function a later version renamed is
reported as absent.

With ``-j 2`` and more, it also says where the index's facts came from (the
``handover``): known already (the scan's workers, the cache), taken from a
worker that parsed them ahead (and how long the main process waited for those),
parsed in the main process because no worker had started them, or parsed there
because nothing had handed them to a worker (a name resolution's single read).

    python benchmarks/serving_cold_parts.py --tree /tmp/tree19 --jobs 1 2
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import resource
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

#: part -> (module, attribute path) of the function whose CPU time (less its inner parts') is charged to it.
PARTS = {
    "index reads": ("wnaudit.source.analyses", "Analyses.read_serving"),
    "flags": ("wnaudit.source.serving.file_facts", "FileFacts._flag_on"),
    "rules stage": ("wnaudit.source.pipeline.plan", "plan_fixes"),
    "scan": ("wnaudit.source.pipeline.scan", "scan_all"),
    "rest": ("wnaudit.source.lint_run", "lint_files"),
}


class Charges:
    """CPU seconds per part, each second charged to the innermost part running."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self._inner: list[float] = []

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def charged(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            self._inner.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                spent = time.process_time() - started
                self.seconds[part] += spent - self._inner.pop()
                self.calls[part] += 1
                if self._inner:
                    self._inner[-1] += spent

        return charged


def _patch(module_name: str, path: str, wrapper: Callable[[Callable[..., Any]], Callable[..., Any]]) -> bool:
    """Replace ``module.path`` by ``wrapper(it)``; False where a later version has no such function."""
    try:
        owner: Any = importlib.import_module(module_name)
        *outer, name = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        setattr(owner, name, wrapper(getattr(owner, name)))
    except (ImportError, AttributeError):
        return False
    return True


def _count_uses(uses: dict[str, set[str]]) -> None:
    """Note the files the index read, those whose analysis is asked for, those the flags parse, and every analysis."""

    def reads(function: Callable[..., Any]) -> Callable[..., Any]:
        def read_serving(self: Any, path: Any, data: bytes) -> Any:
            uses["index read"].add(str(self.project.locate(path).path))
            return function(self, path, data)
        return read_serving

    def asks(function: Callable[..., Any]) -> Callable[..., Any]:
        def asked(self: Any, path: Any, *rest: Any) -> Any:
            found = function(self, path, *rest)
            if found is not None:
                uses["analysis asked"].add(str(self.project.locate(path).path))
            return found
        return asked

    def flags(function: Callable[..., Any]) -> Callable[..., Any]:
        def settings(path: Any, data: bytes) -> Any:
            uses["flag parsed"].add(str(path))
            return function(path, data)
        return settings

    def analyses(function: Callable[..., Any]) -> Callable[..., Any]:
        def analyze(text: str, path: str, *rest: Any, **keywords: Any) -> Any:
            found = function(text, path, *rest, **keywords)
            uses["analysed"].add(getattr(found, "file", "") or path)
            return found
        return analyze

    _patch("wnaudit.source.analyses", "Analyses.read_serving", reads)
    _patch("wnaudit.source.analyses", "Analyses.first", asks)
    _patch("wnaudit.source.analyses", "Analyses.analysed", asks)
    _patch("wnaudit.source.serving.flags", "_python_settings", flags)
    _patch("wnaudit.source.pipeline.analyse", "analyze", analyses)


def _count_handover(handover: Counter[str], waited: list[float]) -> None:
    """Note where each file's serving facts came from: known, a worker (and the wait for it), or a parse here."""

    def kept(function: Callable[..., Any]) -> Callable[..., Any]:
        def known(self: Any, key: str) -> Any:
            found = function(self, key)
            if found is not None:
                handover["known (scan workers, cache)"] += 1
            return found
        return known

    def taken(function: Callable[..., Any]) -> Callable[..., Any]:
        def take(self: Any, key: str) -> Any:
            future = self._futures.get(key)
            started = time.perf_counter()
            found = function(self, key)
            if future is None:
                handover["parsed here: never handed to a worker"] += 1
            elif found is not None:
                handover["taken from a worker"] += 1
                waited[0] += time.perf_counter() - started
            elif future.cancelled():
                handover["parsed here: no worker had started it"] += 1
            else:
                handover["parsed here: the worker gave no facts (failed, or not code)"] += 1
            return found
        return take

    _patch("wnaudit.source.serving.file_facts", "FileFacts._kept", kept)
    _patch("wnaudit.source.serving.ahead", "ServingAhead.take", taken)


def measure_here(tree: str, jobs: int) -> dict[str, Any]:
    """One cold lint of ``tree`` in this process, its CPU charged to the parts (run in a fresh process)."""
    charges = Charges()
    uses: dict[str, set[str]] = defaultdict(set)
    _count_uses(uses)
    handover: Counter[str] = Counter()
    waited = [0.0]
    _count_handover(handover, waited)
    absent = [part for part, (module, path) in PARTS.items() if not _patch(module, path, lambda f, p=part: charges.wrap(p, f))]
    from wnaudit.cli.command import main

    started = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(["--no-cache", "--select", "ALL", "--exit-zero", "-q", "-j", str(jobs), tree])
    total = time.process_time() - started
    read, asked = uses["index read"], uses["analysis asked"]
    flagged, analysed = uses["flag parsed"], uses["analysed"]
    return {
        "jobs": jobs,
        "main process CPU s": round(total, 2),
        "workers CPU s": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime, 2),
        "CPU s by part": {part: round(charges.seconds[part], 2) for part in PARTS if part not in absent},
        "absent parts": absent,
        "files the index read": len(read),
        "of those, analysis asked for later": len(read & asked),
        "files the flags parsed": len(flagged),
        "of those, analysed too": len(flagged & analysed),
        "serving facts: where they came from": dict(handover),
        "main process waiting for a worker's facts, s": round(waited[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", required=True)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child: measure one run here
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure_here(args.tree, args.one)))
        return
    for jobs in args.jobs:  # each in a fresh process: nothing kept from an earlier run
        out = subprocess.run(
            [sys.executable, __file__, "--tree", args.tree, "--one", str(jobs)], capture_output=True, text=True, check=True,
        ).stdout
        print(json.dumps(json.loads(out.splitlines()[-1]), indent=2))


if __name__ == "__main__":
    main()
