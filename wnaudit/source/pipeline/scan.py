"""Run the per-file stages (read, prefilter, analyse) over every input; the analysis in the ``-j`` workers when it pays.

Only the files the prefilter passes are parsed, so the work a pool can share
is the analysis of those; below ``PARALLEL_BYTES`` of them one process is
faster than starting workers (``-j`` above 1 asks for workers anyway).
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
from pathlib import Path
from typing import Callable, Sequence

from ...common.gc_pause import cyclic_gc_paused
from ..project import Location
from ..reading import SourceError
from ..syntax_cache import SYNTAX_ERROR_PREFIX, digest_of
from ..workspace import Workspace
from .analyse import serves, serving_facts_of, summarize_at
from .prefilter import Scanned, Task, prefilter
from .read import read_failure, read_source

logger = logging.getLogger(__name__)

#: Below this much candidate source (bytes to parse) a process pool costs more than it saves.
PARALLEL_BYTES = 1 << 20


def analyse_path(task: tuple[str, int, Location, bool]) -> Scanned:
    """Read, parse and analyse one candidate file (runs in a worker process for big runs).

    With the task's last flag (WN110 runs for the file), a file that applies weight norm inside a class or
    function also gets WN110's serving facts here: the index reads them for every such file, and here they
    are computed in the workers, beside the other analyses, instead of one by one in the main process.
    """
    path_text, max_bytes, location, serving = task
    try:
        data = read_source(Path(path_text), max_bytes)
    except (OSError, SourceError) as error:
        return Scanned(path_text, error=read_failure(error))
    try:
        summary = summarize_at(data, path_text, location)
    except SourceError as error:
        # A syntax error depends on the bytes alone (not RecursionError, MemoryError: those depend on the process).
        cacheable = isinstance(data, bytes) and str(error).startswith(SYNTAX_ERROR_PREFIX)
        return Scanned(path_text, error=str(error), digest=digest_of(data) if isinstance(data, bytes) and cacheable else None)
    if not isinstance(data, bytes):
        return Scanned(path_text, summary=summary)
    facts = serving_facts_of(data, str(location.path), location) if serving and serves(summary) else None
    return Scanned(path_text, summary=summary, digest=digest_of(data), serving=facts)


def scan_all(
    files: Sequence[Path], jobs: int, max_bytes: int, workspace: Workspace, serving: Callable[[str], bool] = lambda path: False,
) -> list[Scanned]:
    """Every file's ``Scanned``, in input order; new analyses go to the workspace's summary cache.

    ``serving(path)``: whether WN110 runs for the file (then ``analyse_path`` may compute its serving facts).
    """
    results: list[Scanned | None] = []
    tasks: list[Task] = []
    with cyclic_gc_paused():  # the scan's many small records would be rescanned again and again (a third of a warm run)
        for index, path in enumerate(files):
            done = prefilter(index, str(path), max_bytes, workspace)
            results.append(done if isinstance(done, Scanned) else None)
            if isinstance(done, Task):
                tasks.append(done)
    located = {task.index: workspace.project.locate_input(task.path) for task in tasks}
    for task, scanned in zip(tasks, _analyse_all(tasks, jobs, max_bytes, located, serving)):
        results[task.index] = scanned
        _keep(scanned, located[task.index], workspace)
    return [item for item in results if item is not None]


def _analyse_all(
    tasks: list[Task], jobs: int, max_bytes: int, located: dict[int, Location], serving: Callable[[str], bool],
) -> list[Scanned]:
    """The analyses of ``tasks``, in their order: in worker processes when there is enough to share."""
    work = [(task.path, max_bytes, located[task.index], serving(task.path)) for task in tasks]
    workers = min(jobs if jobs > 0 else (os.cpu_count() or 1), len(tasks))
    total = sum(task.size for task in tasks)
    if workers <= 1 or (jobs <= 1 and total < PARALLEL_BYTES):
        return [analyse_path(item) for item in work]
    # Largest first, one file per task: a few big model files dominate the time.
    order = sorted(range(len(work)), key=lambda i: -tasks[i].size)
    logger.debug("analysing %d files (%d bytes) with %d processes", len(order), total, workers)
    out: list[Scanned | None] = [None] * len(work)
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        chunk = max(1, len(order) // (workers * 8))
        for position, scanned in zip(order, pool.map(analyse_path, [work[i] for i in order], chunksize=chunk)):
            out[position] = scanned
    return [item for item in out if item is not None]


def _keep(scanned: Scanned, location: Location, workspace: Workspace) -> None:
    """Put a new analysis in the summary cache, a syntax error in the syntax cache (keyed by the digest of the bytes).

    Serving facts computed beside the analysis go where WN110's index looks first (``Workspace.keep_serving``).
    """
    if scanned.digest is None:
        return
    if scanned.serving is not None:
        workspace.keep_serving(scanned.digest, location, scanned.serving)
    if scanned.error is not None and workspace.cache is not None:
        workspace.cache.put(scanned.digest, scanned.error)
    if scanned.summary is None or workspace.summaries is None:
        return
    key = workspace.summaries.key(scanned.digest, scanned.path, location, None)
    workspace.summaries.put(key, scanned.summary)
