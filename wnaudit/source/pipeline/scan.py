"""Run the per-file stages (read, prefilter, analyse) over every input; the analysis in the ``-j`` workers when it pays.

Only the files the prefilter passes are parsed, so the work a pool can share
is the analysis of those; below ``PARALLEL_BYTES`` of them one process is
faster than starting workers (``-j`` above 1 asks for workers anyway).  A run
with no kept answers over many files also has the workers compute the byte
facts of every input ahead of the prefilter (``_FactsAhead``): the prefilter's
import scan stays here, the regular-expression work on the bytes moves out.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
from pathlib import Path
from typing import Callable, Iterator, Sequence

from ...common.gc_pause import cyclic_gc_paused
from .. import notebook
from ..content import ContentFacts, facts_of
from ..model import FileSummary
from ..project import Location
from ..reading import SourceError
from ..serving.ahead import ServingAhead
from ..serving.kept_trees import PieceTrees
from ..facts.kinds import CONTENT, SUMMARY, SYNTAX, SYNTAX_ERROR_PREFIX, Blob, SummaryOf, digest_of
from ..workspace import Workspace
from .analyse import facts_and_analysis, summarize_at, summarize_serving
from .prefilter import Scanned, Task, prefilter
from .read import read_failure, read_source

logger = logging.getLogger(__name__)

#: Below this much candidate source (bytes to parse) a process pool costs more than it saves.
PARALLEL_BYTES = 1 << 20


def analyse_path(task: tuple[str, int, Location, bool], here: bool = False) -> Scanned:
    """Read, parse and analyse one candidate file (runs in a worker process for big runs).

    With the task's last flag (WN110 runs for the file), the file's WN110 serving facts are read from the same
    parse, after the analysis (``summarize_serving``): the index reads them for the files it needs instead of
    parsing them again in the main process; one parse per file per cold run.  The trees are kept too, for WN110's
    readers of whole files (``kept_trees``): as they are ``here`` (the main process), pickled from a worker.
    """
    path_text, max_bytes, location, serving = task
    try:
        data = read_source(Path(path_text), max_bytes)
    except (OSError, SourceError) as error:
        return Scanned(path_text, error=read_failure(error))
    facts, trees = None, PieceTrees(len(data)) if serving else None
    try:
        if serving and isinstance(data, bytes):
            summary, facts = summarize_serving(data, path_text, location, trees)
        else:
            summary = summarize_at(data, path_text, location)
    except SourceError as error:
        # A syntax error depends on the bytes alone (not RecursionError, MemoryError: those depend on the process).
        cacheable = isinstance(data, bytes) and str(error).startswith(SYNTAX_ERROR_PREFIX)
        return Scanned(path_text, error=str(error), digest=digest_of(data) if isinstance(data, bytes) and cacheable else None)
    if not isinstance(data, bytes):
        return Scanned(path_text, summary=summary)
    kept = trees if here or trees is None else trees.for_main(summary, facts)  # a worker's, pickled if wanted
    return Scanned(path_text, summary=summary, digest=digest_of(data), serving=facts, trees=kept if facts is not None else None)


def facts_of_paths(task: tuple[list[str], int]) -> list[tuple[bytes, ContentFacts] | None]:
    """The digest and byte facts of each file (runs in a worker; None: not read here, the prefilter decides)."""
    paths, max_bytes = task
    found: list[tuple[bytes, ContentFacts] | None] = []
    for path_text in paths:
        try:
            data = read_source(Path(path_text), max_bytes)
        except (OSError, SourceError):
            data = None
        found.append((digest_of(data), facts_of(data)) if isinstance(data, bytes) else None)
    return found


#: A run of at least this many files with no kept answers has its byte facts computed ahead in the workers.
AHEAD_FILES = 512
#: Files per worker task of ``_FactsAhead`` (a task's answer is one pickle).
AHEAD_CHUNK = 64
#: Inputs whose cached byte facts show that the cache knows the tree (a record dropped by an edit, not a first run).
AHEAD_SAMPLE = 3


def serving_workers(workers: int) -> int:
    """How many processes parse WN110's serving files ahead: one core fewer than the run's workers, at least one.

    The main process links the facts meanwhile and is the whole critical path
    then; a worker for every core would take a share of its core (on 2 cores,
    -j 2 with two such workers ran 0.72-0.92 of the time with one).
    """
    return max(1, workers - 1)


def scan_all(
    files: Sequence[Path], jobs: int, max_bytes: int, workspace: Workspace, serving: Callable[[str], bool] = lambda path: False,
) -> list[Scanned]:
    """Every file's ``Scanned``, in input order; new analyses go to the workspace's summary cache.

    ``serving(path)``: whether WN110 runs for the file (then ``analyse_path`` may compute its serving facts).
    The analyses start in the workers as soon as there is enough to share, while the prefilter goes on.
    """
    results: list[Scanned | None] = []
    analyses = _Analyses(jobs, max_bytes, workspace, serving)
    ahead = _FactsAhead.start(files, analyses)
    if ahead is not None:  # a big run with nothing kept: WN110's index will parse many files
        workspace.use_serving_workers(ServingAhead(serving_workers(analyses.workers), facts_and_analysis))
    try:
        with cyclic_gc_paused(), workspace.analyses.from_workers(analyses.from_worker):
            # (paused: the scan's many small records would be rescanned again and again, a third of a warm run)
            for index, path in enumerate(files):
                if ahead is not None:
                    ahead.take(index, workspace)
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
        self._started: concurrent.futures.ProcessPoolExecutor | None = None  # by ``pool`` before the analyses need one
        self._futures: dict[int, concurrent.futures.Future[Scanned]] = {}
        self._index_of: dict[Path, int] = {}  # a task's file (resolved) -> its index

    def pool(self) -> concurrent.futures.ProcessPoolExecutor:
        """The workers, started now (the analyses use them too, once they pay)."""
        if self._started is None:
            logger.debug("%d worker processes", self.workers)
            self._started = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers)
        return self._started

    def _work(self, task: Task) -> tuple[str, int, Location, bool]:
        return (task.path, self.max_bytes, self.located[task.index], self.serving(task.path))

    def add(self, task: Task) -> None:
        self.located[task.index] = location = self.workspace.project.locate_input(task.path)
        if not notebook.is_notebook(task.path):  # a notebook's analysis is of its view, not of the bytes read
            self._index_of[location.path] = task.index
        self.tasks.append(task)
        self.total += task.size
        if self._pool is None and self.workers > 1 and len(self.tasks) > 1 and (self.jobs > 1 or self.total >= PARALLEL_BYTES):
            logger.debug("analysing in %d processes", self.workers)
            self._pool = self.pool()
            for waiting in self.tasks[:-1]:
                self._submit(waiting)
        if self._pool is not None:
            self._submit(task)

    def _submit(self, task: Task) -> None:
        assert self._pool is not None
        self._futures[task.index] = self._pool.submit(analyse_path, self._work(task))

    def from_worker(self, path: Path) -> tuple[FileSummary, bytes] | None:
        """A worker's first analysis of the linted file at ``path`` (waited for once started), for the import scan.

        A task no worker has started is withdrawn instead: the import scan analyses the file here, and the scan
        takes that analysis (``_reused``).  None: the file is no task in a worker, or its worker made no analysis.
        """
        index = self._index_of.get(path)
        future = self._futures.get(index) if index is not None else None
        if index is None or future is None:
            return None
        if future.cancel():
            del self._futures[index]
            return None
        try:
            scanned = future.result()
        except Exception:  # noqa: BLE001 - the scan meets the same failure in ``results`` and reports it there
            return None
        return (scanned.summary, scanned.digest) if scanned.summary is not None and scanned.digest is not None else None

    def results(self) -> Iterator[tuple[Task, Scanned]]:
        """Each task with its analysis, in the tasks' order."""
        for task in self.tasks:
            future = self._futures.get(task.index)
            yield task, future.result() if future is not None else self._reused(task) or analyse_path(self._work(task), here=True)

    def _reused(self, task: Task) -> Scanned | None:
        """The analysis the import resolution made of the file after the prefilter passed it (not parsed again)."""
        if notebook.is_notebook(task.path):
            return None
        found = self.workspace.analyses.analysed_as_read(self.located[task.index].path, task.path)
        return Scanned(task.path, summary=found[0], digest=found[1]) if found is not None else None

    def close(self) -> None:
        if self._started is not None:
            self._started.shutdown(wait=True, cancel_futures=True)


