"""Standard streams that are closed, full, or a pipe whose reader has gone.

The run's work (a fix written, verified and renamed into place) is done before
anything is reported, and nothing about the streams may undo it or change what
the exit status says about the disk:

* a standard descriptor that was closed when wnaudit started is pointed at
  ``/dev/null`` first, so no file wnaudit opens can take its number and
  receive stray output; logging then writes there and the run goes on;
* a report that cannot be written (stdout closed, ``/dev/full``, an I/O error)
  is one ``wnaudit: error:`` line on stderr, when stderr exists, and exit 2;
* a reader that stops early (``wnaudit ... | head -1``) ends the report
  quietly: no traceback, the exit status still says what the run found.
"""

from __future__ import annotations

import enum
import errno
import os
import sys
from typing import Callable, TextIO

_STANDARD_FDS = {0: "stdin", 1: "stdout", 2: "stderr"}
#: Standard streams found closed (the process's whole life: once pointed at /dev/null they look open).
_CLOSED_AT_START: set[str] = set()


class Written(enum.Enum):
    """How writing the report went."""

    DONE = "done"
    READER_GONE = "reader gone"  # a pipe closed by its reader: the rest of the report is not wanted
    FAILED = "failed"


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _devnull_text() -> TextIO:
    return open(os.devnull, "w", encoding="utf-8")  # lives as long as the process


def guard_standard_streams() -> frozenset[str]:
    """Point closed standard descriptors at ``/dev/null``; return the names of those that were closed.

    Python leaves ``sys.stdout`` / ``sys.stderr`` as ``None`` when their descriptor
    is closed at start; they become ``/dev/null`` streams, so every later write
    (logging included) succeeds and goes nowhere.  Calling it again is harmless
    and still names the streams found closed before.
    """
    closed = _CLOSED_AT_START
    for fd, name in _STANDARD_FDS.items():
        if not _is_open(fd):
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
            closed.add(name)
    if sys.stdout is None:
        closed.add("stdout")
        sys.stdout = _devnull_text()
    if sys.stderr is None:
        closed.add("stderr")
        sys.stderr = _devnull_text()
    return frozenset(closed)


def write_stderr(line: str) -> None:
    """One line on stderr; a stderr that cannot take it (closed, full, pipe gone) loses it, nothing else."""
    stream = sys.stderr
    if stream is None:  # closed, before guard_standard_streams ran
        return
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError):
        _silence(stream)


def write_report(write: Callable[[], None], stream: TextIO, closed: bool) -> tuple[Written, str]:
    """Run ``write`` (which writes the whole report to ``stream``) and flush; say how it went and why not.

    ``closed``: the stream was closed when wnaudit started (the report goes nowhere).
    """
    name = _name(stream)
    if closed:
        return Written.FAILED, f"{name} is closed"
    try:
        write()
        stream.flush()
    except BrokenPipeError:
        _silence(stream)
        return Written.READER_GONE, ""
    except OSError as error:
        _silence(stream)
        if error.errno == errno.EPIPE:
            return Written.READER_GONE, ""
        return Written.FAILED, f"{name}: {error.strerror or error}"
    return Written.DONE, ""


def _name(stream: TextIO) -> str:
    if stream is sys.stderr:
        return "standard error"
    return "standard output"


def _silence(stream: TextIO) -> None:
    """Point the stream's descriptor at ``/dev/null``: what it still buffers is flushed there at exit, not into a traceback."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a descriptor (an in-process test's capture): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
