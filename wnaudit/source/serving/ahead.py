"""WN110's serving facts of the files the index is about to read, parsed in worker processes meanwhile.

A cold run's main process then links while the workers parse.  The index
finds the files it reads as it links (name searches), so nothing can compute
their facts before it asks; but where it has a list of files it will read one
after the other (``prepare``, ``_served``), the workers parse
them while the main process goes through the list and links what it has.
Each task carries the bytes the index read, and the answer is taken by the
``facts_cache.facts_key`` of those bytes: a file the index reads again with
other bytes, a task a worker failed and a task no worker has started yet
are computed in the main process, as without workers.
"""

from __future__ import annotations

import concurrent.futures
import logging

from .facts import READ_ERRORS, ServingFacts, read_serving_facts

logger = logging.getLogger(__name__)


def facts_in_worker(task: tuple[bytes, str, str, bool]) -> ServingFacts | None:
    """The serving facts of one file's bytes (runs in a worker; None: not parsed, the index reports why itself)."""
    try:
        return read_serving_facts(*task)
    except READ_ERRORS:
        return None


class ServingAhead:
    """Worker processes that parse serving facts the index announces (``submit``) and hands over (``take``)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._futures: dict[str, concurrent.futures.Future[ServingFacts | None]] = {}

    def submit(self, key: str, data: bytes, path_text: str, module: str, is_package: bool) -> None:
        if key in self._futures:
            return
        if self._pool is None:
            logger.debug("serving facts in %d processes", self.workers)
            self._pool = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers)
        try:
            self._futures[key] = self._pool.submit(facts_in_worker, (data, path_text, module, is_package))
        except RuntimeError as error:  # a worker was lost and the pool is broken: the index parses the rest itself
            logger.debug("serving facts not computed ahead: %r", error)

    def take(self, key: str) -> ServingFacts | None:
        """The facts of ``key`` from a worker (waited for once started); None: compute them here."""
        future = self._futures.pop(key, None)
        if future is None or future.cancel():  # not started yet: the main process is free now, it parses them itself
            return None
        try:
            return future.result()
        except Exception as error:  # a worker lost (killed, out of memory): the index computes them itself
            logger.debug("serving facts not computed ahead: %r", error)
            return None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._futures.clear()
