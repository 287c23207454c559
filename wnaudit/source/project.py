"""Where a module lives: module names from packages, imports resolved to files on disk.

This is the part of Python's import system the source lint needs, and no
more.  A file's module name comes from the regular packages above it (walk
up ``__init__.py``, and through directories without one below a regular
package: PEP 420 namespace portions, importable as ``pkg.sub.mod`` since
the package's ``__path__`` finds them); under a configured source root (``[tool.wnaudit] src``,
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

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple

from ..common.cache import Stamp, take_stamp
from .resolve import API_ROOTS

#: Directories that hold installed third-party code, never the project's own.
_INSTALLED = frozenset({"site-packages", "dist-packages"})
_SOURCE_SUFFIXES = (".py", ".pyi")
_FILE, _DIR = 1, 2


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


def _resolved(path: Path | str, directories: dict[str, str] | None = None) -> Path:
    """``Path.resolve()``: links followed.  ``directories``: realpaths already known (a directory's files share it)."""
    return Path(resolved_text(path, directories))


def resolved_text(path: Path | str, directories: dict[str, str] | None = None, link: bool | None = None) -> str:
    """``_resolved`` as text (normalised: the string of the ``Path`` it stands for), no ``Path`` built.

    ``link``: whether ``path`` itself is a symbolic link, when the caller's ``lstat`` said so already.
    """
    text = os.fspath(path)
    absolute = os.path.abspath(text)
    try:
        directory, name = os.path.split(absolute)
        if directories is None or not name or has_parent_part(text) or (os.path.islink(absolute) if link is None else link):
            return os.path.realpath(text)  # ``..`` after a link is resolved after the link, as resolve() does
        return os.path.join(real_directory(directory, directories), name)
    except OSError:
        return absolute


def real_directory(directory: str, known: dict[str, str]) -> str:
    """``os.path.realpath`` of an absolute, normalised ``directory``: its parent's, joined, unless it is a link.

    One ``lstat`` per directory not seen before (``realpath`` takes one per component of every path it is given).
    """
    real = known.get(directory)
    if real is None:
        parent, name = os.path.split(directory)
        if not name or parent == directory or os.path.islink(directory):
            real = os.path.realpath(directory)
        else:
            real = os.path.join(real_directory(parent, known), name)
        known[directory] = real
    return real


def has_parent_part(text: str) -> bool:
    """``".." in Path(text).parts``, without building the path."""
    if ".." not in text:
        return False
    if os.altsep:
        text = text.replace(os.altsep, os.sep)
    return ".." in text.split(os.sep)


class Project:
    """Module names and import resolution for one run (one set of source roots)."""

    def __init__(self, roots: Iterable[Path | str] = ()) -> None:
        self.roots: tuple[Path, ...] = tuple(dict.fromkeys(_resolved(r) for r in roots))
        self._locations: dict[str, Location] = {}
        self._package_views: dict[tuple[str, str], tuple[Path, tuple[Path, ...], int]] = {}
        self._script_search: dict[str, tuple[Path, ...]] = {}
        self._listings: dict[str, dict[str, int] | None] = {}
        self._root_texts: dict[Path, str] = {}
        self._by_name: dict[str, Location] = {}
        self._modules: dict[tuple[Path, str], Path | None] = {}
        self._resolutions: dict[tuple[int, str], tuple[Path, str] | None] = {}
        self._views: dict[tuple[tuple[Path, ...], Path], int] = {}
        self._module_files: dict[tuple[int, str], Path | None] = {}
        self._directories: dict[str, tuple[tuple[str, ...], str, bool, Path | None, tuple[Path, ...]]] = {}
        self._in_packages: dict[str, bool] = {}
        # File-system answers are cached for one run (the import system caches directory listings too);
        # they are also the observations a record of derived answers is checked against (``observations``).
        self._files: dict[str, bool] = {}
        self._dirs: dict[str, bool] = {}
        self._real_directories: dict[str, str] = {}
        self._exists: dict[str, bool] = {}
        #: The stamp taken before each listing of this run that holds no link (None: not taken): a record of
        #: derived answers keys those listings, so its next check need not list them again (``derived_cache``).
        self.listing_stamps: dict[str, Stamp] | None = None
        self._links_met = False

    def _isfile(self, path: str) -> bool:
        found = self._files.get(path)
        if found is None:
            found = self._files[path] = os.path.isfile(path)
        return found

    def _isdir(self, path: str) -> bool:
        found = self._dirs.get(path)
        if found is None:
            found = self._dirs[path] = os.path.isdir(path)
        return found

    def is_file(self, path: Path | str) -> bool:
        """``os.path.isfile``, asked once per run and recorded (``observations``)."""
        return self._isfile(os.fspath(path))

    def is_dir(self, path: Path | str) -> bool:
        """``os.path.isdir``, asked once per run and recorded (``observations``)."""
        return self._isdir(os.fspath(path))

    def exists(self, path: str) -> bool:
        """``os.path.exists``, asked once per run (and recorded like every file-system answer here)."""
        found = self._exists.get(path)
        if found is None:
            found = self._exists[path] = os.path.exists(path)
        return found

    def observations(self) -> tuple[dict[str, bool], dict[str, bool], dict[str, bool], dict[str, dict[str, int] | None]]:
        """What the file system answered this run: isfile, isdir, exists, and directory listings."""
        return self._files, self._dirs, self._exists, self._listings

    def met_links(self) -> bool:
        """Whether this run met a symbolic link: in a listing, or on the way to a directory (where it points is no observation)."""
        return self._links_met or any(real != directory for directory, real in self._real_directories.items())

    def _is_package_dir(self, directory: Path | str) -> bool:
        return self._isfile(os.path.join(directory, "__init__.py"))

    def _in_package(self, directory: str) -> bool:
        """A regular package, or a namespace portion below one (``pkg/sub/`` without ``__init__.py``: ``pkg.sub``)."""
        found = self._in_packages.get(directory)
        if found is None:
            parent = os.path.dirname(directory)
            found = self._is_package_dir(directory) or (
                parent != directory and os.path.basename(directory).isidentifier() and self._in_package(parent)
            )
            self._in_packages[directory] = found
        return found

    def locate_input(self, path: Path | str) -> Location:
        """``locate`` for a path the user named: links resolved, so one file reached twice is one module."""
        return self.locate(self.input_identity(path))

    def input_identity(self, path: Path | str) -> str:
        """``str(locate_input(path).path)`` without locating the file (no ``Location`` built).

        ``resolved_text`` is already absolute and normalised (a realpath, or a realpath joined with a bare name).
        """
        return resolved_text(path, self._real_directories)

    def locate(self, path: Path | str) -> Location:
        """Where a file sits in the import system (``path`` made absolute, links kept, as imports see it)."""
        name = path if isinstance(path, str) else str(path)
        found = self._by_name.get(name)
        if found is None:
            absolute = os.path.abspath(name)
            found = self._locations.get(absolute)
            if found is None:
                found = self._locations[absolute] = self._locate(absolute)
            self._by_name[name] = found
        return found

    def _locate(self, absolute: str) -> Location:
        directory, filename = os.path.split(absolute)
        is_package = filename == "__init__.py"
        dot = filename.rfind(".")
        stem = filename[:dot] if 0 < dot < len(filename) - 1 else filename  # as ``PurePath.stem``
        package_parts, top_dir, in_package, _, view_search = self._directory(directory)
        parts = [*package_parts] if is_package else [*package_parts, stem]
        path = Path(absolute)
        if in_package and parts:
            key = (directory, parts[0])
            shared = self._package_views.get(key)
            if shared is None:  # every file of one package directory searches and is homed alike
                home = Path(top_dir, parts[0])
                # A namespace portion may also be run as a script: its own directory comes last.
                own = () if self._is_package_dir(directory) else (Path(directory),)
                unique = tuple(dict.fromkeys((*view_search, *self.roots, *own)))
                shared = self._package_views[key] = (home, unique, self._views.setdefault((unique, home), len(self._views)))
            home, unique, view = shared
        else:
            searched = self._script_search.get(directory)
            if searched is None:
                search = view_search if in_package else (*view_search, Path(directory))
                searched = self._script_search[directory] = tuple(dict.fromkeys((*search, *self.roots)))
            unique, home = searched, path
            view = self._views.setdefault((unique, home), len(self._views))
        return Location(path, ".".join(parts), is_package, unique, home, view)

    def _directory(self, directory: str) -> tuple[tuple[str, ...], str, bool, Path | None, tuple[Path, ...]]:
        """Per directory: its package name parts, the directory above the top package, whether it is a package."""
        cached = self._directories.get(directory)
        if cached is not None:
            return cached
        parts: list[str] = []
        current = directory
        while self._in_package(current):
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
        result = (tuple(parts), top_dir, self._in_package(directory), naming_root, search)
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
        found = self._module_under(root, parts) if all(map(str.isidentifier, parts)) else None
        self._modules[key] = found
        return found

    def _module_under(self, root: Path, parts: list[str]) -> Path | None:
        """The module, package ``__init__`` or namespace directory ``parts`` names under ``root`` (None: not there)."""
        root_text = self._root_texts.get(root)
        if root_text is None:
            root_text = self._root_texts[root] = str(root)
        leaf = parts[-1]
        parent = os.path.join(root_text, *parts[:-1]) if len(parts) > 1 else root_text
        kinds = self._kinds(parent)
        # A listing proves absence (the common case, no stat at all); what may be there is asked of ``stat``.
        if not (kinds is None or kinds.get(leaf, 0) & _DIR or kinds.get(leaf + ".py", 0) & _FILE or kinds.get(leaf + ".pyi", 0) & _FILE):
            return None
        base = os.path.join(parent, leaf)
        for candidate in (os.path.join(base, "__init__.py"), *(base + suffix for suffix in _SOURCE_SUFFIXES)):
            if self._isfile(candidate):
                return Path(candidate)
        if self._isdir(base):
            return Path(base)  # a namespace package: a directory without __init__.py
        return None

    def _kinds(self, directory: str) -> dict[str, int] | None:
        """``list_kinds``, once per directory per run."""
        if directory in self._listings:
            return self._listings[directory]
        taken = take_stamp(directory) if self.listing_stamps is not None else None
        kinds, links = list_kinds_and_links(directory)
        self._listings[directory] = kinds
        self._links_met = self._links_met or links
        if taken is not None and self.listing_stamps is not None and kinds and not links:
            self.listing_stamps[directory] = taken
        return kinds

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


def list_kinds(directory: str) -> dict[str, int] | None:
    """Entry name -> _FILE/_DIR bits (links followed, as ``os.path.isfile`` does); ``{}``: not a directory.

    None when the directory cannot be listed: callers then ask ``stat`` per name.
    Only names an import can ask about are kept (``_importable``): the listing is
    also an observation of the kept cross-file answers, and a ``.ruff_cache`` or a
    ``README.md`` appearing in a project root must not drop them.
    """
    return list_kinds_and_links(directory)[0]


def list_kinds_and_links(directory: str) -> tuple[dict[str, int] | None, bool]:
    """``list_kinds``, and whether a kept entry is a symbolic link (its kind can change without the directory)."""
    listing: dict[str, int] = {}
    links = False
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    kind = (_FILE if entry.is_file() else 0) | (_DIR if entry.is_dir() else 0)
                except OSError:
                    kind = _FILE | _DIR  # unknown: let ``stat`` decide
                if _importable(entry.name):
                    links = links or entry.is_symlink()  # a dangling one too: its target may appear
                    if kind:
                        listing[entry.name] = kind
    except (FileNotFoundError, NotADirectoryError):
        return {}, False
    except OSError:
        return None, False
    return listing, links


def kind_listed(listing: dict[str, int], name: str) -> str | None:
    """What a ``list_kinds`` listing says the entry ``name`` is: "file", "dir" or "" (neither); None: it cannot say.

    A listing keeps every importable name whose entry is a file or a directory
    (links followed), so such a name's absence means neither; an entry whose
    kind could not be read holds both bits.
    """
    if not _importable(name):
        return None
    kind = listing.get(name, 0)
    return None if kind == _FILE | _DIR else "file" if kind == _FILE else "dir" if kind == _DIR else ""


def _importable(name: str) -> bool:
    """Whether ``_module_under`` can ask for this entry: a package or module name, or one with a source suffix."""
    for suffix in _SOURCE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)].isidentifier()
    return name.isidentifier()


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


