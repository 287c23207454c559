"""The syntax-verdict cache (issue 14/16): warm runs skip parses, and never change an answer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.source.cache_files import entries_of, files_of, forge
from wnaudit.common import cache as store
from wnaudit.common.options import RunOptions
from wnaudit.source import engine, lint_run
from wnaudit.common.cache import CacheStore, digest_of
from wnaudit.source.facts.kinds import CONTENT, SYNTAX, Blob
from wnaudit.source.facts.store import FactStore

#: Both name a weight-norm API (in a comment: the prefilter is a byte search), so both are parsed (issue 21).
VALID = "import os\n\n\ndef f(x):\n    return x + 1\n# weight_norm\n"
BROKEN = "def f(:\n    pass\n# weight_norm\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths the analysis parsed during the test."""
    from wnaudit.source.pipeline import scan

    seen: list[str] = []
    real = scan.summarize_at

    def counting(data, path, location, aliases=None):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(data, path, location, aliases)

    real_serving = scan.summarize_serving

    def counting_serving(data, path, location, trees=None):  # type: ignore[no-untyped-def]
        seen.append(path)  # the analysis with WN110's serving facts from the same parse
        return real_serving(data, path, location, trees)

    monkeypatch.setattr(scan, "summarize_at", counting)
    monkeypatch.setattr(scan, "summarize_serving", counting_serving)
    return seen


def _tree(root: Path, files: dict[str, str]) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in files.items():
        path = root / name
        path.write_text(text)
        paths.append(path)
    return paths


def _answer(paths: list[Path], cache: bool = True, jobs: int = 1) -> tuple[list, list]:
    result = lint_run.lint_files(paths, RunOptions(jobs=jobs, cache=cache))
    return (
        [(f.path, f.code, f.line, f.message) for f in result.findings],
        sorted((e.path, e.message) for e in result.errors),
    )


def _shard_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json"))


def test_second_run_parses_nothing_and_gives_the_same_answer(tmp_path: Path, cache_dir: Path, parses: list[str]) -> None:
    paths = _tree(tmp_path / "src", {"a.py": VALID, "b.py": BROKEN, "c.py": "x = 1\n"})
    first = _answer(paths)
    assert sorted(parses) == sorted(str(p) for p in paths[:2])  # c.py names no API: checked, never parsed (issue 21)
    assert _shard_files(cache_dir)
    parses.clear()
    second = _answer(paths)
    assert parses == []
    assert second == first
    assert any("syntax error at line 1" in message for _, message in first[1])


def test_verdicts_parsed_by_worker_processes_are_cached(tmp_path: Path, cache_dir: Path) -> None:
    paths = _tree(tmp_path / "src", {f"m{i}.py": (BROKEN if i % 2 else VALID) + f"# {i}\n" for i in range(6)})
    first = _answer(paths, jobs=2)  # a process pool: the verdicts and digests come back from workers
    cache = FactStore.open()
    assert cache.persistent
    broken = [p for p in paths if p.read_text().startswith(BROKEN)]
    assert broken and all(cache.known(SYNTAX, Blob(digest_of(p.read_bytes()))) is not None for p in broken)  # valid ones: a summary
    assert _answer(paths, jobs=2) == first == _answer(paths, cache=False)


def test_a_changed_file_is_parsed_again(tmp_path: Path, cache_dir: Path, parses: list[str]) -> None:
    (path,) = _tree(tmp_path / "src", {"a.py": VALID})
    assert _answer([path])[1] == []
    path.write_text(BROKEN)
    parses.clear()
    errors = _answer([path])[1]
    assert parses == [str(path)]
    assert len(errors) == 1 and errors[0][1].startswith("syntax error at line 1")
    path.write_text(VALID)
    assert _answer([path])[1] == []


def test_the_same_content_elsewhere_is_a_hit(tmp_path: Path, cache_dir: Path, parses: list[str]) -> None:
    first = _tree(tmp_path / "one", {"a.py": BROKEN})
    second = _tree(tmp_path / "two", {"b.py": BROKEN})
    _answer(first)
    parses.clear()
    errors = _answer(second)[1]
    assert parses == []
    assert errors == [(str(second[0]), _answer(first)[1][0][1])]


def test_analysed_files_get_no_verdict_but_their_summary_is_cached(tmp_path: Path, cache_dir: Path) -> None:
    source = "import torch\nm = torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))\n"
    paths = _tree(tmp_path / "src", {"model.py": source})
    findings, errors = _answer(paths)
    assert findings and not errors
    cache = FactStore.open()
    assert cache.persistent
    assert cache.known(SYNTAX, Blob(digest_of(source.encode()))) is None  # the analysis parses it every run: no verdict is stored
    assert cache.known(CONTENT, Blob(digest_of(source.encode()))) is not None
    assert files_of(cache_dir, "summary")
    assert _answer(paths) == (findings, errors)


