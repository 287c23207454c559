"""SIGINT and SIGTERM end a run cleanly: temporary files removed, exit 130 / 143, and a true message.

CI time-outs and ``docker stop`` send SIGTERM, a person presses Ctrl-C.  Both
are turned into :class:`~wnaudit.common.interrupts.Interrupted` (a
``SystemExit``, so no ``except Exception`` of an engine swallows it) raised
where the run is, which unwinds
through every open :func:`~wnaudit.common.atomic.atomic_writer`: its temporary
file is removed and its target left as it was.  Files already replaced before
the signal stay replaced, whole.  A signal during the renames of a multi-file
fix waits till the set is complete (:func:`~wnaudit.common.interrupts.held`);
the message then names the files fixed.  A second signal during that unwinding
gets the default action.
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


#: How many fixed files the message names before it says "and N more".
_NAMED = 5


def interrupted_message(signum: int, fixed: list[str]) -> str:
    """The one line a signal ends the run with: what was written, as it is on the disk."""
    name = signal.Signals(signum).name
    if not fixed:
        return f"wnaudit: interrupted by {name}: temporary files removed; files fixed before it are complete, the rest unchanged"
    shown = ", ".join(fixed[:_NAMED]) + (f" and {len(fixed) - _NAMED} more" if len(fixed) > _NAMED else "")
    return (
        f"wnaudit: interrupted by {name}: fixed {len(fixed)} files before stopping ({shown}), each whole; "
        "temporary files removed; every other file unchanged"
    )


@contextlib.contextmanager
def interruptions_end_cleanly() -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM raise :class:`Interrupted`; the old handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = {signum: signal.getsignal(signum) for signum in EXIT_STATUS}
    interrupts.reset()
    try:
        for signum in EXIT_STATUS:
            signal.signal(signum, _raise_interrupted)
        yield
    except Interrupted as interrupted:
        write_stderr(interrupted_message(interrupted.signum, interrupts.fixed))
        raise
    except Exception:
        if interrupts.received is None:
            raise
        # Code that cleans up after the interruption (libcst's) raised its own error instead: still the signal.
        write_stderr(interrupted_message(interrupts.received, interrupts.fixed))
        raise Interrupted(interrupts.received) from None
    finally:
        interrupts.reset()
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
