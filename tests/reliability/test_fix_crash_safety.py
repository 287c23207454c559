"""``wnaudit --fix`` under faults, end to end through the CLI.

For a buggy source file, a torch checkpoint and a safetensors checkpoint: a
fault at every step of the atomic write, a disk that fills mid-write or at
fsync, a failing rename, a read-only file, a read-only directory, a symlinked
target, and two ``--fix`` runs racing on one file.  Afterwards each file is
either byte-identical to the original or a complete, correct fix; no
temporary file is left behind; a failure is one error line naming the file.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wnaudit.common import atomic
from wnaudit.common.atomic import STEPS

from .helpers import (
    BUGGY_SOURCE,
    assert_no_traceback,
    disk_fills_after,
    fault_at,
    folded_reference,
    fsync_fails_with_enospc,
    leftover_temps,
    load_checkpoint,
    replace_fails,
    run_cli,
    run_unprivileged,
    same_tensors,
    write_checkpoint,
)

# The source subject's fix (WN103) needs review: every run passes --unsafe-fixes so the fix is written.
KINDS = ("source", "torch", "safetensors")
_NAMES = {"source": "generator.py", "torch": "g_00500000.pt", "safetensors": "model.safetensors"}


@pytest.fixture(scope="module")
def fixed_source(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What a clean ``--fix`` writes for BUGGY_SOURCE: the only acceptable non-original content."""
    path = tmp_path_factory.mktemp("reference") / _NAMES["source"]
    path.write_text(BUGGY_SOURCE)
    from wnaudit.cli.command import run

    assert run(["--fix", "--unsafe-fixes", "-q", str(path)]) == 0
    text = path.read_text()
    assert text != BUGGY_SOURCE
    compile(text, str(path), "exec")
    return text


@pytest.fixture(scope="module")
def reference_fold() -> dict[str, Any]:
    return folded_reference()


@dataclass
class Subject:
    kind: str
    path: Path
    original: bytes
    fixed_source: str
    reference_fold: dict[str, Any]

    def state(self) -> str:
        """"original", "fixed", or a failure message: the only two acceptable states are the first."""
        data = self.path.read_bytes()
        if data == self.original:
            return "original"
        if self.kind == "source":
            return "fixed" if data.decode() == self.fixed_source else "HALF-WRITTEN OR WRONG"
        try:
            loaded = load_checkpoint(self.path)
        except Exception as error:  # noqa: BLE001 - any failure to load is the verdict
            return f"UNLOADABLE: {error}"
        return "fixed" if same_tensors(loaded, self.reference_fold) else "LOADS BUT IS NOT THE CORRECT FOLD"


def make_subject(kind: str, directory: Path, fixed_source: str, reference_fold: dict[str, Any]) -> Subject:
    path = directory / _NAMES[kind]
    if kind == "source":
        path.write_text(BUGGY_SOURCE)
    else:
        write_checkpoint(path, kind)
    return Subject(kind, path, path.read_bytes(), fixed_source, reference_fold)


@pytest.fixture(params=KINDS)
def subject(request: pytest.FixtureRequest, tmp_path: Path, fixed_source: str, reference_fold: dict[str, Any]) -> Subject:
    return make_subject(request.param, tmp_path, fixed_source, reference_fold)


def _assert_failed_cleanly(result: Any, subject: Subject, expected_state: str = "original") -> None:
    assert_no_traceback(result)
    assert result.rc == 2, result.stderr
    assert len(result.error_lines) == 1 and len(result.errors_for(subject.path)) == 1, result.stderr
    assert subject.state() == expected_state
    assert leftover_temps(subject.path.parent) == []


def test_clean_fix_is_correct(subject: Subject, capsys: pytest.CaptureFixture[str]) -> None:
    """Control: without a fault the fix lands, so 'original' below really means 'not written'."""
    result = run_cli(capsys, "--fix", "--unsafe-fixes", subject.path)
    assert result.rc == 0, result.stderr + result.stdout
    assert subject.state() == "fixed"
    assert leftover_temps(subject.path.parent) == []