def test_no_cache_option_reads_and_writes_nothing(tmp_path: Path, cache_dir: Path, parses: list[str]) -> None:
    paths = _tree(tmp_path / "src", {"a.py": VALID})
    _answer(paths, cache=False)
    assert not cache_dir.exists()
    _answer(paths)
    parses.clear()
    _answer(paths, cache=False)
    assert parses == [str(paths[0])]  # the cache was not read either


def test_env_disables_the_cache(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WNAUDIT_NO_CACHE", "1")
    _answer(_tree(tmp_path / "src", {"a.py": VALID}))
    assert not cache_dir.exists()


def test_cli_no_cache_flag_writes_nothing(tmp_path: Path, cache_dir: Path) -> None:
    _tree(tmp_path / "src", {"a.py": VALID, "b.py": BROKEN})
    env = {**os.environ, "WNAUDIT_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(Path(engine.__file__).parents[2])}
    run = [sys.executable, "-m", "wnaudit.cli", str(tmp_path / "src")]
    off = subprocess.run([*run, "--no-cache"], env=env, capture_output=True, text=True)
    assert not cache_dir.exists()
    on = subprocess.run(run, env=env, capture_output=True, text=True)
    assert _shard_files(cache_dir)
    again = subprocess.run(run, env=env, capture_output=True, text=True)
    assert off.returncode == on.returncode == again.returncode == 2
    assert off.stdout == on.stdout == again.stdout
    assert off.stderr == on.stderr == again.stderr


def test_cache_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(tmp_path / "explicit"))
    assert store.cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("WNAUDIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert store.cache_root() == tmp_path / "xdg" / "wnaudit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert store.cache_root() == tmp_path / "home" / ".cache" / "wnaudit"


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 23: the XDG Base Directory spec says relative paths are invalid and ignored."""
    monkeypatch.delenv("WNAUDIT_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for relative in (".cache", "cache/dir", "./x"):
        monkeypatch.setenv("XDG_CACHE_HOME", relative)
        assert store.cache_root() == tmp_path / "home" / ".cache" / "wnaudit"


def test_a_relative_xdg_cache_home_never_puts_the_cache_in_the_linted_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = tmp_path / "project"
    paths = _tree(project, {"a.py": VALID, "b.py": BROKEN})
    monkeypatch.delenv("WNAUDIT_CACHE_DIR")
    monkeypatch.delenv("WNAUDIT_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", ".cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(project)
    assert _answer(paths) == _answer(paths, cache=False)
    assert sorted(p.name for p in project.iterdir()) == ["a.py", "b.py"]
    assert list((tmp_path / "home" / ".cache" / "wnaudit").rglob("*.json"))


def test_a_relative_home_disables_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WNAUDIT_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("WNAUDIT_NO_CACHE", raising=False)
    monkeypatch.setenv("HOME", "relative-home")
    assert not FactStore.open().persistent


def test_an_explicit_relative_cache_dir_is_fixed_at_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", "mine")
    assert store.cache_root() == tmp_path / "mine"


def test_the_test_suite_does_not_use_the_real_cache() -> None:
    assert Path(os.environ["WNAUDIT_CACHE_DIR"]) != Path.home() / ".cache" / "wnaudit"


@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b"\xff\xfe", b"[]", b'{"format": 1, "entries": []}', b'{"format": 99, "entries": {}}'],
)
def test_a_damaged_shard_is_ignored_and_rewritten(tmp_path: Path, cache_dir: Path, parses: list[str], damage: bytes) -> None:
    paths = _tree(tmp_path / "src", {"b.py": BROKEN})
    first = _answer(paths)
    (shard,) = files_of(cache_dir, "syntax")
    shard.write_bytes(damage)
    parses.clear()
    assert _answer(paths) == first
    assert parses == [str(paths[0])]
    assert entries_of(shard)  # rewritten whole
    parses.clear()
    assert _answer(paths) == first
    assert parses == []


def test_a_wrong_entry_is_never_believed(tmp_path: Path, cache_dir: Path, parses: list[str]) -> None:
    """Entries that are not verdicts (damage, not a parse's answer) are dropped, not reported."""
    paths = _tree(tmp_path / "src", {"b.py": BROKEN})
    first = _answer(paths)
    (shard,) = files_of(cache_dir, "syntax")
    entries = entries_of(shard)
    key = digest_of(BROKEN.encode()).hex()
    entries[key] = "everything is fine"
    forge(shard, entries)  # a well-formed file: only the verdict's check refuses it
    parses.clear()
    assert _answer(paths) == first
    assert parses == [str(paths[0])]


def test_an_unwritable_cache_dir_disables_the_cache_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(blocker / "cache"))
    paths = _tree(tmp_path / "src", {"a.py": VALID, "b.py": BROKEN})
    with caplog.at_level("DEBUG", logger="wnaudit.common.cache"):
        assert _answer(paths) == _answer(paths, cache=False)
    assert any("cache disabled" in r.getMessage() for r in caplog.records)
    assert all(r.levelname == "DEBUG" for r in caplog.records if r.name == "wnaudit.common.cache")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions and a non-root user")
def test_a_read_only_cache_dir_disables_the_cache_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ro"
    root.mkdir()
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(root))
    paths = _tree(tmp_path / "src", {"a.py": VALID})
    root.chmod(0o500)
    try:
        assert _answer(paths) == _answer(paths, cache=False)
        assert list(root.iterdir()) == []
    finally:
        root.chmod(0o700)


def test_shards_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "MAX_SHARD_BYTES", 2000)
    cache = FactStore(CacheStore(tmp_path / "c"))
    digests = [bytes([7]) + i.to_bytes(15, "big") for i in range(500)]
    for digest in digests:
        cache.put(SYNTAX, Blob(digest), "ok")
    cache.save()
    (shard,) = _shard_files(tmp_path / "c")
    assert shard.parent.name == "syntax"
    assert shard.stat().st_size <= 2000
    fresh = FactStore(CacheStore(tmp_path / "c"))
    assert fresh.known(SYNTAX, Blob(digests[-1])) == "ok"  # the newest entries survive
    assert fresh.known(SYNTAX, Blob(digests[0])) is None


