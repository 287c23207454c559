"""Options shared by the engines (source lint, checkpoint audit), set by the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .config import Config
from .findings import Finding

#: Audits a loaded module (WN2xx); the checkpoint entrance calls it on full-module
#: pickles.  The CLI wires in the module entrance, so no entrance imports another.
ModuleAuditor = Callable[[Any, str], list[Finding]]


@dataclass(frozen=True)
class RunOptions:
    """What the user asked for on the command line, resolved against the config.

    ``fix``: rewrite sources / fold checkpoints in place (safe fixes only
    unless ``unsafe_fixes``). ``diff``: print source
    fixes as unified diffs and write nothing. ``output``: write a fixed
    checkpoint there instead of in place (single checkpoint input only).
    ``trust_pickle``: allow unpickling full-module checkpoints (runs code from
    the file). ``spectral``: also fold spectral norm in checkpoints.
    ``progress``: show a progress bar on stderr (the CLI sets it only on a TTY).
    ``jobs``: worker processes for the source lint (0: automatic).
    ``module_auditor``: how the checkpoint entrance audits a pickled module.
    ``cache``: read and write the per-user cache (``common/cache.py``: syntax
    verdicts, byte facts, analyses, serving facts, cross-file answers);
    ``--no-cache`` turns all of it off, and so does ``WNAUDIT_NO_CACHE=1``.
    ``fix_training_in_place``: fold checkpoints holding optimizer or scheduler
    state in place too (otherwise only into an ``output`` copy).
    ``discard_journal``: delete a journal an interrupted fix left, unread.
    """

    config: Config = field(default_factory=Config)
    fix: bool = False
    #: Also apply fixes that need review (``Applicability.UNSAFE``); ``--fix`` alone applies safe ones.
    unsafe_fixes: bool = False
    diff: bool = False
    output: Path | None = None
    trust_pickle: bool = False
    spectral: bool = False
    progress: bool = False
    jobs: int = 0
    verbose: bool = False
    module_auditor: ModuleAuditor | None = None
    fix_training_in_place: bool = False
    #: Checkpoints a directory walk reached through a symlink out of the walked tree: never rewritten.
    read_only: frozenset[Path] = frozenset()
    cache: bool = True
    #: Checkpoints found by walking a directory, not named: folding them needs ``--unsafe-fixes``
    #: (the project's own strict loader may read them; ruff's "safe" keeps the program working).
    walked: frozenset[Path] = frozenset()
    #: Set per checkpoint by the audit: this one's fold needs review (it was found by a walk).
    fold_needs_review: bool = False
    #: ``--discard-journal``: delete the journal of an interrupted multi-file fix instead of finishing it.
    discard_journal: bool = False
