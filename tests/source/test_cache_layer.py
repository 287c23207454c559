"""The one cache layer (issue 21 item 3): one format, one bound, one switch, one rule for what is believed."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.source.cache_files import entries_of, files_of, forge
from wnaudit.common import cache as store
from wnaudit.common.cache import CacheStore, Kind
from wnaudit.common.options import RunOptions
from wnaudit.common.plain_json import PlainCodec
from wnaudit.source import engine, lint_run, model
from wnaudit.source.facts.kinds import data_classes

REPO = Path(engine.__file__).parents[2]
SMALL = Kind("small", sharded=True, check=lambda value: value if isinstance(value, str) else None)
BIG = Kind("big", sharded=False, check=lambda value: value if isinstance(value, list) else None)
SERVED = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
    "class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n\n\n"
    "def serve():\n    model = Net()\n    model.eval()\n    return model\n"
)


def _project(root: Path) -> list[Path]:
    """A project whose lint uses every kind: verdicts, byte facts, summaries, serving facts, fold points, the derived record."""
    package = root / "proj" / "pkg"
    package.mkdir(parents=True)
    (root / "proj" / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    files = {"__init__.py": "", "net.py": SERVED, "plain.py": "import os\n", "broken.py": "def f(:\nweight_norm\n"}  # names weight_norm: parsed
    for name, text in files.items():
        (package / name).write_text(text)
    return sorted(package.glob("*.py"))


def _answer(paths: list[Path], cache: bool = True) -> tuple[list, list]:
    result = lint_run.lint_files(paths, RunOptions(jobs=1, cache=cache))
    return (
        sorted((f.path, f.code, f.line, f.column, f.message) for f in result.findings),
        sorted((e.path, e.message) for e in result.errors),
    )


def test_every_kind_is_stored_in_the_one_format(tmp_path: Path, cache_dir: Path) -> None:
    paths = _project(tmp_path)
    findings, errors = _answer(paths)
    assert {f[1] for f in findings} == {"WN110"} and len(errors) == 1
    (version,) = [path for path in cache_dir.iterdir() if path.is_dir()]
    assert version.name == store.version_key()
    assert {kind.name for kind in version.iterdir()} == {"syntax", "content", "summary", "serving", "fold_point", "derived"}
    assert {path.name for path in cache_dir.iterdir() if not path.is_dir()} == {"code-fingerprint"}
    for path in version.rglob("*"):
        if path.is_file():
            entries = entries_of(path)  # header, digest and kind check out; the body is JSON
            assert entries and all(store.is_key(key) for key in entries)
            assert b"pickle" not in path.read_bytes()


def test_warm_runs_give_the_cold_answer(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm answer is the cold one, and it comes from the store: the syntax verdict, the summaries and the
    derived record are hits (that record answers for the byte and serving facts it rests on: those are not asked)."""
    paths = _project(tmp_path)
    cold = _answer(paths, cache=False)
    assert _answer(paths) == cold  # writes every kind
    stores: list[CacheStore] = []
    real_open = CacheStore.open.__func__  # type: ignore[attr-defined]

    def recording(cls: type[CacheStore], enabled: bool = True) -> CacheStore | None:
        opened = real_open(cls, enabled)
        if opened is not None:
            stores.append(opened)
        return opened

    monkeypatch.setattr(CacheStore, "open", classmethod(recording))
    assert _answer(paths) == cold  # reads every kind
    hits = {kind for opened in stores for kind, count in opened.hits.items() if count}
    assert hits == {"syntax", "summary", "derived"}


