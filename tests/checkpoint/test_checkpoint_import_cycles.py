"""The checkpoint package has no import cycle (issue 23: __init__ -> audit -> formats -> package).

Read two ways, since tools differ: ``from . import x`` as an import of the
submodule ``x``, and as an import of the package itself (how pylint counts
it).  Imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "wnaudit" / "checkpoint"


def _graph(package_edges: bool) -> dict[str, set[str]]:
    modules = {("wnaudit.checkpoint" if p.stem == "__init__" else f"wnaudit.checkpoint.{p.stem}"): p for p in PACKAGE.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = "wnaudit.checkpoint"
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                base = f"{package}.{node.module}" if node.module else package
                submodules = {f"{base}.{alias.name}" for alias in node.names} & set(modules)
                targets |= submodules if submodules and not package_edges else {base} | submodules
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets.add(node.module)
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, [*path, nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


@pytest.mark.parametrize("package_edges", [False, True], ids=["submodule", "package"])
def test_no_import_cycle_in_the_checkpoint_package(package_edges):
    assert _cycle(_graph(package_edges)) is None
