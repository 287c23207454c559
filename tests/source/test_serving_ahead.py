"""WN110's serving files parsed in worker processes while the index links (issue 21, ``serving/ahead.py``).

Where the index has a list of files it is about to read, a cold run over many
files has workers parse them meanwhile; the index takes their facts by the
digest of the bytes it read.  The answers are the ones it computes itself, and
a worker that fails, or a task no worker has started, is computed here.
Also: a lint collects cycles less often, and never while a serving file's
syntax tree is walked (the collector would walk the tree again and again).
"""

from __future__ import annotations

import concurrent.futures
import gc
import os
from pathlib import Path

import pytest

from tests.source.test_derived_cache import _answer, _voc
from tests.source.test_serving_in_workers import SERVE_EVAL, _parsed_by_the_index
from wnaudit.common.gc_pause import LINT_THRESHOLDS
from wnaudit.common.options import RunOptions
from wnaudit.source import engine, lint_run
from wnaudit.source.pipeline import scan
from wnaudit.source.project import Project
from wnaudit.source.serving import ahead, flags
from wnaudit.source.serving.index import ServingIndex
from wnaudit.source.serving.units import IndexHooks


def _package(root: Path) -> list[Path]:
    package = _voc(root)
    (package / "serve.py").write_text(SERVE_EVAL)
    for number in range(12):
        (package / f"extra{number}.py").write_text(f"VALUE = {number}\n")
    return sorted(package.glob("*.py"))


def _index(root: Path, workers: ahead.ServingAhead | None, hooks: IndexHooks = IndexHooks()) -> ServingIndex:
    return ServingIndex(Project([root]), lambda path: path.read_bytes(), lambda path: [], ahead=workers, hooks=hooks)


def _facts_read_ahead(root: Path, serve: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, list[str]]:
    """``serve``'s facts from an index whose workers were given it first, and the modules the index parsed itself."""
    workers = ahead.ServingAhead(2)
    try:
        found = _index(root, workers)
        found.file_facts.read_ahead([serve])
        concurrent.futures.wait(list(workers._futures.values()))
        parsed = _parsed_by_the_index(monkeypatch)
        return found.facts(serve), parsed
    finally:
        workers.close()


def test_the_index_takes_the_facts_a_worker_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path)
    serve = paths[0].parent / "serve.py"
    own = _index(tmp_path, None).facts(serve)
    facts, parsed = _facts_read_ahead(tmp_path, serve, monkeypatch)
    assert facts == own
    assert parsed == []  # taken from the worker, not parsed here


def _failing(task: object) -> object:
    raise MemoryError("a worker out of memory")


def test_a_failed_worker_is_covered_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path)
    serve = paths[0].parent / "serve.py"
    own = _index(tmp_path, None).facts(serve)
    monkeypatch.setattr(ahead, "facts_in_worker", _failing)  # the forked workers run it too
    facts, parsed = _facts_read_ahead(tmp_path, serve, monkeypatch)
    assert facts == own
    assert parsed == ["voc.serve"]


def test_a_cold_run_over_many_files_has_workers_parse_the_serving_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path)
    alone = _answer(paths, cache=False)  # jobs=1: no workers, the index parses everything itself
    assert any(code == "WN110" for _, code, _, _ in alone)
    monkeypatch.setattr(scan, "AHEAD_FILES", 4)
    submitted: list[str] = []
    closed: list[bool] = []
    real_submit, real_close = ahead.ServingAhead.submit, ahead.ServingAhead.close

    def counted(self: ahead.ServingAhead, key: str, data: bytes, path_text: str, module: str, is_package: bool) -> None:
        submitted.append(module)
        real_submit(self, key, data, path_text, module, is_package)

    def closing(self: ahead.ServingAhead) -> None:
        closed.append(True)
        real_close(self)

    monkeypatch.setattr(ahead.ServingAhead, "submit", counted)
    monkeypatch.setattr(ahead.ServingAhead, "close", closing)
    result = lint_run.lint_files(paths, RunOptions(jobs=2, cache=False))
    answer = [(f.path, f.code, f.line, f.message) for f in result.findings] + sorted((e.path, e.message) for e in result.errors)
    assert answer == alone
    assert "voc.serve" in submitted  # the serving file the index found by name went to the workers
    assert closed  # and the workers are stopped with the run


def test_a_lint_collects_cycles_less_often_and_restores_the_thresholds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path)
    seen: list[tuple[int, int, int]] = []
    real = engine.scan

    def observed(*args: object) -> object:
        seen.append(gc.get_threshold())
        return real(*args)  # type: ignore[arg-type]

    before = gc.get_threshold()
    monkeypatch.setattr(engine, "scan", observed)
    lint_run.lint_files(paths, RunOptions(jobs=1, cache=False))
    assert seen == [LINT_THRESHOLDS]
    assert gc.get_threshold() == before


