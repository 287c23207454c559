"""Byte facts of the inputs computed ahead in the ``-j`` workers (``pipeline/scan._FactsAhead``, issue 21).

A cold run over many files has the workers compute each input's byte facts
(the import statements, the API flags) while the prefilter goes through the
files; the prefilter takes them by content digest.  The answers are the ones
the main process computes itself, and a run with kept answers starts no such work.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.source.test_derived_cache import _answer, _voc
from wnaudit.common.options import RunOptions
from wnaudit.source import content, lint_run
from wnaudit.source.pipeline import scan


def _starts(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What each run's start of byte facts ahead gives from now on (None: nothing computed ahead)."""
    started: list[object] = []
    real = scan._FactsAhead.start

    def counted(files: object, analyses: object) -> object:
        found = real(files, analyses)  # type: ignore[arg-type]
        started.append(found)
        return found

    monkeypatch.setattr(scan._FactsAhead, "start", counted)
    return started


def _computed_here(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The byte facts the main process computes from now on (forked workers count in their own copy)."""
    computed: list[bytes] = []
    real = content.facts_of  # what the store computes byte facts with (``facts/kinds.CONTENT``)

    def counted(data: bytes) -> object:
        computed.append(data)
        return real(data)

    monkeypatch.setattr(content, "facts_of", counted)
    return computed


def _many(root: Path) -> list[Path]:
    package = _voc(root)
    for index in range(12):
        (package / f"extra{index}.py").write_text(f"from .base import Base\n\nVALUE = {index}\n")
    return sorted(package.glob("*.py"))


def test_a_cold_run_takes_its_byte_facts_from_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _many(tmp_path)
    monkeypatch.setattr(scan, "AHEAD_FILES", 4)
    monkeypatch.setattr(scan, "AHEAD_CHUNK", 3)
    alone = _answer(paths, cache=False)  # jobs=1: no workers, every fact computed here
    computed = _computed_here(monkeypatch)
    result = lint_run.lint_files(paths, RunOptions(jobs=2, cache=False))
    answer = [(f.path, f.code, f.line, f.message) for f in result.findings] + sorted((e.path, e.message) for e in result.errors)
    assert answer == alone
    assert answer  # findings that rest on cross-file facts (the import scan followed ``.base``)
    assert computed == []  # every input's facts came from the workers


def test_a_run_with_kept_answers_computes_nothing_ahead(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _many(tmp_path)
    monkeypatch.setattr(scan, "AHEAD_FILES", 4)
    submitted = _starts(monkeypatch)
    lint_run.lint_files(paths, RunOptions(jobs=2))
    lint_run.lint_files(paths, RunOptions(jobs=2))
    assert submitted[0] is not None and submitted[1] is None  # the first run had nothing kept; the second has


def _failing(task: object) -> object:
    raise MemoryError("a worker out of memory")


def test_a_failed_chunk_is_computed_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _many(tmp_path)
    alone = _answer(paths, cache=False)
    monkeypatch.setattr(scan, "AHEAD_FILES", 4)
    monkeypatch.setattr(scan, "facts_of_paths", _failing)  # the forked workers run it too
    computed = _computed_here(monkeypatch)
    result = lint_run.lint_files(paths, RunOptions(jobs=2, cache=False))
    answer = [(f.path, f.code, f.line, f.message) for f in result.findings] + sorted((e.path, e.message) for e in result.errors)
    assert answer == alone
    assert len(computed) >= len(paths)


def test_a_dropped_record_with_cached_facts_computes_nothing_ahead(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new module drops the kept answers, but the cache still holds every other file's byte facts: no work ahead."""
    paths = _many(tmp_path)
    monkeypatch.setattr(scan, "AHEAD_FILES", 4)
    started = _starts(monkeypatch)
    first = lint_run.lint_files(paths, RunOptions(jobs=2))
    (paths[0].parent / "added.py").write_text("x = 1\n")  # the package's listing changes: the record is checked and dropped
    again = lint_run.lint_files(paths, RunOptions(jobs=2))
    assert [f.message for f in again.findings] == [f.message for f in first.findings]
    assert started[0] is not None and started[1] is None
