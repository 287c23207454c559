"""SIGINT / SIGTERM / SIGKILL at several moments of a real ``wnaudit --fix`` (issue 11, case 6).

Each run is a fresh process running the real command line on real checkpoints.
A driver makes the process signal itself at one named moment (deterministic:
the handler runs right after ``os.kill`` returns), so every moment is hit:
while folding, in the middle of the copy, after the write, after the fsync,
during the read-back check, with the file linked under its temporary name
just before the rename, and just after the rename.

SIGINT and SIGTERM must remove every temporary file, leave the target old
(or, after the rename, new) and whole, and exit 130 / 143.  SIGKILL cannot be
handled: no temporary file may be left except in the instant between linking
and renaming, and the next run removes that one.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from wnaudit import fold_state_dict
from wnaudit.common.atomic import TEMP_SUFFIX
from wnaudit.testing.vocoder import build_vocoder

_DRIVER = r"""
import os, signal, sys
from wnaudit.common import atomic
from wnaudit.checkpoint import formats, safetensors_io, torch_io, verify

signum = getattr(signal, sys.argv[1])
moment = sys.argv[2]
calls = {"n": 0}

def fire():
    os.kill(os.getpid(), signum)

def on_call(count, real):
    def wrapped(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == count:
            fire()
        return real(*args, **kwargs)
    return wrapped

if moment in atomic.STEPS:
    atomic._fault = lambda step: fire() if step == moment else None
elif moment == "folding":
    formats.fold_checked = on_call(1, formats.fold_checked)
elif moment == "mid-copy":
    real_rewrite = safetensors_io.rewrite
    class Reader:
        def __init__(self, handle): self.handle = handle
        def read(self, size=-1): return on_call(3, self.handle.read)(size)
        def __getattr__(self, name): return getattr(self.handle, name)
    safetensors_io.rewrite = lambda source, *a, **k: real_rewrite(Reader(source), *a, **k)
    torch_io.CountingWriter.write = on_call(4, torch_io.CountingWriter.write)
    from wnaudit.checkpoint import torch_zip
    # the streaming torch-zip fix: records over 64 KiB are copied by _copy_range (smaller ones are batched),
    # so its first call is mid-copy: the records before it are written, it and the rest are not
    torch_zip._copy_range = on_call(1, torch_zip._copy_range)
elif moment == "verifying":
    verify.SafetensorsExpectation.__call__ = on_call(1, verify.SafetensorsExpectation.__call__)
    verify.first_difference = on_call(1, verify.first_difference)
elif moment == "second-file":  # while folding the second file of the run
    real_audit, real_fold = formats.audit_safetensors, formats.fold_checked
    files = {"n": 0}
    def audit_safetensors(*args, **kwargs):
        files["n"] += 1
        return real_audit(*args, **kwargs)
    def fold_checked(*args, **kwargs):
        if files["n"] == 2:
            fire()
        return real_fold(*args, **kwargs)
    formats.audit_safetensors, formats.fold_checked = audit_safetensors, fold_checked

from wnaudit.cli import main
main(sys.argv[3:], prog_name="wnaudit")
"""

MOMENTS = ["folding", "mid-copy", "written", "after_fsync", "verifying", "before_rename", "after_rename"]


def _state() -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    state = build_vocoder(weight_norm="modern", seed=0).state_dict()
    state["big.table"] = torch.randn(1 << 20)  # 4 MiB: the copy takes several chunks
    return {k: v.contiguous() for k, v in state.items()}


def _write(path: Path, fmt: str) -> None:
    if fmt == "safetensors":
        save_file(_state(), path)
    else:
        torch.save({"generator": _state(), "steps": 5}, path)


def _folded(path: Path, fmt: str) -> dict[str, torch.Tensor]:
    return load_file(path) if fmt == "safetensors" else torch.load(path, weights_only=True)["generator"]


def _run(signame: str, moment: str, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _DRIVER, signame, moment, *map(str, args)], capture_output=True, text=True, timeout=120
    )


def _temps(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.endswith(TEMP_SUFFIX)]


def _name(fmt: str) -> str:
    return "model.safetensors" if fmt == "safetensors" else "g_00500000"


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("fmt", ["safetensors", "torch"])
def test_sigterm_at_each_moment_removes_temporaries_and_exits_143(tmp_path, moment, fmt):
    path = tmp_path / _name(fmt)
    _write(path, fmt)
    before = path.read_bytes()
    done = _run("SIGTERM", moment, "--fix", path)
    assert done.returncode == 143, done.stdout + done.stderr
    assert "interrupted by SIGTERM" in done.stderr and "Traceback" not in done.stderr
    assert _temps(tmp_path) == [] and sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    if moment == "after_rename":
        expected, _ = fold_state_dict(_state())
        fixed = _folded(path, fmt)
        assert sorted(fixed) == sorted(expected) and all(torch.equal(fixed[k], expected[k]) for k in expected)
    else:
        assert path.read_bytes() == before


@pytest.mark.parametrize("moment", ["folding", "mid-copy", "before_rename"])
def test_sigint_removes_temporaries_and_exits_130(tmp_path, moment):
    path = tmp_path / "model.safetensors"
    _write(path, "safetensors")
    before = path.read_bytes()
    done = _run("SIGINT", moment, "--fix", path)
    assert done.returncode == 130, done.stdout + done.stderr
    assert "interrupted by SIGINT" in done.stderr and "Traceback" not in done.stderr
    assert _temps(tmp_path) == [] and path.read_bytes() == before


def test_sigterm_during_the_second_file_keeps_the_first_fixed_and_the_second_unchanged(tmp_path):
    first, second = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    _write(first, "safetensors")
    _write(second, "safetensors")
    before = second.read_bytes()
    done = _run("SIGTERM", "second-file", "--fix", first, second)
    assert done.returncode == 143, done.stderr
    assert not any("parametrizations" in key for key in load_file(first))
    assert second.read_bytes() == before and _temps(tmp_path) == []


@pytest.mark.parametrize("moment", ["mid-copy", "after_fsync", "verifying", "before_rename"])
def test_sigkill_leaves_no_temporary_or_the_next_run_removes_it(tmp_path, moment):
    path = tmp_path / "model.safetensors"
    _write(path, "safetensors")
    before = path.read_bytes()
    done = _run("SIGKILL", moment, "--fix", path)
    assert done.returncode == -signal.SIGKILL
    assert path.read_bytes() == before
    if moment != "before_rename":  # nameless (O_TMPFILE) until the rename
        assert _temps(tmp_path) == []
    done = _run("SIGUSR1", "none", "--fix", path)  # an ordinary second run
    assert done.returncode == 0, done.stderr
    assert _temps(tmp_path) == [] and sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_sigterm_at_real_times_never_leaves_debris(tmp_path):
    """Not driven: SIGTERM from outside at several delays into a real fix of a 64 MiB file."""
    path = tmp_path / "model.safetensors"
    state = _state()
    state["huge.table"] = torch.randn(16 << 20)
    save_file(state, path)
    before = path.read_bytes()
    command = [sys.executable, "-m", "wnaudit.cli", "--fix", str(path)]
    outcomes = []
    for delay in (0.5, 1.5, 3.0):
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
        outcomes.append(process.returncode)
        assert process.returncode in (0, 143, -signal.SIGTERM), err
        assert _temps(tmp_path) == []
        if process.returncode == 0 or path.read_bytes() != before:
            # Done, or interrupted after the verified rename (the commit point): never half-written.
            assert not any("parametrizations" in key for key in load_file(path))
            assert torch.equal(load_file(path)["huge.table"], state["huge.table"])
            path.write_bytes(before)


def test_a_signal_held_during_renames_that_then_fail_still_ends_the_run(monkeypatch):
    """Issue 36: a signal recorded while a set of renames is held is never swallowed by the renames' own error."""
    from wnaudit.common import interrupts

    monkeypatch.setattr(interrupts, "received", None)
    with pytest.raises(interrupts.Interrupted) as caught:
        with interrupts.held():
            interrupts.interrupt(signal.SIGTERM)  # what the CLI's handler does while held: only recorded
            raise OSError("rename failed")
    assert caught.value.code == 143 and isinstance(caught.value.__cause__, OSError)
    assert not interrupts.is_held()