def _facts_cached(sample: Sequence[Path], max_bytes: int, workspace: Workspace) -> bool:
    """Whether the cache holds the byte facts of one of these inputs (a dropped record: the facts are there, no work ahead)."""
    if not workspace.facts.persistent:
        return False
    for path in sample:
        try:
            data = read_source(path, max_bytes)
        except (OSError, SourceError):
            continue
        if isinstance(data, bytes) and workspace.facts.known(CONTENT, Blob.of(data)) is not None:
            return True
    return False


class _FactsAhead:
    """Byte facts of the inputs, computed by the workers in chunks while the prefilter works through them.

    Only where nothing is kept (a ``--no-cache`` run, a first run): a warm run
    decides most files from its record and would only wait for workers.  The
    prefilter takes a chunk's answers when it reaches the chunk (``take``); a
    file changed in between has another digest and gets its facts computed here.
    """

    def __init__(self, futures: list[tuple[int, concurrent.futures.Future[list]]]) -> None:
        self._futures = futures  # (first index, answers), the next chunk last

    @classmethod
    def start(cls, files: Sequence[Path], analyses: _Analyses) -> _FactsAhead | None:
        workspace = analyses.workspace
        kept = workspace.derived is not None and bool(workspace.derived.scan)
        if analyses.workers < 2 or len(files) < AHEAD_FILES or kept or _facts_cached(files[:AHEAD_SAMPLE], analyses.max_bytes, workspace):
            return None
        pool = analyses.pool()
        futures = [
            (start, pool.submit(facts_of_paths, ([str(p) for p in files[start : start + AHEAD_CHUNK]], analyses.max_bytes)))
            for start in range(0, len(files), AHEAD_CHUNK)
        ]
        return cls(futures[::-1])

    def take(self, index: int, workspace: Workspace) -> None:
        """The answers of the chunk holding ``index`` (waited for) and of every chunk already done."""
        while self._futures and (self._futures[-1][0] <= index or self._futures[-1][1].done()):
            start, future = self._futures.pop()
            try:
                answers = future.result()
            except Exception as error:  # a worker lost (killed, out of memory): the prefilter computes them itself
                logger.debug("byte facts of inputs %d+ not computed ahead: %r", start, error)
                continue
            for found in answers:
                if found is not None:
                    workspace.facts.offer(CONTENT, Blob(found[0]), found[1])


def _keep(scanned: Scanned, location: Location, workspace: Workspace) -> None:
    """Hand the fact store what the analysis computed: the summary, or the syntax error, of these bytes.

    Serving facts computed beside the analysis go where WN110's index looks first (``Analyses.keep_serving``).
    """
    if scanned.digest is None:
        return
    if scanned.serving is not None:
        workspace.analyses.keep_serving(scanned.digest, location, scanned.serving)
        if scanned.summary is not None:
            workspace.analyses.kept_trees.keep_wanted(scanned.digest, scanned.summary, scanned.serving, scanned.trees)
        scanned.trees = None
    if scanned.error is not None:
        workspace.facts.put(SYNTAX, Blob(scanned.digest), scanned.error)
    if scanned.summary is not None:
        workspace.facts.put(SUMMARY, SummaryOf(scanned.digest, scanned.path, location), scanned.summary)
