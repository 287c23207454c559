"""The fact store: the one way a stage or rule gets a per-file fact (``wnaudit/source/facts/``).

A kind declared once is computed once per key; a warm run takes its facts
from disk and computes none; an entry on disk that is not one of its kind is
a miss, computed again and never believed; and no stage or rule reaches the
disk layer itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.source.cache_files import entries_of, files_of, forge
from tests.source.test_derived_cache import _answer
from wnaudit.common.cache import CacheStore
from wnaudit.source import run_answers
from wnaudit.source.content import facts_of
from wnaudit.source.facts.kinds import CONTENT, Blob
from wnaudit.source.facts.store import FactKind, FactStore
from wnaudit.source.serving import fold_point

REPO = Path(__file__).resolve().parents[2]
SERVING = sorted((REPO / "examples" / "serving").glob("*.py"))
SOURCE = b"import torch\nfrom .base import Base\n\nnorm = torch.nn.utils.weight_norm\n"


def _lengths(asked: list[str]) -> FactKind[str, int]:
    """A kind computed by counting: the length of its subject, each computation noted in ``asked``."""

    def compute(subject: str) -> int:
        asked.append(subject)
        return len(subject)

    return FactKind("lengths", key=lambda subject: subject, compute=compute)


def test_a_kind_is_computed_once_per_key_across_gets() -> None:
    asked: list[str] = []
    lengths = _lengths(asked)
    store = FactStore()
    assert store.get(lengths, "abc") == 3
    assert store.get(lengths, "abc") == 3
    assert store.get(lengths, "abcd") == 4
    assert asked == ["abc", "abcd"]
    assert (store.computes["lengths"], store.hits["lengths"], store.misses["lengths"]) == (2, 1, 2)


def test_byte_facts_are_computed_once_for_the_same_bytes() -> None:
    store = FactStore()
    first = store.get(CONTENT, Blob.of(SOURCE))
    again = store.get(CONTENT, Blob.of(bytes(SOURCE)))  # the same bytes read again (another file, another read)
    assert first == again == facts_of(SOURCE)
    assert store.computes["content"] == 1 and store.hits["content"] == 1


def test_a_fact_from_disk_is_not_computed(tmp_path: Path) -> None:
    writer = FactStore(CacheStore(tmp_path / "store"))
    writer.get(CONTENT, Blob.of(SOURCE))
    writer.save()
    reader = FactStore(CacheStore(tmp_path / "store"))
    assert reader.get(CONTENT, Blob.of(SOURCE)) == facts_of(SOURCE)
    assert reader.computes["content"] == 0 and reader.hits["content"] == 1


@pytest.fixture
def stores(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FactStore]]:
    """Every fact store the runs open from now on."""
    opened: list[FactStore] = []
    real = FactStore.__init__

    def init(self: FactStore, disk: CacheStore | None = None) -> None:
        real(self, disk)
        opened.append(self)

    monkeypatch.setattr(FactStore, "__init__", init)
    yield opened


@pytest.fixture
def no_run_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs keep no whole answer (``run_answers``): a warm run asks the store for every per-file fact, as tested here."""
    monkeypatch.setattr(run_answers, "keeps_answers", lambda options: False)


def test_a_warm_run_is_served_from_disk_with_no_computation(cache_dir: Path, stores: list[FactStore], no_run_answers: None) -> None:
    cold = _answer(SERVING)
    (store,) = [s for s in stores if s.persistent]
    assert sum(store.computes.values()) > 0  # the cold run computed what the warm run reads back
    stores.clear()
    assert _answer(SERVING) == cold
    (warm,) = [s for s in stores if s.persistent]
    assert sum(warm.computes.values()) == 0, dict(warm.computes)
    assert warm.hits["summary"] > 0  # the linted files' analyses came from disk
    assert warm.misses["summary"] == 0  # (a file that parses keeps no syntax verdict: its summary stands for it)


