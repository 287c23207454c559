"""SIGINT and SIGTERM end a run cleanly: temporary files removed, exit 130 / 143.

CI time-outs and ``docker stop`` send SIGTERM, a person presses Ctrl-C.  Both
are turned into :class:`~wnaudit.common.interrupts.Interrupted` (a
``SystemExit``, so no ``except Exception`` of an engine swallows it) raised
where the run is, which unwinds
through every open :func:`~wnaudit.common.atomic.atomic_writer`: its temporary
file is removed and its target left as it was.  Files already replaced before
the signal stay replaced, whole.  A second signal during that unwinding gets
the default action.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Iterator

from ..common import interrupts
from ..common.interrupts import EXIT_STATUS, Interrupted
from .streams import write_stderr


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    if interrupts.is_held():  # a set of renames is running: it finishes first
        interrupts.interrupt(signum)
        return
    for other in EXIT_STATUS:
        signal.signal(other, signal.SIG_DFL)  # a second signal is not caught again
    interrupts.interrupt(signum)


@contextlib.contextmanager
def interruptions_end_cleanly() -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM raise :class:`Interrupted`; the old handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = {signum: signal.getsignal(signum) for signum in EXIT_STATUS}
    interrupts.received = None
    try:
        for signum in EXIT_STATUS:
            signal.signal(signum, _raise_interrupted)
        yield
    except Interrupted as interrupted:
        name = signal.Signals(interrupted.signum).name
        write_stderr(
            f"wnaudit: interrupted by {name}: temporary files removed; files fixed before it are complete, the rest unchanged"
        )
        raise
    finally:
        interrupts.received = None
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
