"""Fixes leave code as clean as they found it (issue 37, item 2): after any source fix, pyflakes
reports nothing it did not report before (no import left unused, no name redefined)."""

from __future__ import annotations

import ast
import shutil
import warnings
from pathlib import Path

import pytest

pyflakes_checker = pytest.importorskip("pyflakes.checker")

from wnaudit.cli.command import run  # noqa: E402
from wnaudit.report.rule_pages import page_sections  # noqa: E402
from wnaudit.source import all_rules, fix_source  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]

#: The issue's reproduction and its neighbours: the remover imported beside a try/except choice of spellings.
REPRODUCTIONS = {
    "remover-after-try": (
        "import torch\ntry:\n    from torch.nn.utils.parametrizations import weight_norm\nexcept ImportError:\n"
        "    from torch.nn.utils import weight_norm\nfrom torch.nn.utils import remove_weight_norm\n\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n"
    ),
    "remover-inside-try": (
        "import torch\ntry:\n    from torch.nn.utils.parametrizations import weight_norm\n"
        "    from torch.nn.utils import remove_weight_norm\nexcept ImportError:\n"
        "    from torch.nn.utils import weight_norm, remove_weight_norm\n\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n"
    ),
    "remover-alone-in-try": (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\ntry:\n"
        "    from torch.nn.utils import remove_weight_norm\nexcept ImportError:\n    remove_weight_norm = None\n\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n"
    ),
    "remover-under-if": (
        "import sys\nimport torch\nfrom torch.nn.utils.parametrizations import weight_norm\nif sys.version_info >= (3, 8):\n"
        "    from torch.nn.utils import remove_weight_norm\n\n"
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n"
    ),
}


def _fix_test_inputs() -> list[str]:
    """Every string in the fix tests that is a Python module applying or removing a norm."""
    found = []
    for test_file in sorted((REPO_ROOT / "tests" / "source").glob("test_source_fix_*.py")):
        for node in ast.walk(ast.parse(test_file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "_norm" in node.value and "\n" in node.value:
                try:
                    ast.parse(node.value)
                except SyntaxError:
                    continue
                found.append(node.value)
    return sorted(set(found))


def _corpus() -> dict[str, str]:
    corpus = dict(REPRODUCTIONS)
    for rule in all_rules():
        for number, example in enumerate((*rule.INVALID, *rule.VALID)):
            corpus[f"{rule.code}-example-{number}"] = example.source
        corpus[f"{rule.code}-page"] = page_sections(rule.code)["Example"].split("```python\n", 1)[1].split("```", 1)[0]
    for number, source in enumerate(_fix_test_inputs()):
        corpus[f"fix-test-input-{number}"] = source
    return corpus


CORPUS = _corpus()


def pyflakes_messages(source: str | bytes) -> set[tuple[str, tuple[object, ...]]]:
    """pyflakes' messages by kind and names, without line numbers (a fix moves lines)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    checker = pyflakes_checker.Checker(tree, filename="example.py")
    return {(type(m).__name__, tuple(a for a in m.message_args if not isinstance(a, int))) for m in checker.messages}


@pytest.fixture(autouse=True)
def _own_project(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # each example a project of its own, as in test_source_rules


def test_the_corpus_is_big_enough():
    assert len(CORPUS) > 60 and len(_fix_test_inputs()) > 10


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_fix_adds_no_pyflakes_message(name: str):
    source = CORPUS[name]
    fixed, _ = fix_source(source, "example.py")
    new = pyflakes_messages(fixed) - pyflakes_messages(source)
    assert not new, f"{name}: the fix added {sorted(new)}\n{fixed!s}"


@pytest.mark.parametrize("name", sorted(REPRODUCTIONS))
def test_reproductions_are_fixed(name: str):
    fixed, done = fix_source(REPRODUCTIONS[name], "example.py")
    assert done and "remove_weight_norm(conv)" not in str(fixed)


def test_examples_directory_fix_adds_no_pyflakes_message(tmp_path: Path):
    project = tmp_path / "examples"
    shutil.copytree(REPO_ROOT / "examples", project, ignore=shutil.ignore_patterns("checkpoints", "__pycache__"))
    before = {path: pyflakes_messages(path.read_bytes()) for path in project.rglob("*.py")}
    assert run(["--fix", "--unsafe-fixes", "--no-cache", "-q", str(project)]) in (0, 1)
    changed = [path for path in before if pyflakes_messages(path.read_bytes()) - before[path]]
    assert not changed, {str(p): sorted(pyflakes_messages(p.read_bytes()) - before[p]) for p in changed}
    assert any((REPO_ROOT / "examples" / p.relative_to(project)).read_bytes() != p.read_bytes() for p in before), "nothing was fixed"
