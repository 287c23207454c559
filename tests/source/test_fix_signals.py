"""Issue 36: a multi-file source fix under signals and other writers.

Each signal test runs the real command line in a fresh process that signals
itself at one named step (deterministic: the handler runs right after
``os.kill`` returns).  After any signal at any step every file is exactly the
original or exactly the fixed text, the message says which, and no stray file
remains once the next run has finished.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from wnaudit.common import cache
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_run
from wnaudit.source.pipeline import apply, journals

BUGGY = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
    "torch.nn.utils.remove_weight_norm(conv)\n"
)
#: The finding inside a function: libcst's positions of the body hoist from its statements.
IN_FUNCTION = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
    "def build():\n    conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n    torch.nn.utils.remove_weight_norm(conv)\n"
    "    return conv\n"
)
#: What another writer puts in a file meanwhile: still a finding, other text.
OTHER = "# edited by another writer\n" + BUGGY

_DRIVER = r"""
import os, signal, sys
from wnaudit.common import journal
from wnaudit.source.pipeline import apply, journals

signum, step = getattr(signal, sys.argv[1]), sys.argv[2]
calls = {"n": 0}

def fire_on(count):
    calls["n"] += 1
    if calls["n"] == count:
        os.kill(os.getpid(), signum)

if step == "between-renames":  # after the first rename of three
    apply._after_rename = lambda name: fire_on(1) if name == "applied_one" else None
elif step == "commit-point":  # the journal is on disk, no file renamed yet
    real_write = journal.write_journal
    def write_journal(*args, **kwargs):
        written = real_write(*args, **kwargs)
        os.kill(os.getpid(), signum)
        return written
    journal.write_journal = write_journal
elif step == "staging":  # the second staged file is written and fsynced, the third not yet
    real_fsync = os.fsync
    def fsync(fd):
        real_fsync(fd)
        fire_on(2)
    os.fsync = fsync
elif step == "codegen":  # libcst generating a file's code for its positions, inside a function's body
    from libcst.metadata import position_provider
    state = position_provider.WhitespaceInclusivePositionProvidingCodegenState
    real_update = state._update_position
    def update(self, value):
        fire_on(40)
        return real_update(self, value)
    state._update_position = update

