"""The project's Python files as WN110 reads them: which directories a walk enters, which files it keeps.

One walk per project root and run (``Workspace.project_files``); a record of
derived answers checks its result again before it is reused.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from collections import deque
from typing import Callable, Iterable, Iterator

from ...common.config import DEFAULT_MAX_SOURCE_BYTES

logger = logging.getLogger(__name__)

#: A walk of more Python files than this is cut short (a home directory is not a project);
#: the project's packages are read first, and the warning names what was left out.
MAX_PROJECT_FILES = 50_000
_SKIPPED_DIRS = frozenset({"__pycache__", "site-packages", "dist-packages", "node_modules", "test", "tests", "testing"})


def is_test_file(path: Path) -> bool:
    return is_test_name(path.name)


def is_test_name(name: str) -> bool:
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def too_big(path: Path | str, stat: Callable[[str], os.stat_result] | None = None) -> bool:
    """Larger than the lint reads a source file (``max-source-bytes``' default): never read whole here either.

    ``stat``: how the size is asked (a record's check passes the stats it has just taken).
    """
    try:
        return (stat or os.stat)(os.fspath(path)).st_size > DEFAULT_MAX_SOURCE_BYTES
    except OSError:
        return True


def skipped(name: str) -> bool:
    """A directory the project walk does not enter: hidden ones, caches, installed code, tests."""
    return name.startswith(".") or name in _SKIPPED_DIRS


def project_files(root: Path, whole: bool) -> Iterable[Path]:
    """The project's Python files and notebooks: the whole tree under a marked root, else the root's files and packages.

    At most :data:`MAX_PROJECT_FILES`, in the order :func:`_directories` walks:
    the project's importable code first, nearest the root first, so a tree of
    data or copied scripts beside the code is what a cut leaves out, and the
    warning names it.
    """
    return (Path(text) for text in project_file_names(root, whole))


def project_file_names(
    root: Path | str, whole: bool, stat: Callable[[str], os.stat_result] | None = None, quiet: bool = False,
    listings: Listings | None = None,
) -> Iterator[str]:
    """``project_files`` as text (``str`` of each path), no ``Path`` built per file (a record's check walks again).

    ``stat``: as ``too_big`` asks it.  ``quiet``: a cut walk is not logged (a record's check: the run that
    uses the record says it, or its kept answer does).  ``listings``: directories listed already.
    """
    count = 0
    walk = _Walk(os.fspath(root), whole, listings or Listings(keep=False))
    for directory, names in walk:
        for name in names:
            path = _join(directory, name)
            if is_test_name(name) or too_big(path, stat):
                continue
            count += 1
            if count > MAX_PROJECT_FILES:
                if not quiet:
                    _warn_cut(Path(root), [Path(d) for d in walk.unread(directory)])
                return
            yield path


def _warn_cut(root: Path, unread: list[Path]) -> None:
    shown = ", ".join(_relative(root, d) for d in unread[:3])
    more = f" and {len(unread) - 3} more" if len(unread) > 3 else ""
    logger.warning(
        "%s: more than %d Python files; the serving-path search read the project's packages first and skipped "
        "the rest of %s%s (WN110 may miss inference paths there)", root, MAX_PROJECT_FILES, shown, more,
    )


def _relative(root: Path, directory: Path) -> str:
    return str(directory.relative_to(root)) if directory != root else "."


class _Walk:
    """Directories breadth first, importable code before the rest; each with its ``.py`` and ``.ipynb`` file names, sorted.

    Importable code: the root's own files, package directories (``__init__.py``)
    reached from the root or from ``src/`` through packages, and the namespace
    portions inside them (directories without ``__init__.py`` below a package).  The rest (scripts,
    tools, data, anything else a marked root holds) comes after, breadth first
    too.  Virtual environments (``pyvenv.cfg``) and :func:`skipped` directories
    are never entered; directory links are not followed.  Directories are text
    (``os.path.join`` of the root's text: the ``str`` of the paths ``Path`` joins).
    """

    def __init__(self, root: str, whole: bool, listings: Listings) -> None:
        self.whole = whole
        self.listings = listings
        self.code: deque[str] = deque([root])
        self.rest: deque[str] = deque()
        self.root = root
        #: Code directories that are packages (regular or namespace portions): their subdirectories may be portions.
        self.packages: set[str] = set()
        #: Directories listed to see whether they are packages, kept until the walk enters them (listed once).
        self._listed: dict[str, list[tuple[str, bool | None]] | None] = {}

    def __iter__(self) -> Iterator[tuple[str, list[str]]]:
        while self.code or self.rest:
            is_code = bool(self.code)
            directory = self.code.popleft() if is_code else self.rest.popleft()
            listed = self._list(directory)
            if listed is None:
                continue
            files, dirs = listed
            for name in dirs:
                child = _join(directory, name)
                if is_code and (self._src_layout(directory, name) or self._package(directory, name, child)):
                    self.code.append(child)
                elif self.whole:
                    self.rest.append(child)
            yield directory, [name for name in files if name.endswith((".py", ".ipynb"))]  # a notebook may serve

    def _package(self, directory: str, name: str, child: str) -> bool:
        """A regular package, or a namespace portion inside one (``pkg/sub/`` without ``__init__.py``)."""
        if child not in self._listed:
            self._listed[child] = _entries(self.listings.scan(child))
        entries = self._listed[child]
        if any(entry == "__init__.py" for entry, _ in entries or ()) or (directory in self.packages and name.isidentifier()):
            self.packages.add(child)
            return True
        return False

    def _src_layout(self, directory: str, name: str) -> bool:
        """``src/`` under a marked root holds the project's packages (the src layout)."""
        return self.whole and directory == self.root and name == "src"

    def unread(self, current: str) -> list[str]:
        """The directories a cut at ``current`` leaves (partly) unread: it, and all still waiting."""
        return [current, *self.code, *self.rest]

    def _list(self, directory: str) -> tuple[list[str], list[str]] | None:
        """(file names, directory names to enter), sorted; None for a virtual environment or an unreadable one."""
        entries = self._listed.pop(directory) if directory in self._listed else _entries(self.listings.scan(directory))
        if entries is None:
            return None
        files = [name for name, is_dir in entries if is_dir is False]
        if "pyvenv.cfg" in files:
            return None
        return sorted(files), sorted(name for name, is_dir in entries if is_dir and not skipped(name))


def _join(directory: str, name: str) -> str:
    """``str(Path(directory) / name)`` for a directory that is the ``str`` of a path (``"."`` adds no prefix)."""
    return name if directory == "." else os.path.join(directory, name)


def _entries(listed: list[os.DirEntry[str]] | None) -> list[tuple[str, bool | None]] | None:
    """Each entry's name and whether it is a directory, links not followed (None: unknown); None: not listable."""
    if listed is None:
        return None
    found: list[tuple[str, bool | None]] = []
    for entry in listed:
        try:
            found.append((entry.name, entry.is_dir(follow_symlinks=False)))
        except OSError:
            found.append((entry.name, None))
    return found


class Listings:
    """Each directory listed once, for every walk that asks (a record's check walks one tree three ways).

    A listing is the directory's entries as ``os.scandir`` gave them (None: not listable, or an
    error while listing it, when ``os.walk`` yields nothing of it either).  Kept for one check only
    (the tree may change between runs); ``keep=False``: each walk lists afresh, keeping nothing.
    """

    def __init__(self, keep: bool = True) -> None:
        self._keep = keep
        self._listed: dict[str, list[os.DirEntry[str]] | None] = {}

    def scan(self, directory: str) -> list[os.DirEntry[str]] | None:
        if directory in self._listed:
            return self._listed[directory]
        try:
            with os.scandir(directory) as entries:
                listed: list[os.DirEntry[str]] | None = list(entries)
        except OSError:
            listed = None
        if self._keep:
            self._listed[directory] = listed
        return listed


def walk_tree(root: Path | str, listings: Listings | None = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(root)`` (top down, links to directories not entered, errors skipped), on ``listings``.

    The same triples in the same order; a caller may prune or sort the directory names in place.
    A stack, not recursion, as ``os.walk`` since Python 3.12: a deep tree is no ``RecursionError``.
    """
    listings = listings or Listings(keep=False)
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        listed = listings.scan(top)
        if listed is None:
            continue
        dirs: list[str] = []
        files: list[str] = []
        for entry in listed:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
        yield top, dirs, files
        for name in reversed(dirs):
            child = os.path.join(top, name)
            if not os.path.islink(child):
                stack.append(child)
