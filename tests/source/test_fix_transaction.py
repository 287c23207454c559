"""Issue 21 item 1 / issue 23 item 3: a multi-file fix is one transaction, and what remains is decided from the disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wnaudit.common.options import RunOptions
from wnaudit.source import engine, lint_run
from wnaudit.source.pipeline import apply

BUGGY = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
    "torch.nn.utils.remove_weight_norm(conv)\n"
)


def _tree(root: Path, count: int = 3) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        path = root / f"m{index}.py"
        path.write_text(BUGGY)
        paths.append(path)
    return paths


def _fix(paths: list[Path]):  # type: ignore[no-untyped-def]
    return lint_run.lint_files(paths, RunOptions(jobs=1, cache=False, fix=True))


def test_an_interrupted_multi_file_fix_is_finished_by_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _tree(tmp_path / "src")
    expected = _fix(_tree(tmp_path / "reference"))
    fixed_text = (tmp_path / "reference" / "m0.py").read_text()
    assert fixed_text != BUGGY and not expected.findings

    def crash(step: str) -> None:  # after the first rename, before the second: the process dies
        if step == "applied_one":
            raise KeyboardInterrupt

    monkeypatch.setattr(apply, "_after_rename", crash)
    with pytest.raises(KeyboardInterrupt):
        _fix(paths)
    contents = [p.read_text() for p in paths]
    assert contents.count(fixed_text) == 1 and contents.count(BUGGY) == 2  # half-way: one file renamed
    assert list((tmp_path / "src").glob(".*.wnaudit-journal"))
    monkeypatch.setattr(apply, "_after_rename", None)
    again = _fix(paths)
    assert [p.read_text() for p in paths] == [fixed_text] * 3  # every file fixed, none half
    assert not again.findings and not again.errors
    assert not [p for p in (tmp_path / "src").iterdir() if p.name.startswith(".")]  # journal and staged files gone


def test_a_fix_interrupted_before_the_commit_point_leaves_every_file_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths = _tree(tmp_path / "src")
    real = apply.journal.write_journal

    def crash(owner, pairs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(apply.journal, "write_journal", crash)
    with pytest.raises(KeyboardInterrupt):
        _fix(paths)
    assert [p.read_text() for p in paths] == [BUGGY] * 3
    assert not [p for p in (tmp_path / "src").iterdir() if p.name.startswith(".")]  # staged files removed
    monkeypatch.setattr(apply.journal, "write_journal", real)
    assert not _fix(paths).findings


def test_a_planted_journal_is_refused_in_one_line_touching_nothing(tmp_path: Path) -> None:
    paths = _tree(tmp_path / "src")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a process id that no longer runs: its journal is not another fix in progress
    planted = tmp_path / "src" / f".{apply.OWNER_PREFIX}{dead.pid}{apply.journal.JOURNAL_SUFFIX}"
    planted.write_text('{"format": "wnaudit-journal", "version": 2, "owner": "x", "pid": %d, "files": []}' % dead.pid)
    result = _fix(paths)
    refused = [e for e in result.errors if e.path == str(planted)]
    assert len(refused) == 1 and "\n" not in refused[0].message
    assert planted.exists()


_FIXER = """
import sys
from pathlib import Path
from wnaudit.cli.command import run
sys.exit(run(["--fix", "--no-cache", sys.argv[1]]))
"""


def test_two_fixes_at_once_both_exit_0_when_every_file_ends_fixed(tmp_path: Path) -> None:
    """Issue 23 item 3: the exit status comes from the disk after the writes, not from the plan."""
    _tree(tmp_path / "src", count=40)
    env = {**os.environ, "PYTHONPATH": str(Path(engine.__file__).parents[2])}
    command = [sys.executable, "-c", _FIXER, str(tmp_path / "src")]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert all("remaining" not in out or " 0 remaining" in out for out, _ in outputs)
    assert not lint_run.lint_files(sorted((tmp_path / "src").glob("*.py")), RunOptions(jobs=1, cache=False)).findings


@pytest.mark.parametrize("which", ["journal", "staged"])
def test_links_planted_at_the_old_predictable_names_are_never_written_through(tmp_path: Path, which: str) -> None:
    """Issue 36: the journal's temporary name carried the pid (``...-PID.wnaudit-journal.new``), so did a staged file's."""
    paths = _tree(tmp_path / "src")
    outside = tmp_path / "outside"
    outside.mkdir()
    pid = os.getpid()
    if which == "journal":
        planted = [tmp_path / "src" / f".{apply.OWNER_PREFIX}{pid}{apply.journal.JOURNAL_SUFFIX}.new"]
    else:
        planted = [path.with_name(f".{path.name}.{pid}{apply.journal.STAGED_SUFFIX}") for path in paths]
    victims = []
    for number, link in enumerate(planted):
        victim = outside / f"victim{number}"
        victim.write_text("outside the tree")
        link.symlink_to(victim)
        victims.append(victim)
    result = _fix(paths)
    assert not result.errors and not result.findings
    assert [victim.read_text() for victim in victims] == ["outside the tree"] * len(victims)
    assert [p.read_text() for p in paths] != [BUGGY] * 3


def test_discard_journal_removes_a_refused_source_journal_and_the_fix_proceeds(tmp_path: Path) -> None:
    """Issue 36: the refusal says to rerun with --discard-journal; that must remove it."""
    paths = _tree(tmp_path / "src")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    planted = tmp_path / "src" / f".{apply.OWNER_PREFIX}{dead.pid}{apply.journal.JOURNAL_SUFFIX}"
    planted.write_text('{"format": "wnaudit-journal", "version": 2, "owner": "x", "pid": %d, "files": []}' % dead.pid)
    assert "--discard-journal" in _fix(paths).errors[0].message
    result = lint_run.lint_files(paths, RunOptions(jobs=1, cache=False, fix=True, discard_journal=True))
    assert not result.errors and not result.findings and not planted.exists()
    assert not [p for p in (tmp_path / "src").iterdir() if p.name.startswith(".")]