class RawImport(NamedTuple):
    """One import statement as written, independent of where its file sits (the content cache stores these).

    ``module`` is None for ``import a.b as c`` (``names``: (dotted name, alias or ""));
    otherwise ``from <level dots><module> import <names>`` (``names``: (name, alias or "")).
    """

    level: int
    module: str | None
    names: tuple[tuple[str, str], ...]


def raw_imports(data: bytes) -> tuple[RawImport, ...]:
    """Every import statement ``data`` may hold, found with a regular expression, not a parse.

    A superset (imports in strings count too) that costs a scan, so deciding
    that a file cannot matter never needs its syntax tree.
    """
    if b"import" not in data:
        return ()
    out: list[RawImport] = []
    for match in _statements(data):
        if match.group(3) is not None:
            names = []
            for segment in _SEGMENT.finditer(match.group(3)):
                dotted = re.sub(rb"\s", b"", segment.group(1)).decode("ascii", "replace")
                alias = segment.group(2)
                names.append((dotted, alias.decode("ascii") if alias else ""))
            out.append(RawImport(0, None, tuple(names)))
            continue
        module = match.group(1).decode("ascii", "replace")
        level = len(module) - len(module.lstrip("."))
        pairs = tuple(
            (raw_name.decode("ascii", "replace"), raw_alias.decode("ascii") if raw_alias else "")
            for raw_name, raw_alias in _SEGMENT.findall(match.group(2))
        )
        out.append(RawImport(level, module[level:], pairs))
    return tuple(out)


