"""Import and call a project's own ``package.module:callable`` (or ``path/to/file.py:callable``).

Only the commands that exist to run project code use this (``wnaudit bench``
and ``wnaudit probe``), and only when the user runs them: the lint, the hooks
and the checkpoint audit never import a project.  The current directory is
importable, as ``python -m`` makes it, because the console script's own
directory is what Python puts first on ``sys.path``.  Whatever the project's
code raises (``SystemExit`` included) becomes one :class:`EntryPointError` line.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence


class EntryPointError(RuntimeError):
    """The entry point cannot be imported or called; the message is one line naming it."""


#: What user code may raise that must not end the tool (an ``exit()`` in a loader, a ``sys.exit`` at import).
_USER_ERRORS = (Exception, SystemExit)


def first_line(error: BaseException) -> str:
    """``Type: first line of the message`` (``SystemExit: 3`` for an exit)."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


@dataclass(frozen=True)
class EntryPoint:
    """A resolved entry point: the callable, and where its code lives (for a fix to edit)."""

    spec: str
    module_name: str
    attribute: str
    target: Callable[[], Any]
    #: Directories importable besides the current one (``[tool.wnaudit] src``), while importing and calling.
    search: tuple[str, ...] = ()

    @property
    def source_file(self) -> Path | None:
        """The file that defines the callable (None: built in, or defined out of a file)."""
        try:
            found = inspect.getsourcefile(inspect.unwrap(self.target))
        except TypeError:
            return None
        return Path(found) if found else None

    def call(self) -> Any:
        """Call it with no arguments; anything it raises becomes an :class:`EntryPointError`."""
        try:
            with _importable(self.search):  # a loader may import project modules when called
                return self.target()
        except _USER_ERRORS as error:
            raise EntryPointError(f"{self.spec}: {self.attribute}() raised {first_line(error)}") from error


def resolve_entry_point(spec: str, search: Sequence[str | os.PathLike[str]] = ()) -> EntryPoint:
    """Import the module of ``spec`` and find its callable; :class:`EntryPointError` on any problem.

    ``search``: directories importable besides the current one (a ``src/`` layout's ``src``).
    """
    roots = tuple(os.fspath(path) for path in search)
    module_part, _, attribute = spec.rpartition(":")
    if not module_part or not attribute:
        raise EntryPointError(f"{spec}: expected 'package.module:callable' or 'path/to/file.py:callable'")
    try:
        with _importable(roots):
            if module_part.endswith(".py"):
                namespace = _import_file(Path(module_part))
            else:
                namespace = importlib.import_module(module_part)
    except EntryPointError:
        raise
    except _USER_ERRORS as error:  # importing user code can raise anything
        raise EntryPointError(f"{spec}: cannot import {module_part}: {first_line(error)}") from error
    target: Any = namespace
    for name in attribute.split("."):
        target = getattr(target, name, None)
        if target is None:
            raise EntryPointError(f"{spec}: {module_part} has no attribute {attribute!r}")
    if not callable(target):
        raise EntryPointError(f"{spec}: {attribute} is not callable")
    return EntryPoint(spec, getattr(namespace, "__name__", module_part), attribute, target, roots)


def forget_project_modules(entry: EntryPoint) -> None:
    """Drop the packages of the entry point and of the code defining its callable from ``sys.modules``.

    The next resolve then imports them afresh, as a new process would (after a fix edited the loader's file).
    A ``file.py`` entry point is executed anew by every resolve anyway.
    """
    module_part = entry.spec.rpartition(":")[0]
    defining = getattr(inspect.unwrap(entry.target), "__module__", None) or ""
    tops = {name.partition(".")[0] for name in (module_part, defining) if name and not name.endswith(".py")}
    tops -= {"", "wnaudit", "torch", "builtins", "__main__"}
    for name in [n for n in sys.modules if n.partition(".")[0] in tops]:
        del sys.modules[name]
    importlib.invalidate_caches()


class _importable:
    """Put the current directory (as ``python -m`` does) and ``roots`` first on ``sys.path``, then take them off."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        here = [] if "" in sys.path else [os.getcwd()]
        self.wanted = [os.path.abspath(path) for path in (*here, *roots)]

    def __enter__(self) -> None:
        self.added = [path for path in self.wanted if path not in sys.path]
        sys.path[:0] = self.added

    def __exit__(self, *exc: object) -> None:
        for path in self.added:
            if path in sys.path:
                sys.path.remove(path)


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise EntryPointError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"_wnaudit_entry_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise EntryPointError(f"{path}: cannot import this file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