def test_a_verdict_built_again_takes_its_fold_point_from_disk(
    cache_dir: Path, stores: list[FactStore], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WN110's verdicts are built again when their record goes (an edit elsewhere); where the fold goes is not."""
    cold = _answer(SERVING)
    (store,) = [s for s in stores if s.persistent]
    assert store.computes["fold_point"] > 0
    for record in files_of(cache_dir, "derived"):
        record.unlink()
    stores.clear()
    parsed: list[str] = []
    monkeypatch.setattr(fold_point, "_parsed", lambda text: parsed.append(text) or None)
    assert _answer(SERVING) == cold
    (warm,) = [s for s in stores if s.persistent]
    assert warm.computes["fold_point"] == 0 and warm.hits["fold_point"] > 0
    assert parsed == []


def test_an_invalid_entry_on_disk_is_a_miss_and_computed_again(tmp_path: Path) -> None:
    writer = FactStore(CacheStore(tmp_path / "store"))
    writer.get(CONTENT, Blob.of(SOURCE))
    writer.save()
    (shard,) = files_of(tmp_path, "content")
    entries = entries_of(shard)
    hostile = {key: [9, "0;os;", None] for key in entries}  # a well-formed file; flags no facts can have
    forge(shard, hostile)
    reader = FactStore(CacheStore(tmp_path / "store"))
    assert reader.get(CONTENT, Blob.of(SOURCE)) == facts_of(SOURCE)
    assert (reader.hits["content"], reader.misses["content"], reader.computes["content"]) == (0, 1, 1)
    reader.save()
    assert entries_of(shard) == entries  # rewritten with the facts computed again


def test_an_invalid_summary_on_disk_is_recomputed_by_the_run(cache_dir: Path, stores: list[FactStore], no_run_answers: None) -> None:
    cold = _answer(SERVING)
    summaries = files_of(cache_dir, "summary")
    assert summaries
    forged = {entry: {key: {"units": "not a summary"} for key in entries_of(entry)} for entry in summaries}
    for entry, hostile in forged.items():
        forge(entry, hostile)
    stores.clear()
    assert _answer(SERVING) == cold
    (store,) = [s for s in stores if s.persistent]
    assert store.misses["summary"] > 0 and store.hits["summary"] == 0  # none believed: the files were analysed again
    assert any(entries_of(entry) != hostile for entry, hostile in forged.items())  # those asked for are rewritten


#: What a stage or rule must never import: the disk layer and the caches the store replaced.
_DISK_LAYER = {
    "wnaudit.common.cache", "wnaudit.source.syntax_cache", "wnaudit.source.summary_cache", "wnaudit.source.serving.facts_cache",
}


def _imported(path: Path) -> Iterator[str]:
    """The absolute names of the modules ``path`` imports (and of what it imports from them)."""
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def _stage_and_rule_modules() -> list[Path]:
    source = REPO / "wnaudit" / "source"
    return sorted([*(source / "rules").rglob("*.py"), *(source / "pipeline").rglob("*.py")])


def test_no_stage_or_rule_reaches_the_disk_layer() -> None:
    modules = _stage_and_rule_modules()
    assert len(modules) > 10
    for path in modules:
        reached = set(_imported(path)) & _DISK_LAYER
        assert not reached, f"{path.relative_to(REPO)} imports {sorted(reached)}: ask the fact store"
        tree = ast.parse(path.read_text())
        disk = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "disk"]
        assert not disk, f"{path.relative_to(REPO)}:{disk[0]} opens the store's disk layer"


def test_the_import_scan_sees_relative_imports() -> None:
    """The scan above resolves ``from ...common.cache import x`` as the import system does."""
    path = REPO / "wnaudit" / "source" / "pipeline" / "scan.py"
    assert "wnaudit.common.gc_pause" in set(_imported(path))
    assert "wnaudit.source.facts.kinds" in set(_imported(path))


def test_only_the_store_opens_its_disk_layer() -> None:
    """Every module of the source entrance asks the store; none but ``facts/store.py`` touches ``FactStore.disk``."""
    source = REPO / "wnaudit" / "source"
    for path in sorted(source.rglob("*.py")):
        if path == source / "facts" / "store.py":
            continue
        tree = ast.parse(path.read_text())
        disk = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "disk"]
        assert not disk, f"{path.relative_to(REPO)}:{disk[0]} opens the store's disk layer"