def import_bindings(data: bytes, location: Location) -> list[ImportBinding]:
    """Every binding an import statement in ``data`` may make, with absolute module names (see ``bindings_of``)."""
    return bindings_of(raw_imports(data), location)


def bindings_of(statements: Iterable[RawImport], location: Location) -> list[ImportBinding]:
    """The bindings ``statements`` make in the file at ``location``: relative imports made absolute.

    ``from pkg import name`` gives two readings, ``name`` as an attribute of
    ``pkg`` and as the module ``pkg.name``.
    """
    package = package_of(location)
    out: list[ImportBinding] = []
    for statement in statements:
        base = relative_base(statement, package)
        if base is not None:
            out.extend(statement_bindings(statement, base))
    return list(dict.fromkeys(out))


def package_of(location: Location) -> tuple[str, ...]:
    """The package a file's relative imports start from."""
    package = tuple(location.module.split(".")) if location.module else ()
    return package if location.is_package else package[:-1]


def relative_base(statement: RawImport, package: tuple[str, ...]) -> tuple[str, ...] | None:
    """The package a relative import names (``()`` for an absolute one); None when it reaches above the top."""
    level = statement.level
    if not level or statement.module is None:
        return ()
    if level - 1 > len(package):
        return None
    return package[: len(package) - (level - 1)]


