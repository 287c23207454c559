"""Logging set-up of the command line (``wnaudit.report.log_format``, shared with ``wnaudit bench``)."""

from __future__ import annotations

from ..report.log_format import _SanitizingFormatter, configure_cli_logging

__all__ = ["configure_cli_logging"]
