"""Expand command-line paths into source files and checkpoint inputs."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..checkpoint.sniff import is_checkpoint_name, looks_like_checkpoint
from ..common.config import Config
from ..common.findings import InputError

logger = logging.getLogger(__name__)

#: What goes to the source rules: Python files and Jupyter notebooks (cells seen as one module).
SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass
class Inputs:
    sources: list[Path] = field(default_factory=list)
    checkpoints: list[Path] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


def discover(paths: Sequence[Path], config: Config) -> Inputs:
    """Sort inputs into source files and checkpoints, in a deterministic order.

    ruff's exclusion model: a path named on the command line is linted even
    if an exclude pattern matches it, unless ``config.force_exclude``
    (``--force-exclude``, which the pre-commit hooks pass because pre-commit
    names every file); inside a named directory every entry is tested, and
    an excluded directory is not entered.
    """
    found = Inputs()
    seen: set[Path] = set()

    def add(target: list[Path], path: Path) -> None:
        # abspath, not resolve(): no system call per file of a large tree.
        key = Path(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            target.append(path)

    for path in paths:
        if config.force_exclude and config.is_path_excluded(path):
            logger.debug("%s: excluded (--force-exclude)", path)
            continue
        if path.is_dir():
            for directory, dirnames, filenames in os.walk(path):
                base = Path(directory)
                dirnames[:] = sorted(d for d in dirnames if not config.is_excluded(base / d, path))
                for name in sorted(filenames):
                    candidate = base / name
                    if config.is_excluded(candidate, path):
                        continue
                    if candidate.suffix in SOURCE_SUFFIXES:
                        add(found.sources, candidate)
                    elif is_checkpoint_name(candidate) or (not candidate.suffix and looks_like_checkpoint(candidate)):
                        add(found.checkpoints, candidate)
        elif path.suffix in SOURCE_SUFFIXES:
            add(found.sources, path)
        elif not path.exists() and not path.is_symlink():
            found.errors.append(InputError(str(path), "no such file or directory"))
        elif is_checkpoint_name(path) or looks_like_checkpoint(path):
            add(found.checkpoints, path)
        elif os.access(path, os.R_OK):
            found.errors.append(InputError(str(path), "not a Python file nor a recognised checkpoint format"))
        else:
            # Unreadable: let the checkpoint reader give the precise error.
            add(found.checkpoints, path)
    return found
