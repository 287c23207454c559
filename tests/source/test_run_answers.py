"""A whole run's answer kept between runs (``run_answers``): given again only while everything it rests on holds.

Every test here lets a stat vouch for bytes at once (``RACY_NS`` 0) and gives
each write a stat of its own (``_write``: a new mtime for the file and its
directory), so that the kept answer is what a warm run gives; each then
changes one thing the answer rests on and compares with a run that keeps
nothing.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import os
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.source.cache_files import entries_of, files_of, forge
from tests.source.test_derived_cache import BASE, LINT_STEPS, MID, SERVE, SERVE_FLAGGED
from tests.source.test_source_invariance import _module, _write_tree, module_spec
from wnaudit.common import cache
from wnaudit.common.config import Config
from wnaudit.common.options import RunOptions
from wnaudit.source import engine, lint_run, run_answers
from wnaudit.source.derived_cache import DerivedAnswers, Observations
from wnaudit.source.serving import walk

_TIMES = itertools.count(1_600_000_000)


def _write(path: Path, text: str) -> None:
    """Write, then give the file and its directory an mtime no other write had (a stat of their own)."""
    path.write_text(text)
    for changed in (path, path.parent):
        stamp = next(_TIMES) * 1_000_000_000
        os.utime(changed, ns=(stamp, stamp))


def _answer(paths: list[Path], cache_on: bool = True, config: Config | None = None) -> list[tuple]:
    options = RunOptions(config=config or Config(), jobs=1, cache=cache_on)
    result = lint_run.lint_files(paths, options)
    return [(f.path, f.code, f.line, f.message) for f in result.findings] + [(e.path, e.message) for e in result.errors]


@pytest.fixture
def scans(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Stats vouch at once; each run that ran its stages (not given a kept answer) appends to the list."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    ran: list[int] = []
    real = engine.scan

    def counted(*args: object) -> engine.Scan:
        ran.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "scan", counted)
    return ran


def _voc(root: Path, serve: str = SERVE) -> Path:
    package = root / "voc"
    package.mkdir(parents=True)
    for name, text in {"__init__.py": "", "base.py": BASE, "mid.py": MID, "serve.py": serve}.items():
        _write(package / name, text)
    return package


def _warm(paths: list[Path], scans: list[int], **kwargs: object) -> list[tuple]:
    """The cold answer, checked to be given again by a warm run that runs no stage."""
    cold = _answer(paths, **kwargs)  # type: ignore[arg-type]
    scans.clear()
    assert _answer(paths, **kwargs) == cold  # type: ignore[arg-type]
    assert scans == [], "the warm run ran its stages: no answer was kept"
    return cold


def test_a_warm_run_gives_the_kept_answer_without_running_a_stage(tmp_path: Path, scans: list[int]) -> None:
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    assert [item[1] for item in _warm(paths, scans)] == ["WN101"]
    assert _answer(paths) == _answer(paths, cache_on=False)


EDITS = {
    # serve.py alone is linted: each edit is of something it rests on that is not on the command line.
    "a dependency's body": lambda p: _write(p / "base.py", BASE.replace("weight_norm(nn.Conv1d(2, 2, 3))", "nn.Conv1d(2, 2, 3)")),
    # Its imports and the names it binds stay: only its bytes, read for the class, say Mid is no Base now.
    "an intermediate class's body": lambda p: _write(p / "mid.py", MID.replace("class Mid(Base):", "class Mid(object):")),
    "a dependency's import": lambda p: _write(p / "base.py", BASE.replace("parametrizations import", "import")),
    "a module appearing": lambda p: (_write(p / "mid.py", MID.replace(".base", ".compat")), _write(p / "compat.py", "")),
    "a dependency removed": lambda p: (p / "mid.py").unlink(),
    "the linted file": lambda p: _write(p / "serve.py", SERVE.replace("remove_weight_norm(Mid().conv)", "pass")),
    "the linted file, same size": lambda p: _write(p / "serve.py", SERVE.replace("remove_weight_norm(Mid().conv)", f"{'str(Mid().conv)':30}")),
    # The same size, imports and names: only the input's own bytes tell (its stat is not the one kept).
    "the linted file, same facts": lambda p: _write(p / "serve.py", SERVE.replace("fold():\n    remove_weight_norm", "fold():\n    remove_weight_nor_")),
    "the linted file removed": lambda p: (p / "serve.py").unlink(),
}


#: With WN110 on, its index reads every project file; off, the other rules read only what they resolve into.
RULES = {"all rules": Config(), "WN110 off": Config(ignore=("WN110",))}


@pytest.mark.parametrize("rules", sorted(RULES))
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_change_the_answer_rests_on_is_seen(tmp_path: Path, scans: list[int], edit: str, rules: str) -> None:
    package = _voc(tmp_path)
    serve, config = [package / "serve.py"], RULES[rules]
    before = _warm(serve, scans, config=config)
    EDITS[edit](package)
    after = _answer(serve, config=config)
    assert after == _answer(serve, cache_on=False, config=config)
    assert after != before


def test_an_input_the_run_could_not_read_is_read_again_when_it_changes(tmp_path: Path, scans: list[int]) -> None:
    """Too big to lint, then small enough: only the input's own stat key and digest say so (nothing else read it)."""
    package = _voc(tmp_path)
    serve = package / "serve.py"
    helpers = [package / f"helper_{index}.py" for index in range(20)]  # unchanged inputs around it
    for index, helper in enumerate(helpers):
        _write(helper, f"VALUE = {index}\n")
    config = Config(max_source_bytes=len(SERVE) - 1)
    (error,) = _warm([serve, *helpers], scans, config=config)
    assert error[0] == str(serve) and "too" in error[1]
    _write(serve, SERVE.replace("    remove_weight_norm(Mid().conv)\n", "    remove_weight_norm(Mid().conv)"))
    assert _answer([serve, *helpers], config=config) == _answer([serve, *helpers], cache_on=False, config=config)
    assert [item[1] for item in _answer([serve, *helpers], config=config)] == ["WN101"]