from wnaudit.cli import main
main(sys.argv[3:], prog_name="wnaudit")
"""


def _tree(root: Path, count: int = 3, text: str = BUGGY) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    paths = [root / f"m{index}.py" for index in range(count)]
    for path in paths:
        path.write_text(text)
    return paths


def _fixed_text(tmp_path: Path) -> str:
    reference = _tree(tmp_path / "reference", 1)
    lint_run.lint_files(reference, RunOptions(jobs=1, cache=False, fix=True))
    text = reference[0].read_text()
    assert text != BUGGY
    return text


def _run(signame: str, step: str, *args: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", _DRIVER, signame, step, "--no-cache", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _stray(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("signame, status", [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_between_the_renames_lets_the_set_finish_and_says_so(tmp_path, signame, status):
    paths = _tree(tmp_path / "src")
    fixed = _fixed_text(tmp_path)
    done = _run(signame, "between-renames", "--fix", tmp_path / "src")
    assert done.returncode == status, done.stderr
    assert [p.read_text() for p in paths] == [fixed] * 3  # the renames finished: every file fixed
    assert _stray(tmp_path / "src") == []  # journal and staged files gone
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"interrupted by {signame}: fixed 3 files" in lines[0], done.stderr
    assert all(p.name in lines[0] for p in paths)


def test_sigterm_at_the_commit_point_leaves_a_set_the_next_run_accepts(tmp_path):
    paths = _tree(tmp_path / "src")
    fixed = _fixed_text(tmp_path)
    done = _run("SIGTERM", "commit-point", "--fix", tmp_path / "src")
    assert done.returncode == 143, done.stderr
    assert [p.read_text() for p in paths] == [fixed] * 3 and "fixed 3 files" in done.stderr
    again = _run("SIGUSR1", "none", "--fix", tmp_path / "src")
    assert again.returncode == 0 and "refusing the journal" not in again.stderr, again.stdout + again.stderr
    assert _stray(tmp_path / "src") == []


def test_sigterm_while_libcst_generates_code_is_one_line_and_exit_143(tmp_path):
    paths = _tree(tmp_path / "src", text=IN_FUNCTION)
    done = _run("SIGTERM", "codegen", "--fix", tmp_path / "src")
    assert done.returncode == 143, done.stderr
    assert "Traceback" not in done.stderr and "KeyError" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "interrupted by SIGTERM" in done.stderr
    assert [p.read_text() for p in paths] == [IN_FUNCTION] * 3 and _stray(tmp_path / "src") == []


def test_the_staged_files_of_a_run_killed_while_staging_are_removed_by_the_next_run(tmp_path):
    paths = _tree(tmp_path / "src")
    fixed = _fixed_text(tmp_path)
    killed = _run("SIGKILL", "staging", "--fix", tmp_path / "src")
    assert killed.returncode == -signal.SIGKILL
    assert [p.read_text() for p in paths] == [BUGGY] * 3  # before the commit point: nothing replaced
    assert len(_stray(tmp_path / "src")) == 2  # what SIGKILL leaves: two staged files
    again = _run("SIGUSR1", "none", "--fix", tmp_path / "src")
    assert again.returncode == 0, again.stdout + again.stderr
    assert [p.read_text() for p in paths] == [fixed] * 3
    assert _stray(tmp_path / "src") == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_journal_above_the_tree_is_neither_honoured_nor_blocking(tmp_path):
    paths = _tree(tmp_path / "tree")
    fixed = _fixed_text(tmp_path)
    pid = _dead_pid()
    # A journal in the directory above, as a shared /tmp or a parent checkout may hold, naming a tree file.
    planted = tmp_path / f".{apply.OWNER_PREFIX}{pid}{apply.journal.JOURNAL_SUFFIX}"
    staged = paths[0].parent / f".{paths[0].name}.{pid}.wnaudit-staged"
    staged.write_text("print('not the fix')\n")
    document = {
        "format": "wnaudit-journal", "version": 2, "owner": planted.name[1 : -len(apply.journal.JOURNAL_SUFFIX)],
        "pid": pid, "files": [{"staged": f"tree/{staged.name}", "target": "tree/m0.py", "sha256": "0" * 64}],
    }
    planted.write_text(json.dumps(document))
    before = planted.read_bytes()
    done = _run("SIGUSR1", "none", "--fix", tmp_path / "tree")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "journal" not in done.stderr and "--discard-journal" not in done.stderr
    assert [p.read_text() for p in paths] == [fixed] * 3
    assert planted.read_bytes() == before  # outside the tree: not touched either
    assert _stray(tmp_path / "tree") == []  # the dead run's staged file inside the tree is removed


def _fix(paths: list[Path]):  # type: ignore[no-untyped-def]
    return lint_run.lint_files(paths, RunOptions(jobs=1, cache=False, fix=True))


def _audit(paths: list[Path]):  # type: ignore[no-untyped-def]
    return lint_run.lint_files(paths, RunOptions(jobs=1, cache=False))


def test_a_file_another_writer_changes_before_its_rename_is_left_alone(tmp_path, monkeypatch, caplog):
    paths = _tree(tmp_path / "src")
    fixed = _fixed_text(tmp_path)

    def other_writer(step: str) -> None:  # after the first rename: another writer edits the last file
        if step == "applied_one" and paths[2].read_text() == BUGGY:
            paths[2].write_text(OTHER)

    monkeypatch.setattr(apply, "_after_rename", other_writer)
    result = _fix(paths)
    assert [p.read_text() for p in paths] == [fixed, fixed, OTHER]  # the other writer's text is kept
    assert len(result.fixed) == 2 and [f.path for f in result.findings] == [str(paths[2])]
    assert any("changed by another writer" in r.getMessage() and str(paths[2]) in r.getMessage() for r in caplog.records)
    after = _audit(paths)
    assert [f.path for f in after.findings] == [f.path for f in result.findings] and not after.errors
    assert _stray(tmp_path / "src") == []


def test_a_single_file_another_writer_changes_before_the_rename_is_left_alone(tmp_path, monkeypatch):
    paths = _tree(tmp_path / "src", 1)
    real = apply.atomic_write_bytes

    def write(path, data, **kwargs):  # type: ignore[no-untyped-def]
        paths[0].write_text(OTHER)  # the other writer, between the lint and the write
        return real(path, data, **kwargs)

    monkeypatch.setattr(apply, "atomic_write_bytes", write)
    result = _fix(paths)
    assert paths[0].read_text() == OTHER and not result.fixed and len(result.findings) == 1


def test_a_file_with_two_hard_links_is_refused_and_the_counts_agree_with_an_audit_after(tmp_path, capsys, caplog):
    from wnaudit.cli.command import run

    paths = _tree(tmp_path / "src")
    os.link(paths[0], tmp_path / "src" / "linked.py")
    status = run(["--fix", "--no-cache", str(tmp_path / "src")])
    fix_out = capsys.readouterr().out
    assert paths[0].read_text() == BUGGY and (tmp_path / "src" / "linked.py").read_text() == BUGGY
    warned = [r.getMessage() for r in caplog.records if "hard links" in r.getMessage()]
    assert len(warned) == 1 and "not fixed" in warned[0]
    audit_status = run(["--no-cache", "--format", "json", str(tmp_path / "src")])
    remaining = len(json.loads(capsys.readouterr().out)["findings"])
    assert status == audit_status == 1 and remaining == 1
    assert f"(2 fixed, {remaining} remaining)" in fix_out, fix_out


def test_a_plain_audit_warns_of_a_source_fix_interrupted_between_its_renames(tmp_path, monkeypatch):
    paths = _tree(tmp_path / "src")

    def crash(step: str) -> None:
        if step == "applied_one":
            raise KeyboardInterrupt  # the process dies between two renames

    monkeypatch.setattr(apply, "_after_rename", crash)
    with pytest.raises(KeyboardInterrupt):
        _fix(paths)
    monkeypatch.setattr(apply, "_after_rename", None)
    monkeypatch.setattr(journals, "process_alive", lambda pid: False)  # this process wrote it: as if it had died
    audit = _audit(paths)
    warned = [e for e in audit.errors if "interrupted --fix" in e.message]
    assert len(warned) == 1 and "run wnaudit --fix" in warned[0].message and "\n" not in warned[0].message
    assert not _fix(paths).findings and _stray(tmp_path / "src") == []


@pytest.mark.parametrize("through_link", [False, True])
def test_an_audit_that_keeps_answers_warns_of_it_too(tmp_path, monkeypatch, cache_dir, through_link):
    """Cold and warm: the journal check is asked every run, in the inputs' real directories as their stamps say."""
    monkeypatch.setattr(cache, "RACY_NS", 0)  # the inputs' stamps vouch at once: the run keeps its answer
    paths = _tree(tmp_path / "src")
    monkeypatch.setattr(apply, "_after_rename", lambda step: _interrupt() if step == "applied_one" else None)
    with pytest.raises(KeyboardInterrupt):
        _fix(paths)
    monkeypatch.setattr(apply, "_after_rename", None)
    monkeypatch.setattr(journals, "process_alive", lambda pid: False)
    audited = paths
    if through_link:
        (tmp_path / "view").symlink_to(tmp_path / "src", target_is_directory=True)
        audited = [tmp_path / "view" / path.name for path in paths]
    for _ in range(2):
        audit = lint_run.lint_files(audited, RunOptions(jobs=1))
        assert len([e for e in audit.errors if "interrupted --fix" in e.message]) == 1