def test_warm_cli_output_is_the_cold_output(tmp_path: Path, cache_dir: Path) -> None:
    _project(tmp_path)
    env = {**os.environ, "WNAUDIT_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(REPO)}
    for format_ in ("text", "json"):
        run = [sys.executable, "-m", "wnaudit", "--output-format", format_, str(tmp_path / "proj")]
        cold = subprocess.run([*run, "--no-cache"], env=env, capture_output=True, text=True)
        first = subprocess.run(run, env=env, capture_output=True, text=True)
        warm = subprocess.run(run, env=env, capture_output=True, text=True)
        assert "WN110" in cold.stdout
        assert (cold.returncode, cold.stdout, cold.stderr) == (first.returncode, first.stdout, first.stderr)
        assert (cold.returncode, cold.stdout, cold.stderr) == (warm.returncode, warm.stdout, warm.stderr)


def test_no_cache_reads_and_writes_nothing_of_any_kind(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _project(tmp_path)
    cold = _answer(paths, cache=False)
    assert not cache_dir.exists()
    _answer(paths)  # a full cache now
    before = {p: p.read_bytes() for p in cache_dir.rglob("*") if p.is_file()}
    opened: list[Path] = []
    real = CacheStore.__init__

    def recording(self: CacheStore, directory: Path) -> None:
        opened.append(directory)
        real(self, directory)

    monkeypatch.setattr(CacheStore, "__init__", recording)
    assert _answer(paths, cache=False) == cold
    assert opened == []
    assert {p: p.read_bytes() for p in cache_dir.rglob("*") if p.is_file()} == before


def test_one_bound_across_kinds_evicts_the_oldest_files_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = CacheStore(tmp_path / "v")
    old_big, new_big = "a" * 32, "b" * 32
    cache.put(BIG, old_big, ["x" * 400])
    cache.put(SMALL, "c" * 32, "y" * 400)
    cache.save()
    cache.put(BIG, new_big, ["z" * 400])
    shard = tmp_path / "v" / "small" / "cc.json"
    for age, path in ((300, tmp_path / "v" / "big" / f"{old_big}.json"), (200, shard)):
        os.utime(path, (path.stat().st_mtime - age,) * 2)
    sizes = sum(p.stat().st_size for p in (tmp_path / "v").rglob("*.json"))
    monkeypatch.setattr(store, "MAX_TOTAL_BYTES", sizes - 1)  # one file must go: the oldest, of whichever kind
    cache.save()
    left = {p.name for p in (tmp_path / "v").rglob("*.json")}
    assert left == {"cc.json", f"{new_big}.json"}
    monkeypatch.setattr(store, "MAX_TOTAL_BYTES", sizes // 2)  # now the small kind's shard is the oldest
    cache.put(BIG, "d" * 32, ["w"])
    cache.save()
    assert {p.name for p in (tmp_path / "v").rglob("*.json")} == {f"{new_big}.json", f"{'d' * 32}.json"}


@pytest.mark.parametrize("damage", ["truncate", "flip", "header", "kind"])
def test_a_damaged_file_is_ignored_and_rewritten(tmp_path: Path, cache_dir: Path, damage: str) -> None:
    paths = _project(tmp_path)
    expected = _answer(paths, cache=False)
    _answer(paths)
    (shard,) = [p for p in files_of(cache_dir, "syntax") if b"syntax error" in p.read_bytes()]
    raw = shard.read_bytes()
    if damage == "truncate":
        raw = raw[: len(raw) - 3]
    elif damage == "flip":  # still valid JSON, still a verdict: only the digest notices
        raw = raw.replace(b"line 1", b"line 7")
    elif damage == "header":
        raw = raw.replace(b"wnaudit-cache 3", b"wnaudit-cache 4", 1)
    else:  # another kind's well-formed file in its place
        raw = next(p for p in files_of(cache_dir, "content")).read_bytes()
    shard.write_bytes(raw)
    assert _answer(paths) == expected
    assert any("line 1" in value for value in entries_of(shard).values())  # rewritten with the parse's verdict


def test_an_entry_under_another_keys_name_is_not_believed(tmp_path: Path) -> None:
    cache = CacheStore(tmp_path / "v")
    one, two = "1" * 64, "2" * 64
    cache.put(BIG, one, ["for one"])
    shutil.copy(tmp_path / "v" / "big" / f"{one}.json", tmp_path / "v" / "big" / f"{two}.json")
    assert cache.get(BIG, one) == ["for one"]
    assert cache.get(BIG, two) is None
    cache.put(SMALL, "ab" + "0" * 30, "in ab")
    cache.save()
    moved = tmp_path / "v" / "small" / "cd.json"
    shutil.copy(tmp_path / "v" / "small" / "ab.json", moved)
    assert CacheStore(tmp_path / "v").get(SMALL, "ab" + "0" * 30) == "in ab"
    assert CacheStore(tmp_path / "v").get(SMALL, "cd" + "0" * 30) is None


def test_a_forged_summary_is_not_believed(tmp_path: Path, cache_dir: Path) -> None:
    """Well-formed files whose values are no summary (wrong types, wrong shape, a bool for an int) are misses."""
    paths = _project(tmp_path)
    expected = _answer(paths, cache=False)
    _answer(paths)
    entries = files_of(cache_dir, "summary")
    assert entries
    for entry in entries:
        ((key, value),) = entries_of(entry).items()
        forged = json.loads(json.dumps(value))
        forged[1] = 7  # the module name, as a number
        forge(entry, {key: forged})
    assert _answer(paths) == expected
    for entry in files_of(cache_dir, "summary"):
        ((key, value),) = entries_of(entry).items()
        assert isinstance(value[1], str)  # rewritten by the real analysis


def test_a_killed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = CacheStore(tmp_path / "v")
    key = "e" * 64
    cache.put(BIG, key, ["old"])

    def dying(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(store.os, "replace", dying)
    with pytest.raises(KeyboardInterrupt):
        cache.put(BIG, key, ["new"])
    monkeypatch.undo()
    assert CacheStore(tmp_path / "v").get(BIG, key) == ["old"]
    assert not list((tmp_path / "v").rglob("*.tmp"))


def test_the_codec_round_trips_summaries_and_refuses_other_shapes() -> None:
    codec = PlainCodec(data_classes(model))
    for path in sorted((REPO / "examples").rglob("*.py")):
        summary = engine.summarize(path.read_bytes(), str(path), path.stem, False)
        stored = json.loads(json.dumps(codec.encode(summary, model.FileSummary)))
        assert codec.decode(stored, model.FileSummary) == summary
    site = codec.encode(model.Site(1, 2, 3, 4, "m"), model.Site)
    assert codec.decode(site, model.Site) == model.Site(1, 2, 3, 4, "m")
    for forged in ([True, 2, 3, 4, "m"], [1, 2, 3, 4], [1, 2, 3, 4, "m", 6], {"line": 1}, [1, 2, 3, 4, None], "site"):
        with pytest.raises(ValueError):
            codec.decode(forged, model.Site)


def test_no_cache_module_can_unpickle() -> None:
    """Cache files are data: no module of the cache layer imports pickle, marshal or shelve."""
    modules = [
        REPO / "wnaudit" / "common" / "cache.py", REPO / "wnaudit" / "common" / "plain_json.py",
        *(REPO / "wnaudit" / "source").glob("*_cache.py"),
        *(REPO / "wnaudit" / "source" / "facts").glob("*.py"),
    ]
    for path in modules:
        tree = ast.parse(path.read_text())
        imported = {
            alias.name.partition(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not imported & {"pickle", "marshal", "shelve", "dill"}, path