@pytest.mark.parametrize("step", STEPS)
def test_fault_at_every_write_step(
    subject: Subject, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    monkeypatch.setattr(atomic, "_fault", fault_at(step))
    result = run_cli(capsys, "--fix", "--unsafe-fixes", subject.path)
    # After the rename the new file is in place, whole; the error is still reported.
    _assert_failed_cleanly(result, subject, "fixed" if step == "after_rename" else "original")


def test_disk_full_mid_write(subject: Subject, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    disk_fills_after(monkeypatch, len(subject.original) // 2)
    result = run_cli(capsys, "--fix", "--unsafe-fixes", subject.path)
    _assert_failed_cleanly(result, subject)
    assert "No space left on device" in result.error_lines[0]


def test_disk_full_at_fsync(subject: Subject, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fsync_fails_with_enospc(monkeypatch)
    result = run_cli(capsys, "--fix", "--unsafe-fixes", subject.path)
    _assert_failed_cleanly(result, subject)
    assert "No space left on device" in result.error_lines[0]


def test_rename_fails(subject: Subject, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    replace_fails(monkeypatch)
    _assert_failed_cleanly(run_cli(capsys, "--fix", "--unsafe-fixes", subject.path), subject)


def test_fault_in_one_file_does_not_stop_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fixed_source: str,
    reference_fold: dict[str, Any],
) -> None:
    """The fault hits the first write only; every other input is still fixed."""
    subjects = []
    for kind in KINDS:
        (tmp_path / kind).mkdir()
        subjects.append(make_subject(kind, tmp_path / kind, fixed_source, reference_fold))
    calls: list[str] = []

    def first_write_fails(step: str) -> None:
        if step == "before_rename":
            calls.append(step)
            if len(calls) == 1:
                fault_at(step)(step)

    monkeypatch.setattr(atomic, "_fault", first_write_fails)
    result = run_cli(capsys, "--fix", "--unsafe-fixes", *(s.path for s in subjects))
    assert result.rc == 2 and len(result.error_lines) == 1, result.stderr
    states = sorted(s.state() for s in subjects)
    assert states == ["fixed", "fixed", "original"]


def test_read_only_file_is_fixed_keeping_its_mode(subject: Subject, capsys: pytest.CaptureFixture[str]) -> None:
    subject.path.chmod(0o444)
    result = run_cli(capsys, "--fix", "--unsafe-fixes", subject.path)
    assert result.rc == 0, result.stderr
    assert subject.state() == "fixed"
    assert stat.S_IMODE(subject.path.stat().st_mode) == 0o444


def test_read_only_directory_is_an_error_naming_each_file(
    tmp_path: Path, fixed_source: str, reference_fold: dict[str, Any]
) -> None:
    directory = tmp_path / "ro"
    directory.mkdir()
    subjects = [make_subject(kind, directory, fixed_source, reference_fold) for kind in KINDS]
    directory.chmod(0o555)
    try:
        completed = run_unprivileged(
            ["-c", "from wnaudit.cli import main; main()", "--fix", "--unsafe-fixes", *(str(s.path) for s in subjects)], cwd=tmp_path
        )
    finally:
        directory.chmod(0o755)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.returncode == 2, completed.stderr
    lines = [line for line in completed.stderr.splitlines() if line.startswith("wnaudit: error: ")]
    assert len(lines) == 3, completed.stderr
    for s in subjects:
        (line,) = [line for line in lines if line.startswith(f"wnaudit: error: {s.path}: ")]
        assert "ermission denied" in line, line
        assert s.state() == "original"
    assert leftover_temps(directory) == []


def test_symlinked_target_stays_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixed_source: str, reference_fold: dict[str, Any]
) -> None:
    store, work = tmp_path / "store", tmp_path / "work"
    store.mkdir()
    work.mkdir()
    for kind in KINDS:
        real = make_subject(kind, store, fixed_source, reference_fold)
        link = work / real.path.name
        link.symlink_to(Path("..") / "store" / real.path.name)
        result = run_cli(capsys, "--fix", "--unsafe-fixes", link)
        assert result.rc == 0, result.stderr
        assert link.is_symlink() and os.readlink(link) == str(Path("..") / "store" / real.path.name)
        assert real.state() == "fixed"
    assert leftover_temps(store, work) == []


# --------------------------------------------------------------------------
# Two processes fixing one file at once
# --------------------------------------------------------------------------

_RACER = r"""
import os, sys, time
from pathlib import Path
from wnaudit.common import atomic
from wnaudit.cli import main

barrier = Path(sys.argv[1])
writes = 0

def wait_for_the_other(step):
    # For every file, both processes hold a temporary file (so both have read
    # the original) before either renames.
    global writes
    if step == "created":
        writes += 1
        (barrier / f"{os.getpid()}-{writes}").touch()
        deadline = time.monotonic() + 30
        while len(list(barrier.glob(f"*-{writes}"))) < 2:
            if time.monotonic() > deadline:
                raise SystemExit("the other racer never arrived")
            time.sleep(0.01)

atomic._fault = wait_for_the_other
sys.argv = ["wnaudit", *sys.argv[2:]]
main()
"""


def test_two_fix_runs_racing_on_the_same_files(tmp_path: Path, fixed_source: str, reference_fold: dict[str, Any]) -> None:
    """Both runs read the originals and write their temporary files before either
    renames.  The last rename wins; either way each file is a whole, correct fix.
    A run may also notice the file changed under it and refuse (one error line)."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    subjects = [make_subject(kind, tmp_path, fixed_source, reference_fold) for kind in KINDS]
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(barrier), "--fix", "--unsafe-fixes", "-q", *(str(s.path) for s in subjects)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = [racer.communicate(timeout=180) for racer in racers]
    codes = sorted(racer.returncode for racer in racers)
    assert codes[0] == 0 and codes[1] in (0, 2), outcomes
    for _, err in outcomes:
        assert "Traceback" not in err, err
        errors = [line for line in err.splitlines() if line.startswith("wnaudit: error: ")]
        assert len(errors) <= 1 and all(any(line.startswith(f"wnaudit: error: {s.path}: ") for s in subjects) for line in errors)
    assert len(list(barrier.glob("*-1"))) == 2, "the two runs did not overlap"
    assert [s.state() for s in subjects] == ["fixed"] * len(subjects)
    assert leftover_temps(tmp_path) == []


def test_checkpoint_replaced_by_another_writer_during_fix_is_never_mixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, reference_fold: dict[str, Any]
) -> None:
    """Another program (a trainer saving a newer checkpoint) replaces the file while
    ``--fix`` runs.  The result must be one version, whole: a fold of what was read,
    or the newer file untouched -- never the old fold mixed with the new file's bytes."""
    import wnaudit

    for kind in ("torch", "safetensors"):
        directory = tmp_path / kind
        directory.mkdir()
        path = write_checkpoint(directory / _NAMES[kind], kind)
        newer = write_checkpoint(directory / f"newer-{_NAMES[kind]}", kind, seed=1)
        newer_bytes = newer.read_bytes()
        newer_fold = wnaudit.fold_state_dict(load_checkpoint(newer))[0]

        def trainer_saves(step: str) -> None:
            if step == "created" and newer.exists():
                os.replace(newer, path)

        monkeypatch.setattr(atomic, "_fault", trainer_saves)
        result = run_cli(capsys, "--fix", "--unsafe-fixes", path)
        monkeypatch.setattr(atomic, "_fault", lambda step: None)
        assert_no_traceback(result)
        if path.read_bytes() == newer_bytes:
            continue  # the fix noticed and stepped aside
        written = load_checkpoint(path)
        assert same_tensors(written, reference_fold) or same_tensors(written, newer_fold), (
            f"{kind}: the written file mixes two versions"
        )


def test_fix_twice_is_a_no_op(subject: Subject, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "--fix", "--unsafe-fixes", subject.path).rc == 0
    once = subject.path.read_bytes()
    second = run_cli(capsys, "--fix", "--unsafe-fixes", subject.path)
    assert second.rc == 0 and second.error_lines == []
    assert subject.path.read_bytes() == once
