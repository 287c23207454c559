"""WN110's index on a cold run: what it keeps per run, and what it hands to the workers (issue 21, ``cold21c``).

The index keeps each file's pool (its project root), remembers which files it
has already announced to the serving-facts workers, and drops the method
calls it has found to run without comparing every call before them.  Each
keeps an answer, so each is checked against the computation it replaces.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.source.source_helpers import write_package
from tests.source.test_derived_cache import _counting, _voc
from tests.source.test_serving_in_workers import SERVE_EVAL
from wnaudit.source.pipeline import scan
from wnaudit.source.project import Project
from wnaudit.source.serving import method_folds
from wnaudit.source.serving.facts import ServingFacts
from wnaudit.source.serving.index import ServingIndex
from wnaudit.source.serving.pools import ProjectPools
from wnaudit.source.serving.resolver import Resolver

FOLDER = "import torch\n\n\ndef fold_all(model):\n    torch.nn.utils.remove_weight_norm(model)\n"


class _Recorder:
    """A stand-in for ``ServingAhead`` that records what the index announces and computes nothing."""

    def __init__(self) -> None:
        self.submitted: list[str] = []

    def submit(self, key: str, data: bytes, path_text: str, module: str, is_package: bool) -> None:
        self.submitted.append(module)

    def take(self, key: str) -> ServingFacts | None:
        return None

    def analysis(self, key: str) -> None:
        return None  # no analysis made beside the facts (issue 38)


def _index(root: Path, reads: list[Path] | None = None, ahead: _Recorder | None = None) -> ServingIndex:
    def read(path: Path) -> bytes:
        if reads is not None:
            reads.append(path)
        return path.read_bytes()

    return ServingIndex(Project([root]), read, lambda path: [], ahead=ahead)  # type: ignore[arg-type]


def test_waiting_removes_as_list_remove_does() -> None:
    """The first equal item goes, so the order left over (``MethodFolds._blocked`` names the first) is the list's."""
    generator = random.Random(21)
    for _ in range(200):
        items = [(Path(f"f{generator.randrange(3)}.py"), generator.randrange(3)) for _ in range(generator.randrange(1, 12))]
        expected = list(items)
        waiting = method_folds._Waiting(list(items))
        for item in generator.sample(items, generator.randrange(len(items) + 1)):
            expected.remove(item)
            waiting.remove(item)
            assert waiting.current() == expected
    duplicates = method_folds._Waiting(["a", "c", "a"])
    duplicates.remove("a")
    assert duplicates.current() == ["c", "a"]


def test_each_file_keeps_its_own_projects_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for root in (first, second):
        (root / "pkg").mkdir(parents=True)
        (root / "pyproject.toml").write_text("")
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "model.py").write_text("VALUE = 1\n")
    found = _index(tmp_path)
    asked = _counting(monkeypatch, ProjectPools, "root_of")
    files = [first / "pkg" / "model.py", second / "pkg" / "model.py", first / "pkg" / "__init__.py"]
    roots = [found.pools.pool(file).root for file in files]
    assert roots == [first, second, first]
    assert found.pools.pool(files[0]) is found.pools.pool(files[2])
    assert [found.pools.pool(file).root for file in files] == roots
    assert asked == files  # once per file: the second round came from what the index kept


def test_a_file_is_announced_to_the_workers_once(tmp_path: Path) -> None:
    package = _voc(tmp_path)
    (package / "serve.py").write_text(SERVE_EVAL)
    serve, mid = package / "serve.py", package / "mid.py"
    reads: list[Path] = []
    workers = _Recorder()
    found = _index(tmp_path, reads, workers)
    found.file_facts.read_ahead([serve, mid])
    found.file_facts.read_ahead([mid, serve])  # a later list holding the same files: not read and hashed again
    assert workers.submitted == ["voc.mid", "voc.serve"]  # last first
    assert reads == [mid, serve]
    assert found.facts(serve) is not None  # the worker had nothing: parsed here, the same answer
    assert found.facts(serve) == _index(tmp_path).facts(serve)


def test_fold_helper_files_go_to_the_workers_before_they_are_read(tmp_path: Path) -> None:
    package = _voc(tmp_path)
    (package / "folding.py").write_text(FOLDER)
    workers = _Recorder()
    found = _index(tmp_path, ahead=workers)
    assert "fold_all" in found.folds.helpers_of(package / "serve.py")
    assert "voc.folding" in workers.submitted
    assert _index(tmp_path).folds.helpers_of(package / "serve.py") == found.folds.helpers_of(package / "serve.py")


def test_serving_workers_leave_the_main_process_a_core() -> None:
    assert [scan.serving_workers(n) for n in (1, 2, 3, 8)] == [1, 1, 2, 7]


def test_typed_reads_each_class_lineage_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Resolver.typed`` runs for every constructor argument typed with a base, over every prepared unit: a class's
    bases are walked once per run, and the answer is the one comparing ``{class, *bases}`` each time."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    model = tmp_path / "pkg" / "model.py"
    model.write_text(
        "class Backbone:\n    pass\n\n\nclass Mid(Backbone):\n    pass\n\n\nclass Leaf(Mid):\n    pass\n\n\n"
        "class Other:\n    pass\n\n\ndef build():\n    return Leaf()\n"
    )
    found = _index(tmp_path)
    units = [(model, f"pkg.model.{name}") for name in ("Backbone", "Mid", "Leaf", "Other", "build")]
    asked = _counting(monkeypatch, Resolver, "bases")
    for annotation, expected in (
        (["pkg.model.Backbone"], {"Backbone", "Mid", "Leaf"}), (["pkg.model.Mid"], {"Mid", "Leaf"}), (["pkg.model.Other"], {"Other"}),
    ):
        for _ in range(3):
            typed = found.resolver.typed(model, annotation, units)
            assert {qual.rpartition(".")[2] for _, qual in typed} == expected
    assert sorted(asked) == sorted(set(asked)), "a class's bases were walked again"


def test_files_mentioning_names_come_in_path_order_whatever_was_searched_first(tmp_path: Path) -> None:
    """Which names a run searched first depends on what else it linted; the files WN110 reads (and the first
    evidence its message quotes) must come in the same order anyway."""
    (tmp_path / "pyproject.toml").write_text("")
    write_package(tmp_path, "pkg", {"a.py": "y = Alpha()\n", "b.py": "x = Beta()\n"})
    orders = []
    for first, second in (("Beta", "Alpha"), ("Alpha", "Beta")):
        found = _index(tmp_path)
        pool = found.pools.pool(tmp_path / "pkg" / "a.py")
        found.pools.search(pool, [first])
        found.pools.search(pool, [second])
        orders.append([path.name for path in found.pools.mentioning(pool, {"Alpha", "Beta"})])
    assert orders == [["a.py", "b.py"], ["a.py", "b.py"]]
