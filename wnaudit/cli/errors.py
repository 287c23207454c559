"""One error line for every kind of error: ``wnaudit: error: ...``, exit status 2.

click reports a usage error as a four-line block (``Usage: ...``, ``Try
'wnaudit check --help'``, ``Error: ...``) that names the internal ``check``
command users were never told about.  Input errors are one line; usage and
configuration errors are made to look the same, so CI logs show one shape.
"""

from __future__ import annotations

import sys
from typing import IO, Any

import click

from ..report.sanitize import encodable, sanitize
from .streams import write_stderr

EXIT_ERROR = 2
PREFIX = "wnaudit: error: "


def error_line(message: str) -> str:
    """``message`` as the one line wnaudit prints for an error.

    click's own line breaks are joined; anything else a name could carry
    (escape sequences, CR, lone surrogates) is shown escaped by the sanitiser.
    """
    flat = " ".join(part.strip() for part in str(message).split("\n") if part.strip())
    return f"{PREFIX}{sanitize(flat)}"


class OneLineUsageError(click.ClickException):
    """A usage or configuration error, shown as one ``wnaudit: error:`` line (exit 2)."""

    exit_code = EXIT_ERROR

    def show(self, file: IO[Any] | None = None) -> None:
        # Written directly: click.echo strips escapes off a non-terminal, which would
        # name a file that does not exist; the sanitiser has made the line safe.
        if file is not None:
            file.write(encodable(error_line(self.format_message()), getattr(file, "encoding", None)) + "\n")
            file.flush()
            return
        write_stderr(encodable(error_line(self.format_message()), getattr(sys.stderr, "encoding", None)))


def one_line(error: click.UsageError) -> OneLineUsageError:
    """click's usage error as one line, with a pointer to the help instead of the usage block."""
    message = error.format_message()
    if "--help" not in message:
        message += f" (see {_help_command(error.ctx)})"
    return OneLineUsageError(message)


def _help_command(ctx: click.Context | None) -> str:
    """``wnaudit --help``, or ``wnaudit bench --help`` for a documented subcommand; never ``check``."""
    if ctx is None or ctx.parent is None or ctx.command.name == "check":
        return "wnaudit --help"
    return f"{ctx.command_path} --help"
