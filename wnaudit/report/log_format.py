"""Logging set-up shared by the command-line entry points, ``wnaudit`` and ``wnaudit bench`` (library code only logs).

It sits beside the sanitiser it uses, below both commands: the bench command
needs it without importing the CLI that registers it."""

from __future__ import annotations

import logging
import sys

from .sanitize import sanitize


class _SanitizingFormatter(logging.Formatter):
    """Log messages name files and tensors from the inputs: they go through the one sanitiser.

    Only the message is escaped; a ``--verbose`` traceback keeps its lines.
    """

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = sanitize(record.message)
        return super().formatMessage(record)


class _StderrHandler(logging.StreamHandler):
    """A log line that stderr cannot take (full, a pipe whose reader left) is dropped: the run goes on."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


class _ProgressHandler(logging.Handler):
    """Progress lines (``common/progress.py``) to whatever ``sys.stderr`` is when they are written."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass


def configure_cli_logging(verbose: bool) -> None:
    """Warnings (or everything with ``--verbose``) to stderr, prefixed so users can grep them; progress lines too."""
    handler = _StderrHandler(sys.stderr)
    handler.setFormatter(_SanitizingFormatter("wnaudit: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler])
    progress = logging.getLogger("wnaudit.progress")
    if not any(isinstance(h, _ProgressHandler) for h in progress.handlers):
        shown = _ProgressHandler()
        shown.setFormatter(_SanitizingFormatter("wnaudit: %(message)s"))
        progress.addHandler(shown)
    progress.setLevel(logging.INFO)
    progress.propagate = False  # shown once, by its own handler