def statement_bindings(statement: RawImport, base: tuple[str, ...]) -> list[ImportBinding]:
    """The bindings of one statement whose relative package is ``base`` (``relative_base``)."""
    if statement.module is None:
        return _import_bindings(statement)
    module = statement.module
    if statement.level:
        module = ".".join([*base, *([module] if module else [])])
    return _from_import_bindings(statement, module)


def _import_bindings(statement: RawImport) -> list[ImportBinding]:
    """``import a.b as c`` binds ``c`` to ``a.b``; ``import a.b`` binds ``a`` (and makes ``a.b`` reachable)."""
    out: list[ImportBinding] = []
    for dotted, alias in statement.names:
        bound = alias or dotted.partition(".")[0]
        out.append(ImportBinding(bound, dotted, "*"))
        if not alias and "." in dotted:
            out.append(ImportBinding(bound, dotted.partition(".")[0], "*"))
    return out


def _from_import_bindings(statement: RawImport, module: str) -> list[ImportBinding]:
    """``from module import name as alias``: the name of the module, or its submodule of that name."""
    out: list[ImportBinding] = []
    prefix = f"{module}." if module else ""
    for name, alias in statement.names:
        if name == "*":
            out.append(ImportBinding("*", module, "*"))
            continue
        if name in ("import", "as"):
            continue
        bound = alias or name
        if module:
            out.append(ImportBinding(bound, module, name))
        out.append(ImportBinding(bound, prefix + name, "*"))
    return out


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