def test_the_rules_collections_skip_the_scans_records_and_the_heap_is_given_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan's records live to the end of the run: frozen while the rules run, thawed when the lint returns."""
    paths = _package(tmp_path)
    frozen: list[int] = []
    real = engine.plan_fixes

    def observed(*args: object, **kwargs: object) -> object:
        frozen.append(gc.get_freeze_count())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "plan_fixes", observed)
    assert gc.get_freeze_count() == 0
    found = lint_run.lint_files(paths, RunOptions(jobs=1, cache=False))
    assert len(frozen) == 1 and frozen[0] > 0
    assert gc.get_freeze_count() == 0
    assert lint_run.lint_files(paths, RunOptions(jobs=1, cache=False)).findings == found.findings


def test_a_heap_the_process_froze_itself_stays_frozen(tmp_path: Path) -> None:
    """A server that froze its heap before forking keeps it frozen: the lint neither adds to it nor thaws it."""
    paths = _package(tmp_path)
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        lint_run.lint_files(paths, RunOptions(jobs=1, cache=False))
        assert gc.get_freeze_count() == before
    finally:
        gc.unfreeze()


def test_no_collection_walks_a_serving_files_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path)
    enabled: list[bool] = []
    from wnaudit.source.serving import reader

    real = reader.serving_facts

    def observed(pieces: object, module: str, is_package: bool) -> object:
        enabled.append(gc.isenabled())
        return real(pieces, module, is_package)  # type: ignore[arg-type]

    monkeypatch.setattr(reader, "serving_facts", observed)
    assert _index(tmp_path, None).facts(paths[0].parent / "serve.py") is not None
    assert enabled == [False] and gc.isenabled()


def _killed(task: object) -> object:
    os._exit(1)  # a worker killed (out of memory): the pool is broken for every later task


def test_a_killed_worker_breaks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _package(tmp_path)
    serve, mid = paths[0].parent / "serve.py", paths[0].parent / "mid.py"
    own = [_index(tmp_path, None).facts(serve), _index(tmp_path, None).facts(mid)]
    monkeypatch.setattr(ahead, "facts_in_worker", _killed)
    workers = ahead.ServingAhead(2)
    try:
        found = _index(tmp_path, workers)
        found.file_facts.read_ahead([serve])
        concurrent.futures.wait(list(workers._futures.values()))
        found.file_facts.read_ahead([mid])  # submitted to a broken pool: not an error
        assert [found.facts(serve), found.facts(mid)] == own
    finally:
        workers.close()


def test_the_workers_analysis_of_a_file_read_ahead_is_the_workspaces_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38: a worker reading a file ahead analyses it from the same parse; the workspace's ``first`` takes it."""
    from wnaudit.source.pipeline.analyse import facts_and_analysis
    from wnaudit.source.pipeline.link import new_workspace

    paths = _package(tmp_path)
    base = paths[0].parent / "base.py"
    monkeypatch.chdir(tmp_path)
    own = new_workspace().analyses.first(base)
    workspace = new_workspace()
    workers = ahead.ServingAhead(2, facts_and_analysis)
    try:
        found = _index(tmp_path, workers, IndexHooks(adopt_analysis=workspace.analyses.adopt_analysis))
        found.file_facts.read_ahead([base])
        concurrent.futures.wait(list(workers._futures.values()))
        assert found.facts(base) == _index(tmp_path, None).facts(base)
    finally:
        workers.close()
    analysed: list[str] = []
    monkeypatch.setattr(workspace.analyses, "_summarize_uncached", lambda *args: analysed.append(args[1]))
    assert workspace.analyses.first(base) == own
    assert analysed == []  # not analysed (parsed) again here


def test_the_flag_reader_takes_the_settings_of_a_file_a_worker_is_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file announced to the workers is not parsed again for its flags: the worker's facts carry its settings."""
    package = tmp_path / "voc"
    package.mkdir()
    config = package / "cfg.py"
    config.write_text("class Config:\n    fold_weight_norm = False\n")
    workers = ahead.ServingAhead(2)
    try:
        index = _index(tmp_path, workers)
        index.file_facts.read_ahead([config])
        concurrent.futures.wait(list(workers._futures.values()))
        parsed: list[str] = []
        monkeypatch.setattr(flags, "_python_settings", lambda path, data: parsed.append(path.name) or {})
        settings = index.file_facts._known_settings(config, config.read_bytes())
        parsed_for_facts = _parsed_by_the_index(monkeypatch)
        facts = index.facts(config)  # the index reads the file later: the worker's facts, kept with no cache too
    finally:
        workers.close()
    assert settings == {"fold_weight_norm": False}
    assert parsed == [] and parsed_for_facts == []
    assert facts is not None and facts.settings == settings