def _interrupt() -> None:
    raise KeyboardInterrupt


def _parent_after_link(root: Path) -> list[Path]:
    """Two files reached as ``proj/link/../m.py``: the kernel resolves the link first, so they sit in ``other/``."""
    (root / "other" / "sub").mkdir(parents=True)
    (root / "proj").mkdir()
    (root / "proj" / "link").symlink_to(root / "other" / "sub", target_is_directory=True)
    for name in ("m0.py", "m1.py"):
        (root / "other" / name).write_text(BUGGY)
    return [root / "proj" / "link" / ".." / name for name in ("m0.py", "m1.py")]


def test_the_journal_check_looks_where_a_parent_after_a_link_leads(tmp_path, monkeypatch, cache_dir):
    """With and without the cache, in the directory the kernel reaches (``other/``), not ``proj/``."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    paths = _parent_after_link(tmp_path)
    junk = tmp_path / "other" / f".{journals.OWNER_PREFIX}999999{apply.journal.JOURNAL_SUFFIX}"
    junk.write_text("junk")
    monkeypatch.setattr(journals, "process_alive", lambda pid: False)
    answers = [lint_run.lint_files(paths, RunOptions(jobs=1, cache=cached)).errors for cached in (False, True, True)]
    assert answers[0] == answers[1] == answers[2] and [e.path for e in answers[0]] == [str(junk)]


def test_a_fix_of_files_reached_through_a_parent_after_a_link(tmp_path):
    """Its journal goes where the files are: no ``ValueError`` (a target outside the journal's directory)."""
    paths = _parent_after_link(tmp_path)
    assert _fix(paths).fixed and not _audit(paths).findings
    assert _stray(tmp_path / "other") == []


def test_a_set_whose_every_file_changed_before_its_rename_leaves_no_journal(tmp_path, monkeypatch):
    paths = _tree(tmp_path / "src", 2)

    def other_writer(step: str) -> None:  # the journal is written: both files change before either rename
        if step == "journaled":
            for path in paths:
                path.write_text(OTHER)

    monkeypatch.setattr(apply, "_after_rename", other_writer)
    result = _fix(paths)
    assert [p.read_text() for p in paths] == [OTHER] * 2 and not result.fixed and not result.errors
    assert _stray(tmp_path / "src") == []
    assert not _fix(paths).errors  # nothing refused afterwards
