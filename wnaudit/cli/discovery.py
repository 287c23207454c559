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
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..checkpoint.sniff import (
    CHECKPOINT_SUFFIXES, HEAD_BYTES, INDEX_SUFFIX, Format, is_checkpoint_name, is_index_name, looks_like_checkpoint, signature_of,
)
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
    #: Checkpoints found by walking a directory rather than named: their fold needs ``--unsafe-fixes``.
    walked: set[Path] = field(default_factory=set)


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
            before = (len(found.sources), len(found.checkpoints))
            _walk(path, config, found, add)
            found.walked |= _walked(path, found.checkpoints[before[1]:], sources_found=len(found.sources) > before[0])
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


def distinct_checkpoints(checkpoints: Sequence[Path]) -> list[Path]:
    """The checkpoints themselves: a shard covered by an index listed with it is part of that checkpoint."""
    indexes = [path for path in checkpoints if is_index_name(path)]
    if not indexes:
        return list(checkpoints)
    from ..checkpoint.shards import covered_shards

    covered = set().union(*(covered_shards(index) for index in indexes))
    return [path for path in checkpoints if is_index_name(path) or Path(os.path.realpath(path)) not in covered]


def _walked(root: Path, checkpoints: Sequence[Path], *, sources_found: bool) -> set[Path]:
    """The checkpoints a walk of ``root`` found that the user did not name.

    A checkpoint named on the command line is what the user asked to fold; one
    found in a walk may be what the project's own loader reads strictly, so its
    fold needs review.  A directory that is one sharded checkpoint and nothing
    else (its index at the top, no Python source) names that checkpoint.
    """
    distinct = distinct_checkpoints(checkpoints)
    if not sources_found and len(distinct) == 1 and is_index_name(distinct[0]) and distinct[0].parent == root:
        return set()
    return set(checkpoints)


def _exported_program(path: Path) -> bool:
    """A torch.export archive; a zip Python cannot read ("zip file version 6.4") is left to the checkpoint reader."""
    try:
        return looks_like_exported_program(path)
    except NotImplementedError:
        return False


def _walk(root: Path, config: Config, found: Inputs, add: Callable[[list[Path], Path], None]) -> None:
    """Every entry under ``root`` in ``os.walk``'s order (top down, sorted, directory links not entered).

    Built for trees of tens of thousands of files: names stay text until an
    entry is kept, links are told from the directory listing, and a file
    that is not Python source is opened once, its first bytes deciding
    whether it can be a checkpoint or an exported program at all.
    """
    real_root = os.path.realpath(root)
    pending = [str(root)]
    while pending:
        directory = pending.pop()
        listed = _list(directory)
        if listed is None:
            continue
        dirs, files = listed
        entered = [os.path.join(directory, d) for d in sorted(dirs) if not config.is_excluded_entry(d, os.path.join(directory, d), root)]
        for name, is_link, regular in sorted(files):
            text = os.path.join(directory, name)
            if name.endswith(_OWN_SUFFIXES) or config.is_excluded_entry(name, text, root):
                continue
            outside = is_link and not _inside(os.path.realpath(text), real_root)
            _take(text, name, outside, regular, found, add)
        pending.extend(d for d in reversed(entered) if not os.path.islink(d))


def _list(directory: str) -> tuple[list[str], list[tuple[str, bool, bool]]] | None:
    """(directory names, (file name, is a link, is a regular file)) as ``os.walk`` splits them (None: unreadable)."""
    dirs: list[str] = []
    files: list[tuple[str, bool, bool]] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    dirs.append(entry.name)
                else:
                    files.append((entry.name, entry.is_symlink(), _is_regular(entry)))
    except OSError:
        return None
    return dirs, files


def _is_regular(entry: os.DirEntry[str]) -> bool:
    """A regular file, links followed (from the listing's type where it has one): nothing else is ever opened."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _take(
    text: str, name: str, outside: bool, regular: bool, found: Inputs, add: Callable[[list[Path], Path], None],
) -> None:
    """Sort one walked file: source, exported program, checkpoint, or nothing (a ``Path`` only for what is kept)."""
    suffix = _suffix(name)
    if suffix in SOURCE_SUFFIXES:
        if outside:
            logger.info("%s: a symlink out of the walked tree; not checked (name it to check it)", text)
            return
        add(found.sources, Path(text))
        return
    head = _head(text) if regular else b""  # a device or FIFO is never opened (the sniffers refuse them too)
    by_name = _checkpoint_name(name, suffix)
    signature = signature_of(head)  # None: neither sniffer can say yes (an exported program is a zip)
    if not (by_name or signature is not None):
        return
    candidate = Path(text)
    if signature is not None and signature.format is Format.TORCH_ZIP and _exported_program(candidate):
        add(found.exported, candidate)
    elif by_name or looks_like_checkpoint(candidate):
        add(found.checkpoints, candidate)
    else:
        return
    if outside:
        found.read_only.add(candidate)


def _checkpoint_name(name: str, suffix: str) -> bool:
    """``is_checkpoint_name`` from the name alone (as text)."""
    return name.lower().endswith(INDEX_SUFFIX) or suffix.lower() in CHECKPOINT_SUFFIXES


def _suffix(name: str) -> str:
    """``PurePath(name).suffix``, without building a path."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def _head(path: str) -> bytes:
    """A regular file's first bytes (b"" for anything else or an unreadable file: no sniffer takes those)."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO never blocks the walk
    except OSError:
        return b""
    try:
        return os.read(handle, HEAD_BYTES) if stat.S_ISREG(os.fstat(handle).st_mode) else b""
    except OSError:
        return b""
    finally:
        os.close(handle)

