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
from typing import Callable, Iterator, Sequence

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
    The analyses start in the workers as soon as there is enough to share, while the prefilter goes on.
    """
    results: list[Scanned | None] = []
    analyses = _Analyses(jobs, max_bytes, workspace, serving)
    try:
        with cyclic_gc_paused():  # the scan's many small records would be rescanned again and again (a third of a warm run)
            for index, path in enumerate(files):
                done = prefilter(index, str(path), max_bytes, workspace)
                results.append(done if isinstance(done, Scanned) else None)
                if isinstance(done, Task):
                    analyses.add(done)
        for task, scanned in analyses.results():
            results[task.index] = scanned
            _keep(scanned, analyses.located[task.index], workspace)
    finally:
        analyses.close()
    return [item for item in results if item is not None]


class _Analyses:
    """The analyses of the prefilter's tasks: in worker processes once there is enough to share, else here.

    ``-j 1`` analyses here; ``-j N`` (N > 1) starts N workers at the second task;
    automatic ``-j`` starts one per core once the tasks add up to ``PARALLEL_BYTES``.
    Tasks go to the workers as they come (the prefilter goes on meanwhile); the
    answers are the same wherever a file is analysed.
    """

    def __init__(self, jobs: int, max_bytes: int, workspace: Workspace, serving: Callable[[str], bool]) -> None:
        self.jobs, self.max_bytes, self.workspace, self.serving = jobs, max_bytes, workspace, serving
        self.workers = jobs if jobs > 0 else (os.cpu_count() or 1)
        self.tasks: list[Task] = []
        self.located: dict[int, Location] = {}
        self.total = 0
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._futures: dict[int, concurrent.futures.Future[Scanned]] = {}

    def _work(self, task: Task) -> tuple[str, int, Location, bool]:
        return (task.path, self.max_bytes, self.located[task.index], self.serving(task.path))

    def add(self, task: Task) -> None:
        self.located[task.index] = self.workspace.project.locate_input(task.path)
        self.tasks.append(task)
        self.total += task.size
        if self._pool is None and self.workers > 1 and len(self.tasks) > 1 and (self.jobs > 1 or self.total >= PARALLEL_BYTES):
            logger.debug("analysing in %d processes", self.workers)
            self._pool = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers)
            for waiting in self.tasks[:-1]:
                self._submit(waiting)
        if self._pool is not None:
            self._submit(task)

    def _submit(self, task: Task) -> None:
        assert self._pool is not None
        self._futures[task.index] = self._pool.submit(analyse_path, self._work(task))

    def results(self) -> Iterator[tuple[Task, Scanned]]:
        """Each task with its analysis, in the tasks' order."""
        for task in self.tasks:
            future = self._futures.get(task.index)
            yield task, future.result() if future is not None else analyse_path(self._work(task))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


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
