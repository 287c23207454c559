"""The generic journal of a multi-file fix honours only what wnaudit itself started (issue 23, item 1)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wnaudit.common import journal as journal_module
from wnaudit.common.journal import (
    JournalRefused,
    apply_journal,
    check_files,
    discard_journal,
    finish,
    journal_path,
    read_journal,
    staged_name,
    staged_path,
    write_journal,
)

OWNER = "model.index.json"
TARGETS = {OWNER, "a.bin", "b.bin"}


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file() and not p.is_symlink()}


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _model(directory: Path) -> Path:
    for name in TARGETS:
        (directory / name).write_bytes(b"old " + name.encode())
    (directory / "config.json").write_text('{"auto_map": "safe"}')
    return directory / OWNER


def _stage(directory: Path, target: str, content: bytes, pid: int | None = None) -> Path:
    staged = staged_path(directory / target, pid)
    staged.write_bytes(content)
    return staged


def _plant(directory: Path, files: list[dict[str, Any]], **fields: Any) -> Path:
    """A journal a hostile directory could carry (fields default to a well-formed one)."""
    document = {"format": "wnaudit-journal", "version": 2, "owner": OWNER, "pid": os.getpid(), "files": files}
    document.update(fields)
    path = journal_path(directory / OWNER)
    path.write_text(json.dumps(document))
    return path


def _entry(staged: str, target: str, content: bytes) -> dict[str, str]:
    return {"staged": staged, "target": target, "sha256": hashlib.sha256(content).hexdigest()}


def _refused(directory: Path, targets: set[str] = TARGETS) -> str:
    before = _snapshot(directory)
    with pytest.raises(JournalRefused) as caught:
        finish(directory / OWNER, targets)
    assert _snapshot(directory) == before, "a refused journal touched a file"
    message = str(caught.value)
    assert "\n" not in message and "--discard-journal" in message
    return message


def test_a_journal_wnaudit_wrote_is_finished(tmp_path):
    owner = _model(tmp_path)
    pairs = [(_stage(tmp_path, name, b"new " + name.encode()), tmp_path / name) for name in ("a.bin", OWNER)]
    write_journal(owner, pairs)
    assert finish(owner, TARGETS) is not None
    assert (tmp_path / "a.bin").read_bytes() == b"new a.bin"
    assert (tmp_path / OWNER).read_bytes() == b"new " + OWNER.encode()
    assert not journal_path(owner).exists()
    assert not list(tmp_path.glob("*.wnaudit-staged"))


def test_a_journal_interrupted_after_one_rename_is_finished(tmp_path):
    owner = _model(tmp_path)
    pairs = [(_stage(tmp_path, name, b"new " + name.encode()), tmp_path / name) for name in ("a.bin", "b.bin")]
    journal = write_journal(owner, pairs)
    os.replace(*pairs[0])  # the crash came after the first rename
    finish(owner, TARGETS)
    assert (tmp_path / "a.bin").read_bytes() == b"new a.bin"
    assert (tmp_path / "b.bin").read_bytes() == b"new b.bin"
    assert not journal.path.exists()


def test_a_journal_pairing_a_staged_file_with_config_json_is_refused(tmp_path):
    _model(tmp_path)
    payload = b'{"auto_map": "evil"}'
    staged = _stage(tmp_path, "config.json", payload)
    _plant(tmp_path, [_entry(staged.name, "config.json", payload)])
    assert "config.json" in _refused(tmp_path)
    assert (tmp_path / "config.json").read_text() == '{"auto_map": "safe"}'


def test_a_journal_naming_another_models_index_and_shard_is_refused(tmp_path):
    _model(tmp_path)
    (tmp_path / "other.index.json").write_text("{}")
    (tmp_path / "other.bin").write_bytes(b"other")
    files = []
    for target in ("other.index.json", "other.bin"):
        staged = _stage(tmp_path, target, b"planted")
        files.append(_entry(staged.name, target, b"planted"))
    _plant(tmp_path, files)
    _refused(tmp_path)


def test_another_owners_journal_copied_under_this_name_is_refused(tmp_path):
    _model(tmp_path)
    staged = _stage(tmp_path, "a.bin", b"x")
    _plant(tmp_path, [_entry(staged.name, "a.bin", b"x")], owner="other.index.json")
    assert "belongs to" in _refused(tmp_path)


@pytest.mark.parametrize(
    "name",
    ["a.bin\0", "/etc/passwd", "../a.bin", "sub/../a.bin", "./a.bin", "a.bin\n", "", "outside/a.bin"],
    ids=["nul", "absolute", "dotdot", "inner-dotdot", "dot", "newline", "empty", "symlinked-dir"],
)
@pytest.mark.parametrize("field", ["staged", "target"])
def test_names_that_are_not_plain_relative_names_inside_the_directory_are_refused(tmp_path, name, field):
    _model(tmp_path)
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (outside / "a.bin").write_bytes(b"outside")
    (tmp_path / "outside").symlink_to(outside)
    staged = _stage(tmp_path, "a.bin", b"x")
    entry = _entry(staged.name, "a.bin", b"x")
    entry[field] = name
    if field == "target" and name:  # a staged file exactly where wnaudit would put it for that target
        entry["staged"] = staged_name(name, os.getpid())
        with contextlib.suppress(OSError, ValueError):
            (tmp_path / entry["staged"]).write_bytes(b"x")
    _plant(tmp_path, [entry])
    _refused(tmp_path, TARGETS | {name})  # refused even when the caller would accept the target
    assert (outside / "a.bin").read_bytes() == b"outside"


@pytest.mark.parametrize("staged", [".a.bin.1.wnaudit-staged", "config.json", ".b.bin.{pid}.wnaudit-staged"])
def test_a_staged_name_that_is_not_the_targets_exact_staged_name_is_refused(tmp_path, staged):
    _model(tmp_path)
    name = staged.format(pid=os.getpid())
    (tmp_path / name).write_bytes(b"x")
    _plant(tmp_path, [_entry(name, "a.bin", b"x")])
    assert "staged name" in _refused(tmp_path)


def test_a_staged_file_whose_digest_differs_is_refused(tmp_path):
    _model(tmp_path)
    staged = _stage(tmp_path, "a.bin", b"tampered")
    _plant(tmp_path, [_entry(staged.name, "a.bin", b"what wnaudit wrote")])
    assert "digest" in _refused(tmp_path)


def test_an_absent_staged_file_whose_target_differs_is_refused(tmp_path):
    _model(tmp_path)
    _plant(tmp_path, [_entry(staged_name("a.bin", os.getpid()), "a.bin", b"never written")])
    assert "digest" in _refused(tmp_path)


def test_a_staged_symlink_is_refused(tmp_path):
    _model(tmp_path)
    staged = staged_path(tmp_path / "a.bin")
    staged.symlink_to(tmp_path / "config.json")
    _plant(tmp_path, [_entry(staged.name, "a.bin", (tmp_path / "config.json").read_bytes())])
    assert "regular file" in _refused(tmp_path)


def test_a_journal_of_a_running_process_is_refused(tmp_path):
    _model(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        staged = _stage(tmp_path, "a.bin", b"x", pid=child.pid)
        _plant(tmp_path, [_entry(staged.name, "a.bin", b"x")], pid=child.pid)
        before = _snapshot(tmp_path)
        with pytest.raises(JournalRefused, match="still running.*wait for that run to finish"):
            finish(tmp_path / OWNER, TARGETS)
        assert _snapshot(tmp_path) == before
    finally:
        child.kill()
        child.wait()


def test_a_journal_of_a_dead_process_is_finished(tmp_path):
    _model(tmp_path)
    pid = _dead_pid()
    staged = _stage(tmp_path, "a.bin", b"x", pid=pid)
    _plant(tmp_path, [_entry(staged.name, "a.bin", b"x")], pid=pid)
    finish(tmp_path / OWNER, TARGETS)
    assert (tmp_path / "a.bin").read_bytes() == b"x"


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe", b"not json", b"[" * 100_000, b'{"format": "wnaudit-journal", "version": 1, "files": []}', b"[]",
     b'{"format": "wnaudit-journal", "version": 2, "owner": "model.index.json", "pid": true, "files": []}'],
    ids=["not-utf8", "not-json", "deep", "old-version", "list", "bool-pid"],
)
def test_a_journal_that_is_not_one_of_ours_is_refused_in_one_line(tmp_path, content):
    _model(tmp_path)
    journal_path(tmp_path / OWNER).write_bytes(content)
    _refused(tmp_path)


def test_a_journal_that_is_a_symlink_or_too_big_is_refused(tmp_path, monkeypatch):
    _model(tmp_path)
    journal_path(tmp_path / OWNER).symlink_to(tmp_path / "config.json")
    _refused(tmp_path)
    journal_path(tmp_path / OWNER).unlink()
    monkeypatch.setattr(journal_module, "MAX_JOURNAL_BYTES", 10)
    staged = _stage(tmp_path, "a.bin", b"x")
    _plant(tmp_path, [_entry(staged.name, "a.bin", b"x")])
    assert "too big" in _refused(tmp_path)


def test_duplicate_targets_are_refused(tmp_path):
    _model(tmp_path)
    staged = _stage(tmp_path, "a.bin", b"x")
    _plant(tmp_path, [_entry(staged.name, "a.bin", b"x")] * 2)
    assert "twice" in _refused(tmp_path)


def test_discard_removes_only_the_journal(tmp_path):
    _model(tmp_path)
    staged = _stage(tmp_path, "config.json", b"evil")
    path = _plant(tmp_path, [_entry(staged.name, "config.json", b"evil")])
    assert discard_journal(tmp_path / OWNER) == path
    assert not path.exists() and staged.exists()
    assert (tmp_path / "config.json").read_text() == '{"auto_map": "safe"}'
    assert read_journal(tmp_path / OWNER, TARGETS) is None


def test_no_journal_is_nothing_to_do(tmp_path):
    owner = _model(tmp_path)
    assert finish(owner, TARGETS) is None
    assert discard_journal(owner) is None


def test_write_refuses_a_staged_file_not_named_for_its_target(tmp_path):
    owner = _model(tmp_path)
    wrong = tmp_path / ".a.bin.staged"
    wrong.write_bytes(b"x")
    with pytest.raises(ValueError):
        write_journal(owner, [(wrong, tmp_path / "a.bin")])
    assert not journal_path(owner).exists()


def test_the_journal_lives_beside_the_real_owner(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    owner = _model(real)
    link = tmp_path / "link.index.json"
    link.symlink_to(owner)
    assert journal_path(link) == journal_path(owner)


def test_apply_reports_each_step(tmp_path):
    owner = _model(tmp_path)
    journal = write_journal(owner, [(_stage(tmp_path, "a.bin", b"n"), tmp_path / "a.bin")])
    check_files(journal)
    steps: list[str] = []
    assert apply_journal(journal, steps.append) == 1
    assert steps == ["applied_one", "applied"]


def test_a_link_planted_at_the_journals_name_is_replaced_not_written_through(tmp_path):
    """Issue 36: wnaudit's own files are created exclusively; a link at their name is never followed."""
    owner = _model(tmp_path)
    victim = tmp_path.parent / f"{tmp_path.name}-victim"
    victim.write_text("outside the tree")
    journal_path(owner).symlink_to(victim)
    written = write_journal(owner, [(_stage(tmp_path, "a.bin", b"new"), tmp_path / "a.bin")])
    assert victim.read_text() == "outside the tree"
    assert not written.path.is_symlink() and json.loads(written.path.read_text())["owner"] == OWNER
    assert os.stat(written.path).st_mode & 0o777 == 0o600


