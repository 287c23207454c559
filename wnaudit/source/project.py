"""Where a module lives: module names from packages, imports resolved to files on disk.

This is the part of Python's import system the source lint needs, and no
more.  A file's module name comes from the regular packages above it (walk
up ``__init__.py``); under a configured source root (``[tool.wnaudit] src``,
default: the config root) directories without ``__init__.py`` are namespace
packages, so the name is the path below that root.  An import resolves to a
file through the file's own search path: the root its name was taken from,
the directory above its top-level package, its own directory for a script,
then the configured roots.  Two files are one module only when they are one
path; nothing is ever matched by bare name.

The project is bounded: torch's API is known from the catalogue and never
looked up on disk, and nothing under ``site-packages`` is followed unless the
importing file itself lives in that package.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple

from .resolve import API_ROOTS

#: Directories that hold installed third-party code, never the project's own.
_INSTALLED = frozenset({"site-packages", "dist-packages"})
_SOURCE_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Location:
    """A file as the import system sees it."""

    path: Path  # resolved, absolute
    module: str
    is_package: bool
    #: Directories searched, in order, for the file's absolute imports.
    search: tuple[Path, ...]
    #: Installed third-party code is followed only inside this directory (the file's own top-level package).
    home: Path
    #: Files with the same search path and home resolve every import alike: this number says which.
    view: int = 0


def _resolved(path: Path | str) -> Path:
    try:
        return Path(path).resolve()
    except OSError:
        return Path(os.path.abspath(path))


class Project:
    """Module names and import resolution for one run (one set of source roots)."""

    def __init__(self, roots: Iterable[Path | str] = ()) -> None:
        self.roots: tuple[Path, ...] = tuple(dict.fromkeys(_resolved(r) for r in roots))
        self._locations: dict[Path, Location] = {}
        self._by_name: dict[str, Location] = {}
        self._modules: dict[tuple[Path, str], Path | None] = {}
        self._resolutions: dict[tuple[int, str], tuple[Path, str] | None] = {}
        self._views: dict[tuple[tuple[Path, ...], Path], int] = {}
        self._module_files: dict[tuple[int, str], Path | None] = {}
        self._directories: dict[str, tuple[tuple[str, ...], str, bool, Path | None, tuple[Path, ...]]] = {}
        # File-system answers are cached for one run (the import system caches directory listings too).
        self._isfile = functools.lru_cache(maxsize=None)(os.path.isfile)
        self._isdir = functools.lru_cache(maxsize=None)(os.path.isdir)

    def _is_package_dir(self, directory: Path | str) -> bool:
        return self._isfile(os.path.join(directory, "__init__.py"))

    def locate_input(self, path: Path | str) -> Location:
        """``locate`` for a path the user named: links resolved, so one file reached twice is one module."""
        return self.locate(_resolved(path))

    def locate(self, path: Path | str) -> Location:
        """Where a file sits in the import system (``path`` made absolute, links kept, as imports see it)."""
        name = str(path)
        found = self._by_name.get(name)
        if found is None:
            resolved = Path(os.path.abspath(name))
            found = self._locations.get(resolved)
            if found is None:
                found = self._locations[resolved] = self._locate(resolved)
            self._by_name[name] = found
        return found

    def _locate(self, path: Path) -> Location:
        is_package = path.name == "__init__.py"
        package_parts, top_dir, in_package, naming_root, view_search = self._directory(str(path.parent))
        parts = [*package_parts] if is_package else [*package_parts, path.stem]
        home = Path(top_dir, parts[0]) if in_package and parts else path
        search = view_search if in_package else (*view_search, path.parent)
        unique = tuple(dict.fromkeys((*search, *self.roots)))
        view = self._views.setdefault((unique, home), len(self._views))
        return Location(path, ".".join(parts), is_package, unique, home, view)

    def _directory(self, directory: str) -> tuple[tuple[str, ...], str, bool, Path | None, tuple[Path, ...]]:
        """Per directory: its package name parts, the directory above the top package, whether it is a package."""
        cached = self._directories.get(directory)
        if cached is not None:
            return cached
        parts: list[str] = []
        current = directory
        while self._is_package_dir(current):
            parent = os.path.dirname(current)
            if parent == current:
                break
            parts.insert(0, os.path.basename(current))
            current = parent
        top_dir = current
        naming_root = self._namespace_root(top_dir)
        if naming_root is not None and str(naming_root) != top_dir:
            parts = [*Path(top_dir).relative_to(naming_root).parts, *parts]
        search = (naming_root or Path(top_dir), Path(top_dir))
        result = (tuple(parts), top_dir, bool(self._is_package_dir(directory)), naming_root, search)
        self._directories[directory] = result
        return result

    def _namespace_root(self, top_dir: str) -> Path | None:
        """The deepest source root at or above ``top_dir`` whose path below it spells a module name."""
        best: Path | None = None
        for root in self.roots:
            text = str(root)
            if top_dir != text and not top_dir.startswith(text.rstrip(os.sep) + os.sep):
                continue
            below = top_dir[len(text) :].strip(os.sep)
            if below and not all(part.isidentifier() for part in below.split(os.sep)):
                continue
            if best is None or len(text) > len(str(best)):
                best = root
        return best

    def module_file(self, dotted: str, location: Location) -> Path | None:
        """The file (or namespace directory) that ``import dotted`` finds from ``location``."""
        if not dotted or dotted.partition(".")[0] in API_ROOTS:
            return None
        key = (location.view, dotted)
        if key not in self._module_files:
            self._module_files[key] = self._module_file(dotted, location)
        return self._module_files[key]

    def _module_file(self, dotted: str, location: Location) -> Path | None:
        namespace: Path | None = None
        for root in location.search:
            found = self._in_root(root, dotted)
            if found is None or not self._allowed(found, location):
                continue
            if found.suffix in _SOURCE_SUFFIXES:
                return found  # a module or regular package wins over namespace portions anywhere
            namespace = namespace or found
        return namespace

    def _in_root(self, root: Path, dotted: str) -> Path | None:
        key = (root, dotted)
        if key in self._modules:
            return self._modules[key]
        parts = dotted.split(".")
        found: Path | None = None
        if all(part.isidentifier() for part in parts):
            base = os.path.join(root, *parts)
            for candidate in (os.path.join(base, "__init__.py"), *(base + suffix for suffix in _SOURCE_SUFFIXES)):
                if self._isfile(candidate):
                    found = Path(candidate)
                    break
            else:
                if self._isdir(base):
                    found = Path(base)  # a namespace package: a directory without __init__.py
        self._modules[key] = found
        return found

    @staticmethod
    def _allowed(found: Path, location: Location) -> bool:
        if not _INSTALLED.intersection(found.parts):
            return True
        return found == location.home or location.home in found.parents

    def resolve(self, dotted: str, location: Location) -> tuple[Path, str] | None:
        """Split a qualified name into the file defining it and the name inside that file.

        The longest prefix that is a module wins (``pkg.mod.Class.method`` ->
        ``pkg/mod.py``, ``Class.method``), as attribute access after import does.
        A namespace package has no file: names in it are submodules or nothing.
        """
        key = (location.view, dotted)
        if key in self._resolutions:
            return self._resolutions[key]
        result: tuple[Path, str] | None = None
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            found = self.module_file(".".join(parts[:cut]), location)
            if found is None:
                continue
            if found.suffix in _SOURCE_SUFFIXES:
                result = (found, ".".join(parts[cut:]))
            break
        self._resolutions[key] = result
        return result


# -- which files can matter, decided from their bytes ------------------------

#: An import statement, matched where a statement may start (a line's start, or after ``;`` or ``:``).
_STATEMENT = re.compile(
    rb"[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n;#\\]|\\\n)*)"
    rb"|import[ \t]+((?:[^\n;#\\]|\\\n)*))",
)
_STATEMENT_INSIDE_LINE = re.compile(rb"[;:](?=[ \t]*(?:from|import)\b)")
_NAME = re.compile(rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


class ImportBinding(NamedTuple):
    """What one import binds: ``bound`` (a name, or ``*``) from ``module``, attribute ``attribute`` (``*``: all)."""

    bound: str
    module: str
    attribute: str


_SEGMENT = re.compile(rb"([A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*|\*)(?:\s+as\s+([A-Za-z_]\w*))?")


def import_bindings(data: bytes, location: Location) -> list[ImportBinding]:
    """Every binding an import statement in ``data`` may make, with absolute module names.

    Found with a regular expression, not a parse: a superset (imports in
    strings count too) that costs a scan, so deciding that a file cannot
    matter never needs its syntax tree.  ``from pkg import name`` gives two
    readings, ``name`` as an attribute of ``pkg`` and as the module ``pkg.name``.
    """
    if b"import" not in data:
        return []
    package = location.module.split(".") if location.module else []
    if not location.is_package:
        package = package[:-1]
    out: list[ImportBinding] = []
    for match in _statements(data):
        if match.group(3) is not None:
            for segment in _SEGMENT.finditer(match.group(3)):
                dotted = re.sub(rb"\s", b"", segment.group(1)).decode("ascii", "replace")
                alias = segment.group(2)
                bound = alias.decode("ascii") if alias else dotted.partition(".")[0]
                out.append(ImportBinding(bound, dotted, "*"))
                if not alias and "." in dotted:
                    out.append(ImportBinding(bound, dotted.partition(".")[0], "*"))
            continue
        module = match.group(1).decode("ascii", "replace")
        level = len(module) - len(module.lstrip("."))
        module = module[level:]
        if level:
            if level - 1 > len(package):
                continue
            base = package[: len(package) - (level - 1)]
            module = ".".join([*base, *([module] if module else [])])
        prefix = f"{module}." if module else ""
        for raw_name, raw_alias in _SEGMENT.findall(match.group(2)):
            name = raw_name.decode("ascii", "replace")
            if name == "*":
                out.append(ImportBinding("*", module, "*"))
                continue
            if name in ("import", "as"):
                continue
            bound = raw_alias.decode("ascii") if raw_alias else name
            if module:
                out.append(ImportBinding(bound, module, name))
            out.append(ImportBinding(bound, prefix + name, "*"))
    return list(dict.fromkeys(out))


def _statements(data: bytes) -> "Iterable[re.Match[bytes]]":
    """Import statements around each occurrence of ``import`` (a find, then a match on its line)."""
    position = data.find(b"import")
    done = -1
    while position >= 0:
        line_start = data.rfind(b"\n", 0, position) + 1
        line_end = data.find(b"\n", position)
        line_end = len(data) if line_end < 0 else line_end
        starts = [line_start] + [m.end() for m in _STATEMENT_INSIDE_LINE.finditer(data, line_start, line_end)]
        for start in starts:
            if start <= done:
                continue
            match = _STATEMENT.match(data, start)
            if match is not None and match.end() > start and (match.group(1) is not None or match.group(3) is not None):
                done = max(done, match.end())
                yield match
        position = data.find(b"import", max(position + 6, done))
