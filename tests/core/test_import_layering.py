"""The folders are the architecture: every import arrow points down (read with ``ast``, no torch).

core <- entrances (source, checkpoint, module) <- report / cli.  common is
below everything; the entrances never reach into each other; report reads
only the entrances' code declarations.  Function-level (lazy) imports count:
they are arrows too.  See docs/architecture.md.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "wnaudit"
ENTRANCES = {"source", "checkpoint", "module", "exported", "runtime"}
#: The root package's version may be read from anywhere (``from .. import __version__``).
ANYWHERE = {"wnaudit.__version__"}
#: What each folder may import from wnaudit, besides itself and ANYWHERE.
ALLOWED_LAYERS = {
    "common": set(),
    "core": {"common"},
    "source": {"core", "common"},
    "checkpoint": {"core", "common"},
    "module": {"core", "common"},
    "exported": {"core", "common"},
    "runtime": {"core", "common"},
    "report": {"common"},
}
#: The registry gathers the entrances' declarations of their codes, and nothing else of theirs.
CODE_DECLARATIONS = {
    "wnaudit.source.rules", "wnaudit.checkpoint.codes", "wnaudit.module.codes", "wnaudit.exported.codes", "wnaudit.runtime.codes",
}


def _module_name(path: Path) -> tuple[str, str]:
    """(dotted module name, the package its relative imports start from)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    name = ".".join(parts)
    return name, name.rsplit(".", 1)[0]


def imported_modules(path: Path) -> set[str]:
    """Every wnaudit module (or name in one) that the file imports, relative imports resolved."""
    _, package = _module_name(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if node.module is None:  # ``from . import x``: x is a submodule or a name of the package
                found.update(f"{module}.{alias.name}" for alias in node.names)
            else:
                found.add(module)
    return {name for name in found if name == "wnaudit" or name.startswith("wnaudit.")}


def _runtime_import_nodes(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that runs: at module level or in a function (lazy), not under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the wnaudit modules importing it executes: each named module and every package ``__init__`` above it
    (its own enclosing packages are already being imported, and are left out)."""
    modules = {_module_name(path)[0]: path for path in package.rglob("*.py")}

    def executed(dotted: str) -> set[str]:
        parts = dotted.split(".")
        return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules.keys()

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        _, base_package = _module_name(path)
        edges: set[str] = set()
        for node in _runtime_import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    edges |= executed(alias.name)
                continue
            if node.level:
                base = base_package.split(".")[: len(base_package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            edges |= executed(module)
            for alias in node.names:
                edges |= executed(f"{module}.{alias.name}")
        graph[name] = {e for e in edges if e != name and not name.startswith(e + ".")}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def _files(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def _violations(layer: str) -> list[str]:
    allowed = ALLOWED_LAYERS[layer] | {layer}
    out = []
    for path in _files(layer):
        name, _ = _module_name(path)
        for target in sorted(imported_modules(path) - ANYWHERE):
            target_layer = target.split(".")[1] if "." in target else "wnaudit"
            if target_layer in allowed:
                continue
            if name == "wnaudit.report.codes" and any(target == d or target.startswith(d + ".") for d in CODE_DECLARATIONS):
                continue
            out.append(f"{name} imports {target}")
    return out


@pytest.mark.parametrize("layer", sorted(ALLOWED_LAYERS))
def test_imports_point_down(layer: str):
    assert _files(layer), f"wnaudit/{layer}/ is empty or gone"
    assert _violations(layer) == []


def test_the_registry_reads_every_entrances_declarations():
    assert imported_modules(PACKAGE / "report" / "codes.py") >= CODE_DECLARATIONS


def test_the_checker_sees_relative_and_lazy_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The checker itself: an upward arrow hidden in a function, written relatively, is caught."""
    fake = tmp_path / "wnaudit"
    (fake / "core").mkdir(parents=True)
    (fake / "core" / "bad.py").write_text("def f():\n    from ..source import engine\n    from .. import report\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert _violations("core") == ["wnaudit.core.bad imports wnaudit.report", "wnaudit.core.bad imports wnaudit.source"]


def _loaded_after(statement: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE.parent), os.environ.get("PYTHONPATH")]))}
    script = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "statement",
    [
        "import wnaudit.source",
        "import wnaudit.cli",
        "import wnaudit.source.flake8_plugin",
        "from wnaudit.report.codes import code_registry; code_registry()",
        "import wnaudit",
    ],
)
def test_the_torch_free_paths_do_not_import_torch(statement: str):
    assert "torch" not in _loaded_after(statement)


def test_linting_never_imports_libcst_and_fixing_does():
    lint = "from wnaudit.source import all_rules, lint_source\nfor rule in all_rules():\n    lint_source(rule.INVALID[0].source, 'x.py')"
    assert "libcst" not in _loaded_after(lint)
    fix = "from wnaudit.source import all_rules, fix_source\nfix_source(all_rules()[0].INVALID[0].source, 'x.py')"
    assert "libcst" in _loaded_after(fix)


def test_no_import_cycle_anywhere():
    """Issue 21: no cycle of imports in wnaudit/, lazy ones and package ``__init__`` files counted."""
    assert import_cycles(import_graph(PACKAGE)) == []


def test_the_cycle_check_sees_cycles_through_a_package_init_and_a_lazy_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fake = tmp_path / "wnaudit"
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    (fake / "source" / "rules").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "source" / "__init__.py").write_text("")
    (fake / "source" / "rules" / "__init__.py").write_text("from ..context import Context\n")
    (fake / "source" / "rules" / "base.py").write_text("X = 1\n")
    (fake / "source" / "context.py").write_text("def f():\n    from .rewrite import insert\n")
    (fake / "source" / "rewrite.py").write_text("from .rules.base import X\n")
    (fake / "source" / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .context import f\n")
    graph = import_graph(fake)
    assert import_cycles(graph) == [["wnaudit.source.context", "wnaudit.source.rewrite", "wnaudit.source.rules"]]
    assert "wnaudit.source.context" not in graph["wnaudit.source.typed"]


def test_the_registry_reads_source_declarations_without_the_engine():
    """The code registry imports the rules' declarations, never the engine, its stages or the project model."""
    loaded = _loaded_after("from wnaudit.report.codes import code_registry; code_registry()")
    engine_side = {"wnaudit.source.engine", "wnaudit.source.context", "wnaudit.source.workspace", "wnaudit.source.pipeline"}
    assert "wnaudit.source.rules" in loaded
    assert sorted(m for m in loaded if m in engine_side or m.startswith("wnaudit.source.pipeline.")) == []


def test_the_bench_command_does_not_import_the_cli():
    assert not {m for m in imported_modules(PACKAGE / "bench" / "command.py") if m == "wnaudit.cli" or m.startswith("wnaudit.cli.")}
