"""The per-content caches (issue 16): byte facts and summaries make warm runs cheap, and never change an answer.

Warm runs take a file's import statements, API flags and definitions from the
cache by content digest (placed where the file sits at lookup) and the
analysis of the files they analyse from the summary cache; these tests pin
that both are used, that what is stored is checked before it is believed,
and, as a property over generated packages, that cached and uncached runs
agree: cold, warm, after the tree moves elsewhere and after edits.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.source.cache_files import entries_of, files_of, forge
from tests.source.test_source_invariance import _write_tree, module_spec
from wnaudit.common import cache as store
from wnaudit.common.options import RunOptions
from wnaudit.source import content, engine, lint_run, project
from wnaudit.source.content import ContentFacts, facts_of
from wnaudit.source.project import Project, RawImport, bindings_of, raw_imports
from wnaudit.common.cache import digest_of
from wnaudit.source.facts.kinds import CONTENT, SUMMARY, Blob, SummaryOf, summary_key
from wnaudit.source.facts.store import FactStore

HELPER = "from torch.nn.utils import weight_norm\n\ndef wn(m):\n    return weight_norm(m)\n"
USER = (
    "import torch.nn as nn\nfrom .helpers import wn\nfrom torch.nn.utils.parametrize import remove_parametrizations\n\n\n"
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = wn(nn.Conv1d(2, 2, 3))\n\n"
    "    def fold(self):\n        remove_parametrizations(self.conv, 'weight')\n"
)
PLAIN = "import os\nfrom .helpers import wn\n\nx = 1\n"


def _package(root: Path) -> list[Path]:
    package = root / "pkg"
    package.mkdir(parents=True)
    files = {"__init__.py": "", "helpers.py": HELPER, "model.py": USER, "plain.py": PLAIN}
    for name, text in files.items():
        (package / name).write_text(text)
    return sorted(package.glob("*.py"))


def _answer(paths: list[Path], cache: bool = True) -> tuple[list, list]:
    result = lint_run.lint_files(paths, RunOptions(jobs=1, cache=cache))
    return (
        [(f.path, f.code, f.line, f.column, f.message) for f in result.findings],
        sorted((e.path, e.message) for e in result.errors),
    )


def _count_calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(module, name)

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def test_a_warm_run_neither_scans_imports_nor_analyses(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path / "src")
    cold = _answer(paths)
    assert cold == _answer(paths, cache=False)
    scans = _count_calls(monkeypatch, content, "raw_imports")
    analyses = _count_calls(monkeypatch, engine, "summarize")
    warm = _answer(paths)
    assert warm == cold
    assert scans == [] and analyses == []


def test_facts_are_placed_where_the_file_sits_now(tmp_path: Path, cache_dir: Path) -> None:
    """The same bytes elsewhere (another root, another package name) are resolved from there, not from where they were cached."""
    first = _package(tmp_path / "one")
    _answer(first)
    moved = tmp_path / "two" / "deeper"
    shutil.copytree(tmp_path / "one" / "pkg", moved / "other")
    (moved / "other" / "helpers.py").write_text("def wn(m):\n    return m\n")  # no weight norm here: nothing to remove
    paths = sorted((moved / "other").glob("*.py"))
    assert _answer(paths) == _answer(paths, cache=False)
    assert [f[1] for f in _answer(first)[0] if f[0].endswith("model.py")] == ["WN107"]
    assert [f[1] for f in _answer(paths)[0] if f[0].endswith("model.py")] == []  # its helper here holds no norm


def test_the_facts_of_a_file_are_stored_by_content(tmp_path: Path, cache_dir: Path) -> None:
    paths = _package(tmp_path / "src")
    _answer(paths)
    cache = FactStore.open()
    assert cache.persistent
    for path in paths:
        data = path.read_bytes()
        stored = cache.known(CONTENT, Blob.of(data))
        assert stored is not None
        assert dataclasses.replace(stored, definitions=None) == facts_of(data)


@pytest.mark.parametrize(
    "damage", [None, [], [1], [9, "", None], [1, "x;y;z", None], [1, "0;os;a:b:c", None], [1, "0;os", None], [1, "", 7]],
)
def test_a_damaged_facts_entry_is_never_believed(tmp_path: Path, cache_dir: Path, damage: object) -> None:
    paths = _package(tmp_path / "src")
    first = _answer(paths)
    for shard in files_of(cache_dir, "content"):
        forge(shard, {key: damage for key in entries_of(shard)})
    for summaries in cache_dir.glob("*/summary"):
        shutil.rmtree(summaries)
    assert _answer(paths) == first == _answer(paths, cache=False)


def test_facts_survive_the_cache_form() -> None:
    data = (
        b"import os, a.b as c, d.e\nfrom . import x\nfrom ..p.q import (y as z,\n  w)\nfrom m import *\n"
        b"if 1: import k; from .r import s\nfrom weird . name import  t\n"
    )
    facts = facts_of(data)
    assert facts.imports
    assert content.decode(json.loads(json.dumps(content.encode(facts)))) == facts
    with_names = ContentFacts(True, False, True, facts.imports, frozenset({"f", "g"}))
    assert content.decode(content.encode(with_names)) == with_names
    assert content.decode(content.encode(ContentFacts(False, False, False, (), frozenset()))) == ContentFacts(
        False, False, False, (), frozenset()
    )


def test_raw_imports_placed_give_the_bindings_of_the_file(tmp_path: Path) -> None:
    package = tmp_path / "top" / "sub"
    package.mkdir(parents=True)
    (tmp_path / "top" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    data = b"from .. import a\nfrom ..b import c as d\nfrom . import *\nimport e.f\nfrom .... import too_far\n"
    location = Project([tmp_path]).locate(package / "mod.py")
    found = {(b.bound, b.module, b.attribute) for b in bindings_of(raw_imports(data), location)}
    assert found == {
        ("a", "top", "a"), ("a", "top.a", "*"), ("d", "top.b", "c"), ("d", "top.b.c", "*"),
        ("*", "top.sub", "*"), ("e", "e.f", "*"), ("e", "e", "*"),
    }
    assert project.import_bindings(data, location) == bindings_of(raw_imports(data), location)
    assert raw_imports(data)[0] == RawImport(2, "", (("a", ""),))


def test_a_hostile_summary_entry_is_ignored_never_run(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path / "src")
    first = _answer(paths)
    marker = tmp_path / "ran"

    class Exploit:
        def __reduce__(self) -> tuple:
            return (os.system, (f"touch {marker}",))

    entries = files_of(cache_dir, "summary") + files_of(cache_dir, "serving")
    assert entries
    for entry in entries:
        entry.write_bytes(pickle.dumps(Exploit()))
    asked: list[str] = []  # the summary keys the run reads
    real = FactStore.lookup

    def lookup(self: FactStore, kind: object, key: str, *rest: object) -> object:
        if kind is SUMMARY:
            asked.append(key)
        return real(self, kind, key, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(FactStore, "lookup", lookup)
    assert _answer(paths) == first
    assert not marker.exists()
    read = [entry for entry in files_of(cache_dir, "summary") if entry.stem in asked]
    assert read  # the run asked for summaries it had stored: each one read is rewritten with the real summary
    for entry in read:
        assert b"system" not in entry.read_bytes()


def test_summaries_stay_bounded(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "MAX_TOTAL_BYTES", 1)
    _answer(_package(tmp_path / "src"))
    assert len(list(cache_dir.rglob("*.json"))) <= 1


def test_the_summary_key_holds_everything_the_summary_depends_on(tmp_path: Path) -> None:
    located = Project([tmp_path]).locate(tmp_path / "pkg" / "m.py")
    other = Project([tmp_path / "pkg"]).locate(tmp_path / "pkg" / "m.py")
    digest = digest_of(b"x = 1\n")
    keys = {
        summary_key(SummaryOf(digest, "pkg/m.py", located, None)),
        summary_key(SummaryOf(digest_of(b"x = 2\n"), "pkg/m.py", located, None)),
        summary_key(SummaryOf(digest, "./pkg/m.py", located, None)),
        summary_key(SummaryOf(digest, "pkg/m.py", other, None)),  # another module name
        summary_key(SummaryOf(digest, "pkg/m.py", located, {"f": frozenset({"torch.nn.utils.weight_norm"})})),
    }
    assert len(keys) == 5


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    specs=st.lists(module_spec, min_size=1, max_size=4),
    edits=st.lists(st.tuples(st.integers(min_value=0, max_value=3), module_spec), max_size=2),
)
def test_cached_and_uncached_runs_agree_on_packages(tmp_path_factory: pytest.TempPathFactory, specs: list, edits: list) -> None:
    """Cross-file packages: cold, warm, moved to another root (same bytes, other module names), edited."""
    from tests.source.test_source_invariance import _module

    root = tmp_path_factory.mktemp("cached")
    previous = os.environ.get("WNAUDIT_CACHE_DIR")
    os.environ["WNAUDIT_CACHE_DIR"] = str(root / "cache")
    try:
        paths = sorted(_write_tree(root / "one", specs)[0].parent.glob("*.py"))
        expected = _answer(paths, cache=False)
        assert _answer(paths) == expected  # cold
        assert _answer(paths) == expected  # warm
        moved = root / "two" / "src" / "renamed"
        shutil.copytree(paths[0].parent, moved)
        moved_paths = sorted(moved.glob("*.py"))
        assert _answer(moved_paths) == _answer(moved_paths, cache=False)
        for index, spec in edits:
            if index < len(specs):
                (paths[0].parent / f"m{index}.py").write_text(_module(index, spec, len(specs)))
        assert _answer(paths) == _answer(paths, cache=False)
        assert _answer(paths) == _answer(paths, cache=False)
    finally:
        if previous is not None:
            os.environ["WNAUDIT_CACHE_DIR"] = previous


def _reference_in_root(root: Path, dotted: str) -> Path | None:
    """``Project._in_root`` as a ``stat`` per candidate: what the directory listings must agree with."""
    parts = dotted.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    base = os.path.join(root, *parts)
    for candidate in (os.path.join(base, "__init__.py"), base + ".py", base + ".pyi"):
        if os.path.isfile(candidate):
            return Path(candidate)
    return Path(base) if os.path.isdir(base) else None


def test_module_lookup_from_listings_agrees_with_stat(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("pkg/__init__.py", "pkg/mod.py", "pkg/stub.pyi", "pkg/both.py", "pkg/both.pyi", "ns/inner/leaf.py",
                 "pkg/sub/__init__.py", "pkg/sub/deep.py", "pkg/dirpy.py/file.txt", "top.py", "pkg/sub.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    (root / "link.py").symlink_to(root / "top.py")
    (root / "linkdir").symlink_to(root / "pkg", target_is_directory=True)
    (root / "broken.py").symlink_to(root / "missing.py")
    names = [
        "pkg", "pkg.mod", "pkg.stub", "pkg.both", "pkg.missing", "pkg.dirpy", "pkg.sub", "pkg.sub.deep", "pkg.mod.attr",
        "ns", "ns.inner", "ns.inner.leaf", "ns.nothing", "top", "top.attr", "link", "linkdir.mod", "broken", "nope.deeper",
        "pkg.sub.deep.x.y",
    ]
    found = Project([root])
    for dotted in names:
        assert found._in_root(root, dotted) == _reference_in_root(root, dotted), dotted
