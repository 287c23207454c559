"""A sharded fix is all or nothing, survives crashes, and reads each shard file once (issue 11, case 3)."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file

from checkpoint_helpers import WEIGHT_NORMS, cli
from test_checkpoint_forms import _write_sharded
from wnaudit import fold_state_dict
from wnaudit.checkpoint.transaction import JOURNAL_SUFFIX, STAGED_SUFFIX


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _debris(directory: Path) -> list[str]:
    return [p.name for p in directory.rglob("*") if p.name.endswith((STAGED_SUFFIX, JOURNAL_SUFFIX, ".wnaudit-tmp"))]


def _load_through_index(index: Path, kind: str) -> dict[str, torch.Tensor]:
    weight_map = json.loads(index.read_text())["weight_map"]
    loaded: dict[str, torch.Tensor] = {}
    for key, name in weight_map.items():
        path = index.parent / name
        shard = load_file(path) if kind == "safetensors" else torch.load(path, weights_only=True)
        loaded[key] = shard[key]
    return loaded


def _assert_folded_exactly(index: Path, kind: str, state: dict[str, torch.Tensor]) -> None:
    expected, _ = fold_state_dict(state)
    loaded = _load_through_index(index, kind)
    assert sorted(loaded) == sorted(expected)
    for key, value in expected.items():
        assert torch.equal(loaded[key], value), key


class _FullDisk(io.RawIOBase):
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def close(self) -> None:
        os.close(self.fd)
        super().close()

    def fileno(self) -> int:
        return self.fd


@pytest.mark.parametrize("kind", ["safetensors", "bin"])
@pytest.mark.parametrize("failing", ["model-00002", "index.json"])
def test_disk_full_on_a_later_file_leaves_the_whole_set_unchanged(tmp_path, capsys, monkeypatch, kind, failing):
    index, _ = _write_sharded(tmp_path, "modern", kind)
    before = _snapshot(tmp_path)
    real_fdopen = os.fdopen

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        link = os.readlink(f"/proc/self/fd/{fd}")
        if "w" in mode and failing in link and link.endswith(STAGED_SUFFIX):
            return io.BufferedWriter(_FullDisk(fd))
        return real_fdopen(fd, mode, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", fdopen)
    status, out, err = cli(capsys, "--fix", index)
    assert status == 2 and "No space left on device" in err, out + err
    assert _snapshot(tmp_path) == before
    assert _debris(tmp_path) == []


@pytest.mark.parametrize("kind", ["safetensors", "bin"])
def test_one_shard_named_twice_is_read_and_written_once(tmp_path, capsys, kind):
    index, state = _write_sharded(tmp_path, "legacy", kind)
    (tmp_path / "sub").mkdir()
    document = json.loads(index.read_text())
    last = list(document["weight_map"].values())[-1]  # the shard holding most pairs whole
    for key, name in document["weight_map"].items():  # every g through another spelling of its path
        if name == last and key.endswith(("weight_g", "original0")):
            document["weight_map"][key] = f"sub/../{last}"
    index.write_text(json.dumps(document))
    status, out, err = cli(capsys, "--fix", index)
    assert status == 0 and f"Found {WEIGHT_NORMS} findings ({WEIGHT_NORMS} fixed, 0 remaining)." in out, out + err
    _assert_folded_exactly(index, kind, state)
    assert _debris(tmp_path) == []


_DRIVER = r"""
import os, signal, sys
from wnaudit.checkpoint import transaction
signum, step = getattr(signal, sys.argv[1]), sys.argv[2]
transaction._fault = lambda name: os.kill(os.getpid(), signum) if name == step else None
from wnaudit.cli import main
main(sys.argv[3:], prog_name="wnaudit")
"""


def _run(signame: str, step: str, *args: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", _DRIVER, signame, step, *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("step", ["staged", "journaled", "applied_one"])
def test_killed_fix_is_finished_or_rolled_back_by_the_next_run(tmp_path, step):
    index, state = _write_sharded(tmp_path, "modern", "safetensors")
    before = _snapshot(tmp_path)
    killed = _run("SIGKILL", step, "--fix", index)
    assert killed.returncode == -signal.SIGKILL
    if step == "staged":
        assert {k: v for k, v in _snapshot(tmp_path).items() if not k.endswith(STAGED_SUFFIX)} == before
    audit = _run("SIGUSR1", "none", "--format", "json", index)
    if step == "staged":  # before the commit point: the originals are whole and consistent
        assert audit.returncode == 1 and len(json.loads(audit.stdout)["findings"]) == WEIGHT_NORMS
    else:  # after it: the set is half-replaced; an audit says so and points to --fix
        assert audit.returncode == 2 and "run wnaudit --fix on it to finish" in audit.stderr
    fixed = _run("SIGUSR1", "none", "--fix", index)
    assert fixed.returncode == 0, fixed.stderr
    _assert_folded_exactly(index, "safetensors", state)
    assert _debris(tmp_path) == []


@pytest.mark.parametrize("signame, status", [("SIGTERM", 143), ("SIGINT", 130)])
def test_signal_while_staging_removes_every_staged_file(tmp_path, signame, status):
    index, _ = _write_sharded(tmp_path, "modern", "bin")
    before = _snapshot(tmp_path)
    done = _run(signame, "staged", "--fix", index)
    assert done.returncode == status, done.stderr
    assert _snapshot(tmp_path) == before and _debris(tmp_path) == []


def test_signal_during_the_renames_waits_until_the_set_is_complete(tmp_path):
    index, state = _write_sharded(tmp_path, "modern", "safetensors")
    done = _run("SIGTERM", "applied_one", "--fix", index)
    assert done.returncode == 143, done.stderr
    _assert_folded_exactly(index, "safetensors", state)
    assert _debris(tmp_path) == []
    # Issue 36: the message says what is on the disk: the whole set, named.
    assert "interrupted by SIGTERM: fixed 3 files before stopping" in done.stderr and index.name in done.stderr, done.stderr


@pytest.mark.parametrize("which", ["journal", "staged"])
def test_links_planted_at_the_old_predictable_names_are_never_written_through(tmp_path, capsys, which):
    """Issue 36: the journal's temporary name was ``PATH.new``, a staged file's carried only the pid."""
    model, outside = tmp_path / "model", tmp_path / "outside"
    model.mkdir()
    outside.mkdir()
    index, state = _write_sharded(model, "modern", "safetensors")
    victims = []
    if which == "journal":
        planted = [index.with_name(f".{index.name}.wnaudit-journal.new")]
    else:
        planted = [model / f".{name}.{os.getpid()}.wnaudit-staged" for name in sorted(p.name for p in model.iterdir())]
    for number, link in enumerate(planted):
        victim = outside / f"victim{number}"
        victim.write_text("outside the tree")
        link.symlink_to(victim)
        victims.append(victim)
    status, out, err = cli(capsys, "--fix", model)
    assert status == 0, out + err
    assert [victim.read_text() for victim in victims] == ["outside the tree"] * len(victims)
    assert all(link.is_symlink() for link in planted)  # not ours: left as they are
    _assert_folded_exactly(index, "safetensors", state)
