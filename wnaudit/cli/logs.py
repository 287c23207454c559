"""Logging set-up shared by the command-line entry points (library code only logs)."""

from __future__ import annotations

import logging
import sys


def configure_cli_logging(verbose: bool) -> None:
    """Warnings (or everything with ``--verbose``) to stderr, prefixed so users can grep them."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="wnaudit: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
