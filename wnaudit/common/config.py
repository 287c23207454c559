"""``[tool.wnaudit]`` in pyproject.toml, and which codes apply to which file.

The settings and their meaning follow ruff: ``select`` replaces the default
selection and ``extend-select`` adds to it; ``exclude`` replaces the default
excludes (:data:`DEFAULT_EXCLUDES`) and ``extend-exclude`` adds to them;
``per-file-ignores`` maps globs to codes.  Every value is checked when the
file is read: any mistake is one :class:`ConfigError` line naming the file,
the key and what was expected, never a traceback.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import logging
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Collection, Mapping, Sequence

from .files import FileRefused, read_regular_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

logger = logging.getLogger(__name__)

#: Directory and file names skipped in directory walks unless ``exclude`` replaces them
#: (listed in docs/getting-started.md; a test checks the list there).
DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
    "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".ipynb_checkpoints", "site-packages",
)
#: Source files larger than this are refused (``max-source-bytes``): a file of
#: generated code that size is not reviewed by hand, and reading ``/dev/zero``
#: through a symlink must end.
DEFAULT_MAX_SOURCE_BYTES = 32 << 20
#: pyproject.toml files are read with this cap (a real one is a few KiB).
_MAX_PYPROJECT_BYTES = 4 << 20
#: Selectors are codes or prefixes of codes; ``ALL`` selects every code.
ALL = "ALL"
_CODE_PREFIX = "WN"


class ConfigError(ValueError):
    """The configuration (or a selector on the command line) is wrong: a usage error (exit 2)."""


# --- selectors ---------------------------------------------------------------------------


def known_prefixes(known_codes: Collection[str]) -> list[str]:
    """``ALL``, ``WN`` and one prefix per code family (``WN1``...), for messages."""
    families = sorted({code[: len(_CODE_PREFIX) + 1] for code in known_codes if code.startswith(_CODE_PREFIX)})
    return [ALL, _CODE_PREFIX, *families]


def check_selector(selector: str, known_codes: Collection[str], where: str) -> str:
    """``selector`` upper-cased; :class:`ConfigError` when it selects no known code (a typo must not disable the lint)."""
    normalised = selector.strip().upper()
    if normalised == ALL or (
        normalised.startswith(_CODE_PREFIX) and any(code.startswith(normalised) for code in known_codes)
    ):
        return normalised
    codes = sorted(known_codes)
    span = f"; codes {codes[0]}..{codes[-1]}" if codes else ""
    raise ConfigError(
        f"{where}: unknown rule selector {selector!r} (known prefixes: {', '.join(known_prefixes(known_codes))}{span};"
        " wnaudit --explain CODE describes one)"
    )


def _check_selectors(values: Sequence[str], known_codes: Collection[str] | None, where: str) -> tuple[str, ...]:
    if known_codes is None:
        return tuple(v.strip().upper() for v in values)
    return tuple(check_selector(v, known_codes, where) for v in values)


def _matches(code: str, patterns: Collection[str]) -> bool:
    return any(p == ALL or code.startswith(p) for p in patterns)


# --- the resolved configuration ----------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """The resolved settings: file values, overridden by command-line values.

    ``exclude`` replaces :data:`DEFAULT_EXCLUDES`; ``extend_exclude`` adds to
    whatever ``exclude`` is.  ``select`` and ``extend_select`` likewise.
    """

    select: tuple[str, ...] = (_CODE_PREFIX,)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    force_exclude: bool = False
    max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES
    #: ``max-fix-bytes``: the most a checkpoint or exported-program fix writes (None: ``common/write_bound.py``'s default).
    max_fix_bytes: int | None = None
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None
    #: ``src``: directories imports resolve from (relative to the root); empty: the root itself.
    src: tuple[str, ...] = ()
    #: ``fix-fold``: what WN110's fix calls when the model has no removal method that folds it all:
    #: "wnaudit" (``wnaudit.fold_weight_norm``), "local" (a torch-only fold added to the file), or
    #: "auto" (wnaudit where the project already imports it, else local: a fix adds no dependency).
    fix_fold: str = "auto"
    #: ``serving``: declared serving entry points (``"pkg.module:callable"``), each the code that
    #: builds or loads a model for inference. WN110 checks each and puts its fold there; ``wnaudit
    #: probe`` with no target calls them. Never imported by the lint: only ``probe`` runs them.
    serving: tuple[str, ...] = ()

    @property
    def source_roots(self) -> tuple[Path, ...]:
        """Where absolute imports resolve (besides each file's own package root), as ruff's ``src``."""
        return tuple(Path(self.root) / entry for entry in self.src) if self.src else (Path(self.root),)

    @property
    def exclusions(self) -> tuple[str, ...]:
        """Every exclude pattern in force."""
        return (*self.exclude, *self.extend_exclude)

    def enabled(self, code: str, path: str | Path | None = None) -> bool:
        """Is ``code`` reported for ``path``? The longest matching prefix wins, as in ruff."""
        selected = max(
            (len(p) for p in (*self.select, *self.extend_select) if p == ALL or code.startswith(p)), default=-1
        )
        ignored = max((len(p) for p in self.ignore if p == ALL or code.startswith(p)), default=-1)
        if selected < 0 or ignored >= selected:
            return False
        if path is not None and self.per_file_ignores:
            relative = self.relative(path)
            for pattern, codes in self.per_file_ignores:
                if _glob_match(relative, pattern) and _matches(code, codes):
                    return False
        return True

    @functools.cached_property
    def _root(self) -> str:
        return os.path.abspath(self.root)

    @functools.cached_property
    def _exclude_regexes(self) -> tuple["re.Pattern[str] | None", "re.Pattern[str] | None"]:
        """(patterns on a name, patterns on a path), each compiled once into one regex.

        Discovery asks about every entry of a tree: matching the globs one by
        one per entry cost seconds on a 3,000-file tree.
        """
        names: list[str] = []
        paths: list[str] = []
        for pattern in self.exclusions:
            pattern = _normalise_glob(pattern)
            (paths if "/" in pattern else names).append(_glob_body(pattern))
        compiled = tuple(re.compile("|".join(group), re.S) if group else None for group in (names, paths))
        return compiled[0], compiled[1]

    def relative(self, path: str | Path, base: str | Path | None = None) -> str:
        """``path`` relative to the config root, POSIX style.

        Outside the root it is taken relative to ``base`` (the directory the
        user named) if given, else left absolute.  Uses ``abspath`` (no
        file-system calls), so a symlinked directory is matched by the name it
        is reached under, as in ruff.
        """
        absolute = os.path.abspath(path)
        for anchor in (self._root, os.path.abspath(base) if base is not None else None):
            if anchor is None:
                continue
            if absolute == anchor:
                return "."
            prefix = anchor.rstrip(os.sep) + os.sep
            if absolute.startswith(prefix):
                return _posix(absolute[len(prefix) :])
        return _posix(absolute)

    def is_excluded(self, path: Path, base: Path | None = None) -> bool:
        """Does one entry met in a walk match an exclude pattern?

        As in ruff, a pattern without a slash matches the entry's name, one
        with a slash the entry's path relative to the config root (or to
        ``base``, the directory being walked, when that is outside the root).
        Only the entry itself is tested: the walk never enters an excluded
        directory, and the directories above the one the user named do not
        count (``wnaudit build/myproj`` lints it; so does ``/home/me/build/src``).
        """
        return self.is_excluded_entry(Path(path).name, path, base)

    def is_excluded_entry(self, name: str, path: str | Path, base: Path | None = None) -> bool:
        """``is_excluded`` for a walk that has the entry's name at hand (no ``Path`` built per entry)."""
        by_name, by_path = self._exclude_regexes
        if by_name is not None and by_name.fullmatch(name):
            return True
        return by_path is not None and by_path.fullmatch(self.relative(path, base)) is not None

    def is_path_excluded(self, path: Path) -> bool:
        """``--force-exclude``: does ``path`` or a directory above it (below the root) match?

        Used for paths named on the command line, as pre-commit names every
        file: configured excludes then hold for them too.
        """
        absolute = Path(os.path.abspath(path))
        for anchor in (Path(self._root), Path(os.getcwd())):
            try:
                parts = absolute.relative_to(anchor).parts
                break
            except ValueError:
                continue
        else:
            anchor, parts = absolute.parent, (absolute.name,)
        return any(self.is_excluded(anchor.joinpath(*parts[:depth])) for depth in range(1, len(parts) + 1))

    def with_overrides(
        self,
        *,
        select: Sequence[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        extend_exclude: Sequence[str] = (),
        force_exclude: bool | None = None,
        known_codes: Collection[str] | None = None,
    ) -> "Config":
        """The command line over the file: ``--select`` and ``--exclude`` replace, the rest adds.

        Empty sequences mean "not given" (click's default for repeatable
        options).  Selectors are checked against ``known_codes`` when given.
        """
        for pattern in (*(exclude or ()), *extend_exclude):
            problem = glob_problem(pattern)
            if problem is not None:
                raise ConfigError(f"--exclude {pattern!r}: {problem}")
        return replace(
            self,
            select=_check_selectors(select, known_codes, "--select") if select else self.select,
            extend_select=(() if select else self.extend_select)
            + _check_selectors(extend_select, known_codes, "--extend-select"),
            ignore=self.ignore + _check_selectors(ignore or (), known_codes, "--ignore"),
            exclude=tuple(exclude) if exclude else self.exclude,
            extend_exclude=self.extend_exclude + tuple(extend_exclude),
            force_exclude=self.force_exclude if force_exclude is None else force_exclude,
        )


# --- globs -------------------------------------------------------------------------------


def _posix(path: str) -> str:
    return path if os.sep == "/" else PurePosixPath(*Path(path).parts).as_posix()


def _normalise_glob(pattern: str) -> str:
    pattern = pattern.rstrip("/") or pattern
    return pattern[2:] if pattern.startswith("./") else pattern


def _glob_body(pattern: str) -> str:
    """The regex body of a glob: fnmatch's translation without its anchoring wrapper."""
    translated = fnmatch.translate(pattern)
    wrapped = re.fullmatch(r"\(\?s:(.*)\)\\[Zz]", translated, re.S)
    return f"(?s:{wrapped.group(1) if wrapped else translated})"


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable glob, or ``None``.

    fnmatch takes an unclosed ``[`` literally; that is almost always a typo,
    and ruff rejects it too.
    """
    if not pattern.strip():
        return "empty glob pattern"
    if "\x00" in pattern:
        return "glob pattern contains a NUL character"
    index = 0
    while index < len(pattern):
        if pattern[index] == "[":
            end = index + 1
            if end < len(pattern) and pattern[end] == "!":
                end += 1
            if end < len(pattern) and pattern[end] == "]":
                end += 1
            end = pattern.find("]", end)
            if end < 0:
                return f"unclosed character class '[' at position {index + 1}"
            index = end
        index += 1
    try:
        re.compile(_glob_body(_normalise_glob(pattern)))
    except re.error as error:  # pragma: no cover - fnmatch output is a valid regex
        return f"bad glob pattern: {error}"
    return None


def _glob_match(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*") or (
        "/" not in pattern and fnmatch.fnmatch(relative.rsplit("/", 1)[-1], pattern)
    )


# --- reading pyproject.toml ---------------------------------------------------------------


def display_path(path: Path) -> str:
    """``path`` as the user would type it: relative to the working directory when below it."""
    try:
        return str(Path(os.path.abspath(path)).relative_to(os.getcwd()))
    except ValueError:
        return str(path)


def _toml_type(value: Any) -> str:
    """The TOML name of a parsed value's type, with an article, for messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return "a date-time"  # tomllib's only other types: datetime, date, time


def read_pyproject(path: Path) -> dict[str, Any]:
    """Parse one pyproject.toml; :class:`ConfigError` (one line) for anything unreadable."""
    shown = display_path(path)
    try:
        data = read_regular_file(path, _MAX_PYPROJECT_BYTES)
        return tomllib.loads(data.decode("utf-8"))
    except FileRefused as error:
        raise ConfigError(f"{shown}: cannot read configuration: {error}") from error
    except OSError as error:
        raise ConfigError(f"{shown}: cannot read configuration: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise ConfigError(f"{shown}: not UTF-8 (TOML files must be): byte {error.start}: {error.reason}") from error
    except tomllib.TOMLDecodeError as error:
        message = str(error).splitlines()[0] if str(error) else "invalid TOML"
        raise ConfigError(f"{shown}: invalid TOML: {message}") from error
    except RecursionError as error:
        raise ConfigError(f"{shown}: invalid TOML: values nested too deeply to read") from error


def _wnaudit_table(data: Mapping[str, Any], shown: str) -> dict[str, Any] | None:
    """``[tool.wnaudit]`` of parsed pyproject data, ``None`` when absent; ConfigError when misshapen."""
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{shown}: [tool]: expected a table, got {_toml_type(tool)}")
    table = tool.get("wnaudit")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: [tool.wnaudit]: expected a table, got {_toml_type(table)}")
    return table


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a ``[tool.wnaudit]`` table, walking up from ``start``.

    Every pyproject.toml met on the way is read: a broken one is an error
    (ruff does the same), not a reason to look further up.
    """
    start = Path(os.path.abspath(start))
    first = start if start.is_dir() else start.parent
    for directory in (first, *first.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            if _wnaudit_table(read_pyproject(candidate), display_path(candidate)) is not None:
                return candidate
    return None


def _expect_strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of strings, got {_toml_type(value)}")
    for item in value:
        if not isinstance(item, str):
            raise ConfigError(f"{where}: expected a list of strings, got a list holding {_toml_type(item)}")
    return value


def _selectors(known: Collection[str] | None) -> Callable[[Any, str], tuple[str, ...]]:
    def parse(value: Any, where: str) -> tuple[str, ...]:
        return _check_selectors(_expect_strings(value, where), known, where)

    return parse


def _globs(value: Any, where: str) -> tuple[str, ...]:
    patterns = _expect_strings(value, where)
    for pattern in patterns:
        problem = glob_problem(pattern)
        if problem is not None:
            raise ConfigError(f"{where}: {pattern!r}: {problem}")
    return tuple(patterns)


def _per_file(known: Collection[str] | None) -> Callable[[Any, str], tuple[tuple[str, tuple[str, ...]], ...]]:
    def parse(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table of \"glob\" = [codes], got {_toml_type(value)}")
        entries = []
        for pattern, codes in value.items():
            problem = glob_problem(pattern)
            if problem is not None:
                raise ConfigError(f"{where}: {pattern!r}: {problem}")
            entries.append((pattern, _selectors(known)(codes, f"{where}: {pattern!r}")))
        return tuple(entries)

    return parse


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {_toml_type(value)}")
    return value


def _byte_count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        got = f"{value}" if isinstance(value, int) and not isinstance(value, bool) else _toml_type(value)
        raise ConfigError(f"{where}: expected a positive integer (bytes), got {got}")
    return value


FIX_FOLDS = ("auto", "wnaudit", "local")


def _fix_fold(value: Any, where: str) -> str:
    if value not in FIX_FOLDS:
        got = repr(value) if isinstance(value, str) else _toml_type(value)
        raise ConfigError(f"{where}: expected one of {', '.join(map(repr, FIX_FOLDS))}, got {got}")
    return str(value)


def _directories(value: Any, where: str) -> tuple[str, ...]:
    return tuple(_expect_strings(value, where))


#: ``pkg.module:callable`` (dotted module, then a dotted attribute path): a serving entry point.
_ENTRY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _entries(value: Any, where: str) -> tuple[str, ...]:
    entries = _expect_strings(value, where)
    for entry in entries:
        if not _ENTRY.fullmatch(entry):
            raise ConfigError(f"{where}: {entry!r} is not an entry point; expected 'package.module:function'")
    return tuple(entries)


def _schema(known: Collection[str] | None) -> dict[str, tuple[str, Callable[[Any, str], Any]]]:
    """TOML key -> (Config field, parser).  A new setting is one line here and one field above."""
    return {
        "select": ("select", _selectors(known)),
        "extend-select": ("extend_select", _selectors(known)),
        "ignore": ("ignore", _selectors(known)),
        "exclude": ("exclude", _globs),
        "extend-exclude": ("extend_exclude", _globs),
        "per-file-ignores": ("per_file_ignores", _per_file(known)),
        "extend-per-file-ignores": ("extend_per_file_ignores", _per_file(known)),
        "force-exclude": ("force_exclude", _boolean),
        "max-source-bytes": ("max_source_bytes", _byte_count),
        "max-fix-bytes": ("max_fix_bytes", _byte_count),
        "src": ("src", _directories),
        "fix-fold": ("fix_fold", _fix_fold),
        "serving": ("serving", _entries),
    }


def config_from_table(
    table: Mapping[str, Any], pyproject: Path, known_codes: Collection[str] | None = None
) -> Config:
    """Check and resolve a ``[tool.wnaudit]`` table; :class:`ConfigError` names the first wrong key."""
    shown = display_path(pyproject)
    schema = _schema(known_codes)
    values: dict[str, Any] = {}
    for key, value in table.items():
        where = f"{shown}: [tool.wnaudit] {key}"
        if key not in schema:
            close = difflib.get_close_matches(str(key), list(schema), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(sorted(schema))})"
            raise ConfigError(f"{shown}: [tool.wnaudit]: unknown key {str(key)!r}{hint}")
        name, parse = schema[key]
        values[name] = parse(value, where)
    values["per_file_ignores"] = values.get("per_file_ignores", ()) + values.pop("extend_per_file_ignores", ())
    logger.debug("configuration from %s", pyproject)
    return Config(**values, root=Path(os.path.abspath(pyproject)).parent, source=Path(pyproject))


def load_config(
    inputs: Sequence[Path], explicit: Path | None = None, *, known_codes: Collection[str] | None = None
) -> Config:
    """Load ``[tool.wnaudit]`` from ``explicit`` or the nearest pyproject.toml above the inputs.

    ``known_codes`` (the code registry) makes unknown selectors errors; the
    command line always passes it.
    """
    if explicit is not None:
        pyproject: Path | None = explicit
    else:
        starts = [Path(p) for p in inputs] or [Path.cwd()]
        pyproject = None
        for start in starts:
            pyproject = find_pyproject(start if start.exists() else Path.cwd())
            if pyproject is not None:
                break
    if pyproject is None:
        return Config()
    table = _wnaudit_table(read_pyproject(Path(pyproject)), display_path(Path(pyproject)))
    return config_from_table(table or {}, Path(pyproject), known_codes)
