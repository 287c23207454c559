"""The files of a project root, and which of them mention a name as code: WN110's byte searches.

Only files that mention a name that matters are parsed; the rest is a byte
search, done once per name and project root whichever question asked it.
A file's project root is the nearest directory with a marker
(``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``.git``), walked whole.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..project import ImportBinding, Project
from .walk import skipped

_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_MARKER_LEVELS = 8
_QUOTES = frozenset(b"'\"")


@dataclass
class Pool:
    """The parsed files of one project root, and the names searched for so far."""

    root: Path
    files: tuple[Path, ...]
    searched: set[str] = field(default_factory=set)
    #: file -> the searched names it mentions.
    mentions: dict[Path, set[str]] = field(default_factory=dict)
    #: file -> the pool files importing it (built on first need), and the transitive closure per file.
    importers: "dict[Path, set[tuple[Path, str, str]]] | None" = None
    reach: dict[tuple[Path, str], set[Path]] = field(default_factory=dict)
    #: (file, name) -> the other names importers bind it as (``from .s3gen import S3Token2Wav as S3Gen``).
    aliases: dict[tuple[Path, str], set[str]] = field(default_factory=dict)


class ProjectPools:
    """Each file's project root and its pool, with the name searches and import reach over it, kept per run."""

    def __init__(
        self, project: Project, read: Callable[[Path], "bytes | None"],
        imports: Callable[[Path], "Iterable[tuple[ImportBinding, Path]]"], walk: Callable[[Path, bool], tuple[Path, ...]],
    ) -> None:
        self._project = project
        self._read = read
        #: A file's import bindings with the project file each reaches (modules and package ``__init__``).
        self._imports = imports
        #: The project's files under a root (``walk.project_files``; the workspace's keeps what it found).
        self._walk = walk
        self._pools: dict[Path, Pool] = {}
        #: file -> the pool of its project root (``pool``): the markers the run saw do not change during it.
        self._pool_of: dict[Path, Pool] = {}
        self._mentioned: dict[tuple[Path, str], bool] = {}

    def root_of(self, path: Path) -> tuple[Path, bool]:
        """The project directory of a file, and whether it was found by a marker (then walked whole)."""
        location = self._project.locate(path)
        top = location.home.parent if location.home != location.path else location.path.parent
        current = top
        for _ in range(_MARKER_LEVELS):
            if any(self._project.exists(os.path.join(current, marker)) for marker in _MARKERS):
                return current, True
            parent = current.parent
            if parent == current or skipped(current.name):
                break  # a walk from above would not enter this directory (``.cache``, ``site-packages``)
            current = parent
        return top, False

    def pool(self, path: Path) -> Pool:
        """The pool of the file's project root (kept per file: ``root_of`` asks up to eight directories for markers)."""
        pool = self._pool_of.get(path)
        if pool is None:
            root, marked = self.root_of(path)
            pool = self._pools.get(root)
            if pool is None:
                pool = self._pools[root] = Pool(root, self._walk(root, marked))
            self._pool_of[path] = pool
        return pool

    def search(self, pool: Pool, names: Iterable[str], within: "set[Path] | None" = None) -> None:
        """Record which pool files mention any of ``names`` as code (one pass per file for the whole batch).

        ``within``: only these files (the ones that can import where the names are defined).
        A mention that is a whole string literal (``"EncodecModel"`` in a
        lazy-import table or an auto mapping) is not code the rule can follow,
        and does not make the file worth parsing.
        """
        new = sorted({n for n in names if n and n not in pool.searched})
        if not new:
            return
        pool.searched.update(new)
        words = [(n, n.encode("utf-8")) for n in new]
        for file in pool.files if within is None else [f for f in pool.files if f in within]:
            data = self._read(file)
            if data is None:
                continue
            found = {name for name, word in words if word in data and _names_in_code(data, word)}
            if found:
                pool.mentions.setdefault(file, set()).update(found)

    def reach(self, pool: Pool, file: Path, name: str) -> set[Path]:
        """``file`` and the pool files that can name its ``name`` through imports the resolver follows.

        A file importing the name (or ``*``) from ``file`` binds it, and so
        may re-export it to its own importers; a file importing ``file`` as
        a module can use ``module.name`` but re-exports nothing.  Names are
        searched for in these files alone: elsewhere they cannot stand for
        what ``file`` defines.
        """
        if pool.importers is None:
            pool.importers = {}
            for importer in pool.files:
                for binding, target in self._imports(importer):
                    pool.importers.setdefault(target, set()).add((importer, binding.bound, binding.attribute))
        found = pool.reach.get((file, name))
        if found is None:
            found = {file}
            queue = [(file, name)]
            seen = set(queue)
            while queue:
                current, bound_as = queue.pop()
                for importer, bound, attribute in pool.importers.get(current, ()):
                    if attribute == "*" and bound != "*":
                        found.add(importer)  # ``import pkg.model`` / ``from pkg import model``: ``model.Name``
                        continue
                    if attribute == bound_as or attribute == "*":
                        found.add(importer)
                        step = (importer, bound_as if attribute == "*" else bound)
                        if step not in seen:
                            seen.add(step)
                            queue.append(step)
            pool.reach[(file, name)] = found
            pool.aliases[(file, name)] = {bound for _, bound in seen} - {name, "*"}
        return found

    def files_mentioning(self, file: Path, name: str) -> list[Path]:
        """The files of ``file``'s project that mention ``name`` as code."""
        pool = self.pool(file)
        self.search(pool, [name])
        return self.mentioning(pool, {name})

    @staticmethod
    def mentioning(pool: Pool, names: set[str]) -> list[Path]:
        """The pool files that mention any of ``names`` (searched before), in path order.

        ``pool.mentions`` fills in the order the run's searches came, which
        depends on what else it linted: the order here must not.
        """
        return sorted((file for file, found in pool.mentions.items() if found & names), key=str)

    def reaching_and_naming(self, pool: Pool, file: Path, name: str, word: str) -> list[Path]:
        """The pool files that can name ``file``'s ``name`` through imports and mention ``word`` as code."""
        self.search(pool, [word])
        users = set(self.mentioning(pool, {word}))
        return [f for f in sorted(self.reach(pool, file, name)) if f in users] if users else []

    def named_elsewhere(self, file: Path, name: str) -> bool:
        """Another project file that can reach ``file``'s ``name`` through imports names it."""
        reach = self.reach(self.pool(file), file, name)
        return any(other != file and self.mentions(other, name) for other in reach)

    def mentions(self, path: Path, name: str) -> bool:
        """The file holds ``name`` as a whole word (anywhere: the name resolver's quick "cannot bind it" test)."""
        key = (path, name)
        found = self._mentioned.get(key)
        if found is None:
            data = self._read(path) or b""
            found = self._mentioned[key] = re.search(rb"\b" + re.escape(name.encode("utf-8")) + rb"\b", data) is not None
        return found

    def imports(self, file: Path, module: str) -> bool:
        """Does a file of ``file``'s project (its walk leaves tests out) import ``module``? WN110's fix: is wnaudit a dependency."""
        pool = self.pool(file)
        self.search(pool, [module])
        for path in self.mentioning(pool, {module}):
            data = self._read(path)
            if data is not None and module in _imported_modules(data):
                return True
        return False


def annotates(data: bytes, name: str) -> bool:
    """The file types a parameter with ``name`` (``backbone: Backbone``, ``Optional[Backbone]``)."""
    return re.search(rb":\s*(?:[\w.]*\[)?(?:\w+\.)*" + re.escape(name.encode("utf-8")) + rb"\b", data) is not None


def _names_in_code(data: bytes, word: bytes) -> bool:
    """``word`` occurs in ``data`` as a whole identifier, at least once not as a whole string literal."""
    position = data.find(word)
    while position >= 0:
        end = position + len(word)
        before = data[position - 1] if position else 0
        after = data[end] if end < len(data) else 0
        if not _identifier_byte(before) and not _identifier_byte(after) and not (before in _QUOTES and after in _QUOTES):
            return True
        position = data.find(word, position + 1)
    return False


def _identifier_byte(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128


def _imported_modules(data: bytes) -> set[str]:
    """The top-level packages a file imports, anywhere in it (none when it does not parse)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found
