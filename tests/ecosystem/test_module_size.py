"""The house's limits: no class above 30 methods, no module with a maintainability index below 10.

A class that grows past about 30 methods holds more than one job (the serving index once had 112, the workspace
43), and a module radon grades below 10 cannot be read as a whole (the analysis, the serving facts and the index
each scored 0).  These limits are measured here so a change that crosses them fails in CI, not in review.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from radon.metrics import mi_visit

PACKAGE = Path(__file__).resolve().parents[2] / "wnaudit"
MOST_METHODS = 30
LEAST_MAINTAINABILITY = 10.0
MODULES = sorted(PACKAGE.rglob("*.py"))


def _methods(cls: ast.ClassDef) -> int:
    return sum(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in cls.body)


def test_the_modules_are_found() -> None:
    assert len(MODULES) > 100


@pytest.mark.parametrize("module", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_class_above_thirty_methods(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    large = {node.name: _methods(node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and _methods(node) > MOST_METHODS}
    assert not large, f"{module.name}: classes above {MOST_METHODS} methods: {large}"


@pytest.mark.parametrize("module", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_every_module_reads_as_a_whole(module: Path) -> None:
    index = mi_visit(module.read_text(encoding="utf-8"), multi=True)
    assert index >= LEAST_MAINTAINABILITY, f"{module.name}: radon maintainability index {index:.1f} < {LEAST_MAINTAINABILITY}"
