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


def configure_cli_logging(verbose: bool) -> None:
    """Warnings (or everything with ``--verbose``) to stderr, prefixed so users can grep them."""
    handler = _StderrHandler(sys.stderr)
    handler.setFormatter(_SanitizingFormatter("wnaudit: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler])
