"""The interruption of a run by SIGINT/SIGTERM, shared by the CLI (which catches the
signal) and the engines (which must not mistake it for a bad input).

The CLI's handler raises :class:`Interrupted` where the run is.  When that
happens inside a callback that C++ code calls (``torch.save`` writing through
a Python stream), the C++ side turns it into its own error; :data:`received`
remembers the signal so that :func:`raise_if_interrupted`, called where an
engine converts errors into input errors, raises the interruption again.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator

#: Exit status of a run ended by a signal, as shells report it (128 + signal number).
EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}

#: The signal that interrupted this run, once one has.
received: int | None = None

#: The files a multi-file fix of this run replaced (each whole), for the message a signal ends the run with.
fixed: list[str] = []


def note_fixed(paths: list[str]) -> None:
    """Record files this run has replaced, so that an interruption says which (not a guess)."""
    fixed.extend(paths)


def reset() -> None:
    """Forget the signal and the files fixed: a new run starts."""
    global received
    received = None
    fixed.clear()


class Interrupted(SystemExit):
    """The run was ended by a signal; ``code`` is the exit status (130 or 143).

    A ``SystemExit``, so no ``except Exception`` of an engine swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(EXIT_STATUS.get(signal.Signals(signum), 128 + signum))
        self.signum = signum


_held = 0


def interrupt(signum: int) -> None:
    """Record the signal and raise :class:`Interrupted` for it (at the end of a :func:`held` block)."""
    global received
    received = signum
    if not _held:
        raise Interrupted(signum)


def is_held() -> bool:
    return _held > 0


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Within the block an interruption is only recorded; it is raised when the block ends.

    For steps that must not stop half-way and take milliseconds (renaming a
    set of staged files).  Masking the signal would not do: torch's worker
    threads would receive it instead.
    """
    global _held
    _held += 1
    try:
        yield
    except Exception as error:
        _held -= 1
        if not _held and received is not None:  # the block failed after a signal came: the signal still ends the run
            raise Interrupted(received) from error
        raise
    except BaseException:
        _held -= 1
        raise
    _held -= 1
    if not _held:
        raise_if_interrupted()


def raise_if_interrupted() -> None:
    """Raise :class:`Interrupted` again if a signal arrived (and was swallowed by C++ code)."""
    if received is not None:
        raise Interrupted(received)