def test_staged_names_cannot_be_predicted(tmp_path):
    names = {staged_path(tmp_path / "a.bin").name for _ in range(20)}
    assert len(names) == 20 and all(f".a.bin.{os.getpid()}." in name for name in names)


def test_staged_files_of_dead_or_long_gone_runs_are_removed_and_others_kept(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    old = _stage(tmp_path, "a.bin", b"x", dead)
    reused = _stage(tmp_path, "b.bin", b"x", alive)  # a live pid, but a day old: the pid was reused
    os.utime(reused, (0, 0))
    running = _stage(tmp_path, OWNER, b"x", alive)  # another fix in progress
    mine = _stage(tmp_path, "config.json", b"x")
    assert journal_module.remove_dead_staged(tmp_path) == 2
    assert not old.exists() and not reused.exists() and running.exists() and mine.exists()
    _plant(tmp_path, [])  # while a journal is there, its staged files are its own
    other = _stage(tmp_path, "a.bin", b"x", dead)
    assert journal_module.remove_dead_staged(tmp_path) == 0 and other.exists()


def test_targets_left_alone_are_dropped_from_the_journal_before_their_staged_files(tmp_path, monkeypatch):
    """Issue 36: a crash after a skipped rename must never roll that stale staged file forward."""
    owner = _model(tmp_path)
    pairs = [(_stage(tmp_path, name, b"new " + name.encode()), tmp_path / name) for name in ("a.bin", "b.bin")]
    journal = write_journal(owner, pairs)
    seen: list[list[str]] = []
    real_store = journal_module._store

    def store(written):  # type: ignore[no-untyped-def]
        assert written.entries, "a journal listing no file would be refused by every later run"
        real_store(written)

    def replaceable(entry):  # type: ignore[no-untyped-def]
        on_disk = json.loads(journal.path.read_text())["files"] if journal.path.exists() else []
        seen.append([item["target"] for item in on_disk])
        return False  # another writer changed both

    monkeypatch.setattr(journal_module, "_store", store)
    assert apply_journal(journal, None, replaceable) == 0
    assert seen == [["a.bin", "b.bin"], ["b.bin"]]
    assert not journal.path.exists() and not list(tmp_path.glob("*.wnaudit-staged"))
    assert (tmp_path / "a.bin").read_bytes() == b"old a.bin"