def test_a_shipped_config_that_turns_the_fold_s_flag_on_is_seen(tmp_path: Path, scans: list[int]) -> None:
    project = tmp_path / "proj"  # its own root: the cache's files (under ``tmp_path``) are no configs of it
    package = _voc(project, SERVE_FLAGGED)
    _write(project / "pyproject.toml", "[project]\nname = 'voc'\n")
    config = package / "config.yaml"
    _write(config, "fold_weight_norm: false\n")
    paths = sorted(package.glob("*.py"))
    assert "WN110" in [item[1] for item in _warm(paths, scans)]
    _write(config, "fold_weight_norm: true\n")
    assert "WN110" not in [item[1] for item in _answer(paths)]
    assert _answer(paths) == _answer(paths, cache_on=False)


@pytest.mark.parametrize("shape", ["module", "package"])
def test_a_declared_entry_defined_later_is_seen(tmp_path: Path, scans: list[int], shape: str) -> None:
    """The entry's module is looked for through the project's observed questions (a config error until it exists)."""
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    config = Config(root=tmp_path, serving=("voc.app:load",))
    if shape == "package":
        (package / "app").mkdir()  # a directory, not yet a package with the entry
    assert any("no module 'voc.app'" in item[-1] for item in _warm(paths, scans, config=config))
    entry = package / ("app.py" if shape == "module" else "app/__init__.py")
    _write(entry, "from voc.mid import Mid\n\n\ndef load():\n    return Mid()\n")
    assert _answer(paths, config=config) == _answer(paths, cache_on=False, config=config)
    assert not any("no module" in item[-1] for item in _answer(paths, config=config))


def test_another_question_is_another_answer(tmp_path: Path, scans: list[int]) -> None:
    """Another configuration or another set of inputs is not answered by a kept run."""
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    _warm(paths, scans)
    assert _answer(paths, config=Config(ignore=("WN101",))) == []
    assert _answer(paths[:2]) == _answer(paths[:2], cache_on=False)


def test_a_touched_input_with_the_same_bytes_keeps_the_answer(tmp_path: Path, scans: list[int]) -> None:
    """A new stat alone: the input is read and its digest still vouches; many touched at once: the run is done again."""
    package = _voc(tmp_path)
    for index in range(20):
        _write(package / f"helper_{index}.py", f"VALUE = {index}\n")
    paths = sorted(package.glob("*.py"))
    cold = _warm(paths, scans)
    _write(package / "helper_0.py", "VALUE = 0\n")
    assert _answer(paths) == cold and scans == []
    for path in paths:
        _write(path, path.read_text())
    assert _answer(paths) == cold and scans == [1]
    assert _answer(paths) == cold and scans == [1]  # kept again with the new stats