def test_concurrent_saves_merge_and_never_corrupt(tmp_path: Path) -> None:
    one, two = FactStore(CacheStore(tmp_path / "c")), FactStore(CacheStore(tmp_path / "c"))
    a, b = bytes([1]) + b"a" * 15, bytes([1]) + b"b" * 15
    assert one.known(SYNTAX, Blob(a)) is None and two.known(SYNTAX, Blob(b)) is None
    one.put(SYNTAX, Blob(a), "ok")
    two.put(SYNTAX, Blob(b), "syntax error at line 1: invalid syntax")
    one.save()
    two.save()  # merges what ``one`` wrote since ``two`` read the shard
    fresh = FactStore(CacheStore(tmp_path / "c"))
    assert fresh.known(SYNTAX, Blob(a)) == "ok" and fresh.known(SYNTAX, Blob(b)) == "syntax error at line 1: invalid syntax"


_WORKER = """
import sys
from pathlib import Path
from wnaudit.common.options import RunOptions
from wnaudit.source.lint_run import lint_files
paths = sorted(Path(sys.argv[1]).glob("*.py"))
for round in range(int(sys.argv[2])):
    result = lint_files(paths, RunOptions(jobs=1))
    print(sorted((e.path, e.message) for e in result.errors) == sorted((e.path, e.message) for e in lint_files(paths, RunOptions(jobs=1, cache=False)).errors))
"""


def test_two_processes_at_once(tmp_path: Path, cache_dir: Path) -> None:
    """Two runs sharing the cache at once: both always give the uncached answer, and the cache stays readable."""
    files = {f"m{i}.py": (BROKEN if i % 3 == 0 else VALID) + f"# {i}\n" for i in range(60)}
    _tree(tmp_path / "src", files)
    env = {**os.environ, "WNAUDIT_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(Path(engine.__file__).parents[2])}
    command = [sys.executable, "-c", _WORKER, str(tmp_path / "src"), "4"]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=120) for run in runs]
    for run, (out, err) in zip(runs, outputs):
        assert run.returncode == 0, err
        assert out.split() == ["True"] * 4
    for shard in _shard_files(cache_dir):
        entries_of(shard)  # intact
    assert not list(cache_dir.rglob("*.tmp"))
    fresh = FactStore.open()
    assert fresh.persistent
    for text in files.values():
        if text.startswith(BROKEN):  # a valid file's analysis goes to the summary cache, its verdict nowhere
            assert fresh.known(SYNTAX, Blob(digest_of(text.encode()))) is not None


_LINES = st.sampled_from(["x = 1", "def f(:", "import os", "class A:", "    pass", "y = (", ")", "return 3", "  z = 2", "@", "f'{'"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(st.lists(_LINES, max_size=5).map("\n".join), min_size=1, max_size=4), edits=st.lists(_LINES.map(str), max_size=3))
def test_cached_and_uncached_runs_agree(tmp_path_factory: pytest.TempPathFactory, contents: list[str], edits: list[str]) -> None:
    root = tmp_path_factory.mktemp("prop")
    previous = os.environ.get("WNAUDIT_CACHE_DIR")
    os.environ["WNAUDIT_CACHE_DIR"] = str(root / "cache")
    try:
        paths = _tree(root / "src", {f"f{i}.py": text for i, text in enumerate(contents)})
        for round_ in range(2):  # cold, then warm
            assert _answer(paths) == _answer(paths, cache=False), round_
        for path, edit in zip(paths, edits):  # a file's content changes
            path.write_text(path.read_text() + "\n" + edit)
        assert _answer(paths) == _answer(paths, cache=False)
        assert _answer(paths) == _answer(paths, cache=False)
    finally:
        if previous is not None:
            os.environ["WNAUDIT_CACHE_DIR"] = previous


def test_no_home_directory_disables_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WNAUDIT_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert not FactStore.open().persistent
    paths = _tree(tmp_path / "src", {"b.py": BROKEN})
    assert _answer(paths) == _answer(paths, cache=False)
