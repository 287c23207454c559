"""Expand command-line paths into source files and checkpoint inputs.

In a directory walk, checkpoints are found by content whatever their name
(a few bytes per non-source file, see :func:`looks_like_checkpoint`), a file
reached through several links (a Hugging Face cache's snapshot symlink and
its blob, hard links) is taken once, and a symlink leading out of the walked
tree is never followed into a rewrite: such a checkpoint is audited but marked
read-only, such a source file is skipped.  Explicitly named paths are taken
as given (a named symlink is followed, as the user asked for that file).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..checkpoint.sniff import is_checkpoint_name, looks_like_checkpoint
from ..common.config import Config
from ..common.findings import InputError
from ..exported.sniff import looks_like_exported_program

logger = logging.getLogger(__name__)

#: What goes to the source rules: Python files and Jupyter notebooks (cells seen as one module).
SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
#: wnaudit's own temporary, staged and journal files: never inputs.
_OWN_SUFFIXES = (".wnaudit-tmp", ".wnaudit-staged", ".wnaudit-journal", ".wnaudit-journal.new")


@dataclass
class Inputs:
    sources: list[Path] = field(default_factory=list)
    checkpoints: list[Path] = field(default_factory=list)
    #: torch.export archives and AOTInductor packages (``.pt2``), recognised by layout.
    exported: list[Path] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    #: Checkpoints reached through a symlink out of the walked tree: audited, never rewritten.
    read_only: set[Path] = field(default_factory=set)


def _identity(path: Path) -> tuple[int, int] | Path:
    """What makes two paths the same file: device and inode (symlinks followed)."""
    try:
        info = os.stat(path)
    except OSError:
        return Path(os.path.abspath(path))
    return (info.st_dev, info.st_ino)


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def discover(paths: Sequence[Path], config: Config) -> Inputs:
    """Sort inputs into source files and checkpoints, in a deterministic order.

    ruff's exclusion model: a path named on the command line is linted even
    if an exclude pattern matches it, unless ``config.force_exclude``
    (``--force-exclude``, which the pre-commit hooks pass because pre-commit
    names every file); inside a named directory every entry is tested, and
    an excluded directory is not entered.
    """
    found = Inputs()
    seen: dict[tuple[int, int] | Path, tuple[list[Path], int]] = {}

    def add(target: list[Path], path: Path) -> None:
        key = _identity(path)
        if key in seen:
            listed, position = seen[key]
            # Report a file under the name a person gave it (a snapshot symlink), not its blob.
            if path.is_symlink() and not listed[position].is_symlink():
                listed[position] = path
            logger.debug("%s: the same file as %s; checked once", path, listed[position])
            return
        seen[key] = (target, len(target))
        target.append(path)

    for path in paths:
        if config.force_exclude and config.is_path_excluded(path):
            logger.debug("%s: excluded (--force-exclude)", path)
            continue
        if path.is_dir():
            _walk(path, config, found, add)
        elif path.suffix in SOURCE_SUFFIXES:
            add(found.sources, path)
        elif not path.exists() and not path.is_symlink():
            found.errors.append(InputError(str(path), "no such file or directory"))
        elif _exported_program(path):
            add(found.exported, path)
        elif is_checkpoint_name(path) or looks_like_checkpoint(path):
            add(found.checkpoints, path)
        elif os.access(path, os.R_OK):
            found.errors.append(InputError(str(path), "not a Python file nor a recognised checkpoint format"))
        else:
            # Unreadable: let the checkpoint reader give the precise error.
            add(found.checkpoints, path)
    return found


def _exported_program(path: Path) -> bool:
    """A torch.export archive; a zip Python cannot read ("zip file version 6.4") is left to the checkpoint reader."""
    try:
        return looks_like_exported_program(path)
    except NotImplementedError:
        return False


def _walk(root: Path, config: Config, found: Inputs, add: Callable[[list[Path], Path], None]) -> None:
    real_root = os.path.realpath(root)
    for directory, dirnames, filenames in os.walk(root):
        base = Path(directory)
        dirnames[:] = sorted(d for d in dirnames if not config.is_excluded(base / d, root))
        for name in sorted(filenames):
            candidate = base / name
            if name.endswith(_OWN_SUFFIXES) or config.is_excluded(candidate, root):
                continue
            outside = candidate.is_symlink() and not _inside(os.path.realpath(candidate), real_root)
            if candidate.suffix in SOURCE_SUFFIXES:
                if outside:
                    logger.info("%s: a symlink out of the walked tree; not checked (name it to check it)", candidate)
                    continue
                add(found.sources, candidate)
            elif _exported_program(candidate):
                add(found.exported, candidate)
                if outside:
                    found.read_only.add(candidate)
            elif is_checkpoint_name(candidate) or looks_like_checkpoint(candidate):
                add(found.checkpoints, candidate)
                if outside:
                    found.read_only.add(candidate)
