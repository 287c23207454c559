"""``[tool.wnaudit]`` in pyproject.toml, and which codes apply to which file."""

from __future__ import annotations

import fnmatch
import functools
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

logger = logging.getLogger(__name__)

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
    "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
)


class ConfigError(ValueError):
    """The configuration is unreadable or wrong: a usage error (exit 2)."""


def _codes(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part for part in value.replace(",", " ").split() if part]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of rule codes or prefixes")
    return tuple(v.strip().upper() for v in value)


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


@dataclass(frozen=True)
class Config:
    """The resolved settings: file values, overridden by command-line values."""

    select: tuple[str, ...] = ("WN",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None
    #: ``src``: directories imports resolve from (relative to the root); empty: the root itself.
    src: tuple[str, ...] = ()

    @property
    def source_roots(self) -> tuple[Path, ...]:
        """Where absolute imports resolve (besides each file's own package root), as ruff's ``src``."""
        return tuple(Path(self.root) / entry for entry in self.src) if self.src else (Path(self.root),)

    def enabled(self, code: str, path: str | Path | None = None) -> bool:
        """Is ``code`` reported for ``path``? The longest matching prefix wins, as in ruff."""
        selected = max((len(p) for p in self.select if p == "ALL" or code.startswith(p)), default=-1)
        ignored = max((len(p) for p in self.ignore if p == "ALL" or code.startswith(p)), default=-1)
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
    def _exclude_regex(self) -> "re.Pattern[str]":
        """All exclude patterns as one regex over a component or the relative path.

        Compiled once: discovery asks about every file of a tree, and matching
        fifteen globs one by one per file cost seconds on a 3,000-file tree.
        """
        alternatives = []
        for pattern in (*DEFAULT_EXCLUDES, *self.exclude):
            pattern = pattern.rstrip("/")
            body = _glob_body(pattern)
            alternatives.append(f"(?:^|/){body}(?:/|$)" if "/" not in pattern else f"^{body}(?:/|$)")
        return re.compile("|".join(alternatives), re.S)

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
        """Exclude patterns match a path component or the path relative to the config root.

        Only the part below the config root (or below ``base``, the directory
        being walked) counts: linting ``/home/me/build/src`` must not exclude
        everything because of the ``build`` above it.
        """
        return self._exclude_regex.search(self.relative(path, base)) is not None

    def with_overrides(self, *, select: Sequence[str] | None, ignore: Sequence[str] | None, exclude: Sequence[str]) -> "Config":
        return Config(
            select=_codes(list(select), "--select") if select else self.select,
            ignore=self.ignore + (_codes(list(ignore), "--ignore") if ignore else ()),
            exclude=self.exclude + tuple(exclude),
            per_file_ignores=self.per_file_ignores,
            root=self.root,
            source=self.source,
            src=self.src,
        )


def _posix(path: str) -> str:
    return path if os.sep == "/" else PurePosixPath(*Path(path).parts).as_posix()


def _glob_body(pattern: str) -> str:
    """The regex body of a glob: fnmatch's translation without its anchoring wrapper."""
    translated = fnmatch.translate(pattern)
    wrapped = re.fullmatch(r"\(\?s:(.*)\)\\[Zz]", translated, re.S)
    return f"(?s:{wrapped.group(1) if wrapped else translated})"


def _glob_match(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*") or (
        "/" not in pattern and fnmatch.fnmatch(relative.rsplit("/", 1)[-1], pattern)
    )


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a ``[tool.wnaudit]`` table, walking up from ``start``."""
    start = start.resolve()
    for directory in (start, *start.parents) if start.is_dir() else (start.parent, *start.parent.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
                raise ConfigError(f"{candidate}: cannot read configuration: {error}") from error
            if "wnaudit" in data.get("tool", {}):
                return candidate
    return None


def load_config(inputs: Sequence[Path], explicit: Path | None = None) -> Config:
    """Load ``[tool.wnaudit]`` from ``explicit`` or the nearest pyproject.toml above the inputs."""
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
    try:
        data = tomllib.loads(Path(pyproject).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read configuration: {error}") from error
    table = data.get("tool", {}).get("wnaudit", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.wnaudit] must be a table")
    known = {"select", "ignore", "exclude", "per-file-ignores", "extend-exclude", "src"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{pyproject}: unknown [tool.wnaudit] key(s): {', '.join(unknown)}")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{pyproject}: per-file-ignores must be a table of glob = [codes]")
    exclude = table.get("exclude", []) + table.get("extend-exclude", [])
    if not all(isinstance(e, str) for e in exclude):
        raise ConfigError(f"{pyproject}: exclude must be a list of glob patterns")
    src = table.get("src", [])
    if not isinstance(src, list) or not all(isinstance(entry, str) for entry in src):
        raise ConfigError(f"{pyproject}: src must be a list of directories (relative to the pyproject.toml)")
    logger.debug("configuration from %s", pyproject)
    return Config(
        select=_codes(table["select"], f"{pyproject}: select") if "select" in table else ("WN",),
        ignore=_codes(table.get("ignore", []), f"{pyproject}: ignore"),
        exclude=tuple(exclude),
        per_file_ignores=tuple((glob, _codes(codes, f"{pyproject}: per-file-ignores")) for glob, codes in per_file.items()),
        root=Path(pyproject).resolve().parent,
        source=Path(pyproject),
        src=tuple(src),
    )
