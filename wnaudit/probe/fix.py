"""``probe --fix``: put the fold into the loader's own source, where it returns the model.

The edit is the source entrance's (``source/rewrite/at_return.py``: WN110's
fold statement and inserter); this module decides whether a loader may be
edited (a function of the project, in a file under the project's root, not an
installed package) and writes the file atomically.  Which fold it writes
follows ``[tool.wnaudit] fix-fold``: with "auto", ``wnaudit.fold_weight_norm``
only where the project already imports wnaudit, else the torch-only local fold.
"""

from __future__ import annotations

import ast
import inspect
import os
from pathlib import Path

from ..common.atomic import atomic_writer
from ..common.config import Config
from ..common.entry_points import EntryPoint

#: Directories a project walk never enters when it looks for ``import wnaudit``.
_SKIPPED_DIRECTORIES = frozenset({"tests", "test", "venv", ".venv", "site-packages", "node_modules", "build", "dist"})


class LoaderFixError(RuntimeError):
    """The loader cannot be edited; the message says why, in one line."""


def fix_loader(entry: EntryPoint, config: Config) -> Path:
    """Edit the loader's file so that it folds the model it returns; the path edited."""
    from ..source.rewrite.at_return import fold_before_returns
    from ..source.rewrite.errors import FixError

    path, function = _loader_location(entry, Path(config.root))
    data = path.read_bytes()
    imported = config.fix_fold == "auto" and _project_imports_wnaudit(Path(config.root))
    try:
        fixed = fold_before_returns(data, str(path), function, fix_fold=config.fix_fold, wnaudit_imported=imported)
    except FixError as error:
        raise LoaderFixError(f"{path}: {error}") from error
    if fixed == data:
        raise LoaderFixError(f"{path}: the fold is already there, yet the model still computes live weight norms")
    with atomic_writer(path) as handle:
        handle.write(fixed)
    return path


def _loader_location(entry: EntryPoint, root: Path) -> tuple[Path, str]:
    """The project file defining the loader, and the loader's name there (``load`` or ``Loader.load``)."""
    target = inspect.unwrap(entry.target)
    source = entry.source_file
    qualname = getattr(target, "__qualname__", "")
    if source is None or not inspect.isfunction(getattr(target, "__func__", target)) or "<locals>" in qualname:
        raise LoaderFixError(f"{entry.spec}: --fix edits a loader function defined at the top of a file (or in a class)")
    path = source.resolve()
    if not _inside(path, root.resolve()) or "site-packages" in path.parts:
        raise LoaderFixError(f"{entry.spec}: {path} is not a file of this project ({root}); not edited")
    return path, qualname


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _project_imports_wnaudit(root: Path) -> bool:
    """Does a Python file of the project (tests and environments left out) import wnaudit? Then the fix may call it."""
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if not d.startswith(".") and d not in _SKIPPED_DIRECTORIES]
        for name in files:
            if name.endswith(".py") and _imports_wnaudit(Path(directory) / name):
                return True
    return False


def _imports_wnaudit(path: Path) -> bool:
    try:
        data = path.read_bytes()
        if b"wnaudit" not in data:
            return False
        tree = ast.parse(data)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.partition(".")[0] == "wnaudit" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").partition(".")[0] == "wnaudit":
            return True
    return False
