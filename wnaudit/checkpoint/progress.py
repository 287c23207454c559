"""A byte-count progress bar on stderr for fixes of large files (only when asked)."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator

#: Files smaller than this are written before a bar would be worth drawing.
PROGRESS_THRESHOLD = 64 * 1024 * 1024


@contextlib.contextmanager
def progress_bar(label: str, total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    """Yield ``update(nbytes)``; draws a click bar on stderr when enabled and the file is large."""
    if not enabled or total < PROGRESS_THRESHOLD:
        yield lambda n: None
        return
    import click

    with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=False) as bar:
        yield bar.update
