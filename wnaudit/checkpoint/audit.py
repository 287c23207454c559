"""``audit_checkpoints``: audit (and with ``--fix`` fold) every checkpoint input.

One bad input never stops the run: it becomes one :class:`InputError` line
naming the file and the problem, the other inputs are still audited, and
nothing is written for it.  ``--verbose`` adds the traceback to the log.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from pathlib import Path
from typing import Sequence

from ..core.catalogue import FOLDED_LOAD_HINT
from ..core.torch_api import TorchMissingError, missing
from ..common.findings import Applicability, InputError, RunResult
from ..common.interrupts import raise_if_interrupted
from ..common.progress import heartbeat
from ..common.options import RunOptions
from .codes import BY_CODE
from .progress import PROGRESS_THRESHOLD
from .errors import CheckpointError
from .sniff import Format, UnrecognisedFormat, detect_format, is_index_name

logger = logging.getLogger(__name__)


def audit_checkpoints(paths: Sequence[Path], options: RunOptions) -> RunResult:
    """Audit every checkpoint in ``paths``; shards covered by a listed index are audited once, through it."""
    paths = [Path(p) for p in paths]
    covered: set[Path] = set()
    indexes = [path for path in paths if is_index_name(path)]
    if indexes:  # the shard machinery (and the fold it imports) only for a sharded checkpoint
        from .shards import covered_shards

        covered = set().union(*(covered_shards(index) for index in indexes))
    result = RunResult()
    for path in paths:
        if not is_index_name(path) and Path(os.path.realpath(path)) in covered:
            logger.debug("%s: audited through its shard index", path)
            continue
        result.extend(_needing_review(audit_one(path, _for(path, options)), path in options.walked))
        result.checked_checkpoints = (result.checked_checkpoints or 0) + 1
    folded = sorted({item.path for item in result.fixed if item.code in BY_CODE})
    if folded:
        # Folding changes the keys: strict loads into code that applies weight norm at construction break.
        # Name the files, so that a user who folded a walked tree knows which loads to look at.
        shown = ", ".join(folded[:3]) + (f" and {len(folded) - 3} more" if len(folded) > 3 else "")
        logger.warning("folded %s: %s", shown, FOLDED_LOAD_HINT)
    return result


def _for(path: Path, options: RunOptions) -> RunOptions:
    """A checkpoint reached through a symlink out of the walked tree is audited, never rewritten;
    one found by a walk is folded only with ``--unsafe-fixes``."""
    if path in options.walked:
        options = dataclasses.replace(options, fold_needs_review=True, fix=options.fix and options.unsafe_fixes)
    if options.fix and path in options.read_only:
        logger.warning(
            "%s: not fixed: a symlink out of the walked tree (to %s); name it explicitly to fix it",
            path, os.path.realpath(path),
        )
        return dataclasses.replace(options, fix=False, output=None)
    return options


def _needing_review(result: RunResult, walked: bool) -> RunResult:
    """A walked checkpoint's fixes need review, its WN2xx module folds included."""
    if walked:
        for items in (result.findings, result.fixed):
            items[:] = [dataclasses.replace(f, applicability=Applicability.UNSAFE) if f.fixable else f for f in items]
    return result


def audit_one(path: Path, options: RunOptions) -> RunResult:
    """Audit one input; every failure becomes one InputError for it (an interruption stays one)."""
    try:
        with _signs_of_life(path, options):
            return _dispatch(path, options)
    except Exception as error:
        raise_if_interrupted()  # a signal that C++ code (torch.save's writer) turned into its own error
        problem = _problem(error, options)
        if options.verbose:
            logger.debug("%s: %s", path, problem, exc_info=error)
        return RunResult(errors=[InputError(str(path), problem)])


def _signs_of_life(path: Path, options: RunOptions) -> contextlib.AbstractContextManager[object]:
    """Off a terminal (no bar), a long fold says it started and that it still runs every ten seconds."""
    if options.progress:  # the terminal's bar shows the fold
        return contextlib.nullcontext()
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    big = options.fix and size >= PROGRESS_THRESHOLD
    return heartbeat(f"{'folding' if options.fix else 'reading'} {path}", announce=big, detail=f"{size / 1e6:.0f} MB")


def _problem(error: Exception, options: RunOptions) -> str:
    """One line saying what went wrong with an input."""
    if isinstance(error, TorchMissingError) and options.fix:
        return missing("torch", "folding a checkpoint (only --fix: auditing reads torch zip and safetensors files without it)")
    if isinstance(error, (CheckpointError, UnrecognisedFormat, TorchMissingError)):
        return str(error)
    if isinstance(error, PermissionError):
        return "permission denied: cannot read the file" if not options.fix else "permission denied: cannot read or replace the file"
    if isinstance(error, IsADirectoryError):
        return "is a directory"
    if isinstance(error, FileNotFoundError):
        return "no such file or directory"
    if isinstance(error, OSError):
        return f"cannot read or write: {error.strerror or error}"
    if isinstance(error, ImportError):  # torch or safetensors missing: say what to install
        return missing(error.name or "a dependency", "folding a checkpoint" if options.fix else "reading this checkpoint")
    if isinstance(error, MemoryError):
        return "out of memory while loading"
    if isinstance(error, RecursionError):
        return "its objects are nested too deeply to follow (a pickle nested thousands of levels deep)"
    # a reader bug or an unforeseen corruption: still one line
    return f"unexpected {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}".rstrip(": ")


def _dispatch(path: Path, options: RunOptions) -> RunResult:
    fmt = detect_format(path)
    logger.debug("%s: %s", path, fmt.value)
    if fmt is Format.SAFETENSORS:
        from .formats import audit_safetensors

        return audit_safetensors(path, options)
    if fmt is Format.SHARD_INDEX:
        from .shards import audit_index

        return audit_index(path, options)
    from .formats import audit_torch

    return audit_torch(path, fmt, options)
