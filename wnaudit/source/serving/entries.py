"""Declared serving entry points (``[tool.wnaudit] serving``): found in the project's code, never imported.

``serving = ["pkg.serve:load_vocoder", "app:Server.load"]`` names the code that
builds or loads a model for inference.  WN110 checks each (every model it
returns must be folded on the way out) and puts its fold there.  The lint reads
the entry as source: a module or function that the project does not define is
a config error (one line, exit 2), found here, without running anything.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path
from typing import Callable

from ..project import Project
from ..reading import SourceError, decode

logger = logging.getLogger(__name__)


def split(entry: str) -> tuple[str, str]:
    """``pkg.serve:Server.load`` -> (``pkg.serve``, ``Server.load``)."""
    module, _, qualname = entry.partition(":")
    return module, qualname


def module_of(project: Project, root: Path, module: str) -> Path | None:
    """The file ``import module`` finds from the project root (a package's ``__init__.py``)."""
    found = project.module_file(module, project.locate(root / "__wnaudit_serving_entry__.py"))
    if found is not None and project.is_dir(found):  # asked of the project: observations of kept answers
        found = found / "__init__.py" if project.is_file(found / "__init__.py") else None
    return found


def defines(tree: ast.Module, qualname: str) -> bool:
    """The module defines ``qualname``: a top-level function, or a method of a top-level class."""
    body: list[ast.stmt] = tree.body
    parts = qualname.split(".")
    for position, part in enumerate(parts):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
        if node is None:
            return False
        if position == len(parts) - 1:
            return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        body = node.body
    return False


def entry_errors(
    entries: tuple[str, ...], project: Project, root: Path, read: Callable[[Path], "bytes | None"],
) -> list[str]:
    """One message per declared entry the project's code does not define (a config error each)."""
    errors: list[str] = []
    for entry in entries:
        module, qualname = split(entry)
        file = module_of(project, root, module)
        data = read(file) if file is not None else None
        if file is None or data is None:
            errors.append(f"serving: {entry!r}: no module {module!r} in the project")
            continue
        try:
            tree = ast.parse(decode(data).text, str(file))
        except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError) as error:
            logger.debug("%s: not read for a serving entry: %s", file, error)
            errors.append(f"serving: {entry!r}: {file} cannot be read as Python")
            continue
        if not defines(tree, qualname):
            errors.append(f"serving: {entry!r}: {module} defines no function {qualname!r}")
    return errors
