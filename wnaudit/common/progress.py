"""Signs of life for long work when stderr is no terminal (a CI log): a line at the start, one every ten seconds.

On a terminal the checkpoint writer draws a bar (``checkpoint/progress.py``); a CI log
shows no bar, and a 44 s fold of a 1.4 GB checkpoint or a 30 s ``.pt2`` fix would
otherwise print nothing until it ends.  Library code only logs to the
``wnaudit.progress`` logger; the command line shows it on stderr
(``report/log_format.py``), an embedding program decides for itself.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Callable, Iterator

logger = logging.getLogger("wnaudit.progress")

#: Seconds between two "still working" lines.
INTERVAL = 10.0


class Heartbeat:
    """What one piece of long work says, and when: ``beat`` logs a line once ``INTERVAL`` has passed since the last."""

    def __init__(self, label: str, *, interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.interval, self.clock = label, interval, clock
        self.started = self.last = clock()

    def elapsed(self) -> float:
        return self.clock() - self.started

    def start(self, detail: str = "") -> None:
        logger.info("%s: started%s", self.label, f" ({detail})" if detail else "")

    def beat(self) -> bool:
        """Log "still working" when a line is due; True when one was."""
        now = self.clock()
        if now - self.last < self.interval:
            return False
        self.last = now
        logger.info("%s: still working, %d s so far", self.label, round(now - self.started))
        return True

    def finish(self) -> None:
        """A closing line, only after work long enough to have had a "still working" line."""
        if self.elapsed() >= self.interval:
            logger.info("%s: done in %d s", self.label, round(self.elapsed()))


@contextlib.contextmanager
def heartbeat(label: str, *, announce: bool, detail: str = "", interval: float = INTERVAL) -> Iterator[Heartbeat]:
    """Run the body with a daemon thread that beats every ``interval`` seconds; ``announce``: a start line too.

    Nothing is logged by work that ends within ``interval`` unless announced, so
    short runs stay quiet.
    """
    beats = Heartbeat(label, interval=interval)
    if announce:
        beats.start(detail)
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(interval):
            beats.beat()

    thread = threading.Thread(target=run, name="wnaudit-heartbeat", daemon=True)
    thread.start()
    try:
        yield beats
    finally:
        stop.set()
        thread.join()
        beats.finish()
