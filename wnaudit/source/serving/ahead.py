"""WN110's serving facts of the files the index is about to read, parsed in worker processes meanwhile.

A cold run's main process then links while the workers parse.  The index
finds the files it reads as it links (name searches), so nothing can compute
their facts before it asks; but where it has a list of files it will read one
after the other (``prepare``, ``_served``), the workers parse
them while the main process goes through the list and links what it has.
Each task carries the bytes the index read, and the answer is taken by the
``facts/kinds.serving_key`` of those bytes: a file the index reads again with
other bytes, a task a worker failed and a task no worker has started yet
are computed in the main process, as without workers.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable

from ..analysis import parsed_ahead
from ..model import FileSummary
from .facts import READ_ERRORS, ServingFacts
from .reader import read_serving_facts

logger = logging.getLogger(__name__)


#: The analysis a worker makes of a file beside its serving facts, from one parse (``pipeline/analyse.py``
#: ``facts_and_analysis``): (bytes, path, module, is package) -> (facts or None, the file's analysis or None).
Analyser = Callable[[bytes, str, str, bool], tuple[ServingFacts | None, FileSummary | None]]


def facts_in_worker(task: tuple) -> tuple[ServingFacts | None, FileSummary | None]:
    """The serving facts of one file's bytes, and its analysis when the task names an analyser (runs in a worker).

    None for the facts: not parsed, the index reports why itself.  The analysis comes from the same parse:
    the rules ask for the analysis of many of the files the index reads (one parse per file).
    """
    data, path_text, module, is_package, analyser = task
    if analyser is not None:
        return analyser(data, path_text, module, is_package)
    try:
        return read_serving_facts(data, path_text, module, is_package), None
    except READ_ERRORS:
        return None, None


class ServingAhead:
    """Worker processes that parse serving facts the index announces (``submit``) and hands over (``take``)."""

    def __init__(self, workers: int, analyser: Analyser | None = None) -> None:
        self.workers = workers
        self._analyser = analyser
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._futures: dict[str, concurrent.futures.Future[tuple[ServingFacts | None, FileSummary | None]]] = {}
        #: The analyses the workers made beside the facts taken, by the facts' key, until ``analysis`` takes them.
        self._analyses: dict[str, FileSummary] = {}

    def submit(self, key: str, data: bytes, path_text: str, module: str, is_package: bool) -> None:
        if key in self._futures or parsed_ahead.waits_for(data):  # parsed here already: read here, not parsed again
            return
        if self._pool is None:
            logger.debug("serving facts in %d processes", self.workers)
            self._pool = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers)
        try:
            self._futures[key] = self._pool.submit(facts_in_worker, (data, path_text, module, is_package, self._analyser))
        except RuntimeError as error:  # a worker was lost and the pool is broken: the index parses the rest itself
            logger.debug("serving facts not computed ahead: %r", error)

    def analysis(self, key: str) -> FileSummary | None:
        """The analysis a worker made beside the facts of ``key`` just taken (None: none made)."""
        return self._analyses.pop(key, None)

    def take(self, key: str) -> ServingFacts | None:
        """The facts of ``key`` from a worker (waited for once started); None: compute them here."""
        future = self._futures.pop(key, None)
        if future is None or future.cancel():  # not started yet: the main process is free now, it parses them itself
            return None
        try:
            facts, analysis = future.result()
        except Exception as error:  # a worker lost (killed, out of memory): the index computes them itself
            logger.debug("serving facts not computed ahead: %r", error)
            return None
        if analysis is not None:
            self._analyses[key] = analysis
        return facts

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._futures.clear()
        self._analyses.clear()