def test_a_kept_answer_given_again_keeps_the_new_stats_of_touched_files(
    tmp_path: Path, scans: list[int], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Files the answer rests on were touched (same bytes): the check reads them once, and the record keeps their stats."""
    from wnaudit.source import derived_cache

    package = _voc(tmp_path)
    serve = [package / "serve.py"]
    cold = _warm(serve, scans)
    for name in ("base.py", "mid.py"):
        _write(package / name, (package / name).read_text())
    reads: list[str] = []
    real = derived_cache.read_source_file
    monkeypatch.setattr(derived_cache, "read_source_file", lambda path: reads.append(os.path.basename(path)) or real(path))
    assert _answer(serve) == cold and scans == []
    assert sorted(reads) == ["base.py", "mid.py"]
    reads.clear()
    assert _answer(serve) == cold and scans == []
    assert reads == []


def test_the_warnings_of_the_run_are_given_again(
    tmp_path: Path, scans: list[int], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(walk, "MAX_PROJECT_FILES", 2)  # WN110's search reads part of the project, and says so
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    with caplog.at_level(logging.WARNING, logger="wnaudit"):
        cold = _answer(paths)
        said = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
        assert any("more than 2 Python files" in message for _, _, message in said)
        caplog.clear()
        scans.clear()
        assert _answer(paths) == cold and scans == []
        assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == said


HELPER_PLAIN = BASE.replace("weight_norm(nn.Conv1d(2, 2, 3))", "nn.Conv1d(2, 2, 3)")
SERVE_HELPER = "from torch.nn.utils import remove_weight_norm\n\nfrom helper import Base\n\n\ndef fold():\n    remove_weight_norm(Base().conv)\n"


def _link_tree(root: Path) -> tuple[Path, Path]:
    """``proj/helper.py`` applies the weight norm WN101 sees removed; ``elsewhere/helper.py`` does not."""
    project, elsewhere = root / "proj", root / "elsewhere"
    for directory in (project, elsewhere):
        directory.mkdir()
    _write(project / "helper.py", BASE)
    _write(elsewhere / "helper.py", HELPER_PLAIN)
    return project, elsewhere


def _directory_becomes_a_link(project: Path, elsewhere: Path) -> Iterator[list[Path]]:
    (project / "pkg").mkdir()
    _write(project / "pkg" / "__init__.py", "")
    _write(project / "pkg" / "serve.py", SERVE_HELPER)
    yield [project / "pkg" / "serve.py"]
    os.rename(project / "pkg", elsewhere / "pkg")  # the files keep their stats
    (project / "pkg").symlink_to(elsewhere / "pkg")


def _input_becomes_a_link(project: Path, elsewhere: Path) -> Iterator[list[Path]]:
    fillers = [project / f"f{index}.py" for index in range(20)]  # one input read again is not a run again
    for index, filler in enumerate(fillers):
        _write(filler, f"X = {index}\n")
    for directory in (project, elsewhere):
        _write(directory / "serve.py", SERVE_HELPER)
    yield [project / "serve.py", *fillers]
    (project / "serve.py").unlink()
    (project / "serve.py").symlink_to(elsewhere / "serve.py")  # the same bytes, another directory's helper


def _linked_input_retargeted(project: Path, elsewhere: Path) -> Iterator[list[Path]]:
    _write(project / "serve.py", SERVE_HELPER)
    os.link(project / "serve.py", elsewhere / "serve.py")  # one inode: the same stat either way
    (project / "links").mkdir()
    (project / "links" / "serve.py").symlink_to(project / "serve.py")
    yield [project / "links" / "serve.py"]
    (project / "links" / "serve.py").unlink()
    (project / "links" / "serve.py").symlink_to(elsewhere / "serve.py")


def _dangling_link_gets_its_target(project: Path, elsewhere: Path) -> Iterator[list[Path]]:
    (project / "helper.py").unlink()
    (project / "helper.py").symlink_to(elsewhere / "missing.py")
    (project / "pkg").mkdir()
    _write(project / "pkg" / "__init__.py", "")
    _write(project / "pkg" / "serve.py", SERVE_HELPER)
    stamp = next(_TIMES) * 1_000_000_000
    os.utime(project, ns=(stamp, stamp))
    yield [project / "pkg" / "serve.py"]
    _write(elsewhere / "missing.py", BASE)  # the directory holding the link is not changed


LINK_CHANGES = {
    "a directory becomes a link": _directory_becomes_a_link,
    "an input becomes a link": _input_becomes_a_link,
    "a linked input retargeted": _linked_input_retargeted,
    "a dangling link gets its target": _dangling_link_gets_its_target,
}


@pytest.mark.parametrize("rules", sorted(RULES))
@pytest.mark.parametrize("change", sorted(LINK_CHANGES))
def test_a_link_that_changes_where_a_file_resolves_is_seen(tmp_path: Path, scans: list[int], change: str, rules: str) -> None:
    """Found by a review: the files keep their stats and bytes; only where a path leads changed."""
    project, elsewhere = _link_tree(tmp_path)
    config = dataclasses.replace(RULES[rules], root=project)
    steps = LINK_CHANGES[change](project, elsewhere)
    paths = next(steps)
    _answer(paths, config=config)
    _answer(paths, config=config)
    next(steps, None)
    assert _answer(paths, config=config) == _answer(paths, cache_on=False, config=config)


@pytest.mark.parametrize("shape", ["missing", "a directory"])
def test_a_run_with_an_input_that_is_no_file_keeps_no_answer(tmp_path: Path, scans: list[int], shape: str) -> None:
    """Its error names what the path is (no such file, not a directory, a FIFO...): no stat key vouches for that."""
    odd = tmp_path / "odd.py"
    if shape == "a directory":
        odd.mkdir()
    paths = [odd, _voc(tmp_path) / "serve.py"]
    _answer(paths)
    scans.clear()
    _answer(paths)
    assert scans == [1]


def test_a_run_that_met_a_link_keeps_no_answer(tmp_path: Path, scans: list[int]) -> None:
    package = _voc(tmp_path)
    (package / "alias.py").symlink_to(package / "base.py")
    paths = [package / "serve.py"]
    _answer(paths)
    scans.clear()
    _answer(paths)
    assert scans == [1]


@pytest.mark.parametrize("asked", [{"fix": True}, {"diff": True}, {"cache": False}])
def test_a_run_that_writes_or_keeps_nothing_gives_no_kept_answer(tmp_path: Path, scans: list[int], asked: dict) -> None:
    package = _voc(tmp_path)
    paths = [package / "serve.py"]
    _warm(paths, scans)
    options = RunOptions(jobs=1, **{"cache": True, **asked})
    lint_run.lint_files(paths, options)
    assert scans  # its stages ran (a fix runs them again after writing)


def test_a_damaged_answer_is_never_believed(tmp_path: Path, scans: list[int], cache_dir: Path) -> None:
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    cold = _warm(paths, scans)
    for record in files_of(cache_dir, "derived"):
        document = json.loads(json.dumps(entries_of(record)[record.stem]))
        for answer in document["runs"].values():
            answer["findings"] = [["x.py", "WN101", "forged", "yes", "warning", None, None, None, None, None]]
        forge(record, {record.stem: document})
    assert _answer(paths) == cold and scans == [1]


def test_a_file_that_changed_during_a_run_drops_the_answers_that_rested_on_it(tmp_path: Path) -> None:
    """This run read other bytes than the record had seen: earlier runs' answers no longer rest on the record."""
    module = tmp_path / "m.py"
    module.write_text("x = 1\n")
    answers = DerivedAnswers(None, "key")
    answers.observed = Observations(run_reads={str(module): "old"})
    answers.runs = {"earlier": {"format": 1}}
    answers.keep_run("this", {"format": 1})
    answers.save(Observations(run_reads={str(module): "new"}))
    assert list(answers.runs) == ["this"]
    unchanged = DerivedAnswers(None, "key")
    unchanged.observed = Observations(run_reads={str(module): "same"})
    unchanged.runs = {"earlier": {"format": 1}}
    unchanged.save(Observations(run_reads={str(module): "same"}))
    assert list(unchanged.runs) == ["earlier"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    specs=st.lists(module_spec, min_size=2, max_size=4), steps=LINT_STEPS,
)
def test_kept_runs_equal_fresh_ones_through_edits_and_subsets(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, specs: list, steps: list,
) -> None:
    """Any sequence of lints of subsets and edits, every stat a vouching one: a kept answer is the fresh one."""
    root = tmp_path_factory.mktemp("runs")
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(root / "cache"))
    monkeypatch.setattr(cache, "RACY_NS", 0)
    files = _write_tree(root / "tree", specs)
    for path in [*files, *files[0].parent.iterdir()]:
        _write(path, path.read_text())
    for step in [*steps, ("lint", list(range(len(files)))), ("lint", list(range(len(files))))]:
        if step[0] == "lint":
            chosen = [files[i] for i in step[1] if i < len(files)]  # a deleted file is an input error
            assert _answer(chosen) == _answer(chosen, cache_on=False)
        elif step[0] == "edit" and step[1] < len(files):
            _write(files[step[1]], _module(step[1], step[2], len(files)))
        elif step[0] == "delete" and step[1] < len(files):
            files[step[1]].unlink(missing_ok=True)
            _write(files[step[1]].parent / "__init__.py", "")  # the directory's stat of its own


def test_an_input_that_changed_during_the_run_keeps_no_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its stat after the run is not the one taken before: the bytes the run read are not known to be these."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    module, other = tmp_path / "m.py", tmp_path / "n.py"
    _write(module, "x = 1\n")
    _write(other, "y = 1\n")
    stamped = run_answers.stamp_inputs([module, other])
    assert stamped is not None
    keys = run_answers.input_keys([module, other], stamped)
    assert keys is not None and run_answers.inputs_hold([module, other], keys, stamped.identities, stamped)
    _write(module, "x = 2\n")
    assert run_answers.input_keys([module, other], stamped) is None
    assert run_answers.input_keys([module, other], stamped, lambda path: "the digest the run read") is None
    assert not run_answers.inputs_hold([module, other], keys, stamped.identities, stamped)
