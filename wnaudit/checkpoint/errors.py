"""The one error type the checkpoint readers raise for a bad input."""

from __future__ import annotations


class CheckpointError(Exception):
    """A checkpoint that cannot be read, audited or fixed.

    The message is one line that says what is wrong (the file name is added
    by the caller); it becomes an :class:`~wnaudit.common.findings.InputError`.
    """
