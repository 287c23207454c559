"""The atomic writer under faults: the target is the old file or the new one, whole.

Every step of ``wnaudit.common.atomic.STEPS`` gets a fault; disk-full is simulated as a
partial write followed by ENOSPC, as a failing fsync and with the kernel's own
/dev/full; permissions, symlinks and a killed process are real.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from wnaudit.common import atomic
from wnaudit.common.atomic import STEPS, TEMP_SUFFIX, AtomicWriteError, atomic_write_bytes, atomic_writer

from .helpers import (
    InjectedFault,
    disk_fills_after,
    fault_at,
    fsync_fails_with_enospc,
    leftover_temps,
    open_fds,
    replace_fails,
    run_unprivileged,
)

OLD = b"old content\n" * 1000
NEW = b"new content, longer than the old one\n" * 2000


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "model.pt"
    path.write_bytes(OLD)
    path.chmod(0o640)
    return path


def _assert_old(path: Path) -> None:
    assert path.read_bytes() == OLD
    assert leftover_temps(path.parent) == []


def _assert_disk_full_keeps_old(target: Path) -> None:
    """Writing NEW fails with ENOSPC itself (not some other error) and leaves OLD whole."""
    with pytest.raises(OSError) as raised:
        atomic_write_bytes(target, NEW)
    assert raised.value.errno == errno.ENOSPC
    _assert_old(target)


def test_steps_cover_the_write_in_order() -> None:
    assert STEPS == ("created", "written", "before_fsync", "after_fsync", "before_rename", "after_rename")


@pytest.mark.parametrize("step", STEPS)
def test_fault_at_every_step_keeps_old_or_new_whole(
    target: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    fds = open_fds()
    seen: list[str] = []

    def fault(current: str) -> None:
        seen.append(current)
        fault_at(step)(current)

    monkeypatch.setattr(atomic, "_fault", fault)
    with pytest.raises(InjectedFault):
        atomic_write_bytes(target, NEW)
    assert seen[-1] == step, "the fault seam was never reached at this step"
    if step == "after_rename":
        assert target.read_bytes() == NEW
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    else:
        assert target.read_bytes() == OLD
    assert leftover_temps(target.parent) == []
    assert open_fds() == fds, "a file descriptor leaked"


def test_no_fault_replaces_and_keeps_mode(target: Path) -> None:
    atomic_write_bytes(target, NEW)
    assert target.read_bytes() == NEW
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftover_temps(target.parent) == []


def test_exception_in_the_body_after_a_partial_write(target: Path) -> None:
    with pytest.raises(ZeroDivisionError):
        with atomic_writer(target) as handle:
            handle.write(NEW[:100])
            1 / 0
    _assert_old(target)


def test_keyboard_interrupt_in_the_body(target: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        with atomic_writer(target) as handle:
            handle.write(NEW[:100])
            raise KeyboardInterrupt
    _assert_old(target)


@pytest.mark.parametrize("budget", [0, 1, len(NEW) // 2, len(NEW) - 1])
def test_disk_full_mid_write(target: Path, monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    disk_fills_after(monkeypatch, budget)
    _assert_disk_full_keeps_old(target)


def test_disk_full_reported_by_fsync(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsync_fails_with_enospc(monkeypatch)
    _assert_disk_full_keeps_old(target)


def test_disk_full_from_the_kernel(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/dev/full answers every write with a real ENOSPC."""

    def create(target: Path, mode: int) -> tuple[int, None]:
        return os.open("/dev/full", os.O_WRONLY), None

    monkeypatch.setattr(atomic, "_create_temporary", create)
    _assert_disk_full_keeps_old(target)


def test_rename_failure(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replace_fails(monkeypatch)
    with pytest.raises(OSError):
        atomic_write_bytes(target, NEW)
    _assert_old(target)


def test_read_only_file_is_replaced_keeping_its_mode(target: Path) -> None:
    """Decision: a read-only file in a writable directory is replaced, still read-only.

    The rename needs write permission on the directory only; keeping 0o444
    keeps the user's intent (nobody edits it by accident) while the fix lands.
    """
    target.chmod(0o444)
    atomic_write_bytes(target, NEW)
    assert target.read_bytes() == NEW
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


@pytest.mark.parametrize("mode", [0o600, 0o644, 0o755, 0o2750])
def test_permission_bits_are_kept(target: Path, mode: int) -> None:
    target.chmod(mode)
    atomic_write_bytes(target, NEW)
    assert stat.S_IMODE(target.stat().st_mode) == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_is_kept(target: Path) -> None:
    os.chown(target, 65534, 65534)
    atomic_write_bytes(target, NEW)
    assert (target.stat().st_uid, target.stat().st_gid) == (65534, 65534)


def test_new_file_gets_umask_mode(tmp_path: Path) -> None:
    umask = os.umask(0o027)
    try:
        atomic_write_bytes(tmp_path / "fresh.pt", NEW)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "fresh.pt").stat().st_mode) == 0o640


def test_symlink_stays_a_link_and_its_target_is_replaced(tmp_path: Path) -> None:
    real_dir, link_dir = tmp_path / "store", tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    real = real_dir / "blob"
    real.write_bytes(OLD)
    real.chmod(0o604)
    middle = link_dir / "middle.pt"
    middle.symlink_to(Path("..") / "store" / "blob")
    link = link_dir / "model.pt"
    link.symlink_to("middle.pt")  # a chain of two relative links

    atomic_write_bytes(link, NEW)
    assert link.is_symlink() and os.readlink(link) == "middle.pt"
    assert middle.is_symlink() and os.readlink(middle) == str(Path("..") / "store" / "blob")
    assert real.read_bytes() == NEW
    assert stat.S_IMODE(real.stat().st_mode) == 0o604
    assert leftover_temps(real_dir, link_dir) == []


def test_symlink_with_fault_keeps_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "blob"
    real.write_bytes(OLD)
    link = tmp_path / "model.pt"
    link.symlink_to(real)
    monkeypatch.setattr(atomic, "_fault", fault_at("before_rename"))
    with pytest.raises(InjectedFault):
        atomic_write_bytes(link, NEW)
    assert link.is_symlink() and real.read_bytes() == OLD
    assert leftover_temps(tmp_path) == []


_WRITE_AS_USER = r"""
import sys
from pathlib import Path
from wnaudit.common.atomic import AtomicWriteError, atomic_write_bytes
try:
    atomic_write_bytes(Path(sys.argv[1]), b"new")
except AtomicWriteError as error:
    print("REFUSED", error)
else:
    print("WRITTEN")
"""


def test_read_only_directory_is_refused_naming_the_file(tmp_path: Path) -> None:
    directory = tmp_path / "ro"
    directory.mkdir()
    target = directory / "model.pt"
    target.write_bytes(OLD)
    directory.chmod(0o555)
    try:
        completed = run_unprivileged(["-c", _WRITE_AS_USER, str(target)], cwd=tmp_path)
    finally:
        directory.chmod(0o755)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("REFUSED"), completed.stdout
    assert str(target) in completed.stdout and "Permission denied" in completed.stdout
    _assert_old(target)


def test_atomic_write_error_is_an_oserror() -> None:
    """Engines catch OSError for every write failure; the writer's own error must be one."""
    assert issubclass(AtomicWriteError, OSError)


_KILLED_MID_WRITE = r"""
import os, signal, sys
from pathlib import Path
from wnaudit.common import atomic

def die(step):
    if step == sys.argv[2]:
        os.kill(os.getpid(), signal.SIGKILL)

atomic._fault = die
with atomic.atomic_writer(Path(sys.argv[1])) as handle:
    handle.write(b"half" * 1000)
    handle.flush()
    handle.write(b"rest" * 1000)
"""


@pytest.mark.parametrize("step", ["written", "after_fsync", "before_rename"])
def test_killed_mid_write_leaves_the_original(target: Path, step: str) -> None:
    """SIGKILL cannot be cleaned up after: the original is intact; the temporary file is
    nameless until just before the rename (O_TMPFILE), and one named in that last moment
    names its dead process, is never taken for an input and is removed by the next write."""
    completed = subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(target), step], capture_output=True)
    assert completed.returncode == -signal.SIGKILL
    assert target.read_bytes() == OLD
    leftovers = leftover_temps(target.parent)
    if step != "before_rename":
        assert leftovers == []
    for leftover in leftovers:
        assert leftover.name.startswith(f".{target.name}.") and leftover.name.endswith(TEMP_SUFFIX)

    from wnaudit.common.config import Config
    from wnaudit.cli.discovery import discover

    inputs = discover([target.parent], Config())
    assert inputs.checkpoints == [target] and inputs.sources == [] and inputs.errors == []
    atomic_write_bytes(target, NEW)
    assert leftover_temps(target.parent) == [] and target.read_bytes() == NEW


def test_next_write_removes_only_stale_temporaries_of_its_own_target(tmp_path: Path) -> None:
    """Named temporaries (filesystems without O_TMPFILE) of a dead process go; a live one's stay."""
    from wnaudit.common.atomic import temporary_name

    target = tmp_path / "model.pt"
    target.write_bytes(OLD)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = temporary_name(target, int(dead.stdout))
    alive = temporary_name(target, os.getpid())
    other = temporary_name(tmp_path / "other.pt", int(dead.stdout))
    for path in (stale, alive, other):
        path.write_bytes(b"x" * 100)
    atomic_write_bytes(target, NEW)
    assert not stale.exists() and alive.exists() and other.exists()


def test_named_fallback_without_o_tmpfile(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import wnaudit.common.atomic as atomic_module

    monkeypatch.delattr(atomic_module.os, "O_TMPFILE", raising=False)
    seen: list[str] = []
    with atomic_writer(target, verify=lambda path: seen.append(path.name)) as handle:
        handle.write(NEW)
        (temp,) = leftover_temps(target.parent)
        assert f".{os.getpid()}." in temp.name
    assert target.read_bytes() == NEW and leftover_temps(target.parent) == [] and seen == [temp.name]


def test_a_failed_verification_replaces_nothing(target: Path) -> None:
    def refuse(path: Path) -> None:
        assert path.read_bytes() == NEW  # the complete new content is readable before the rename
        raise ValueError("read-back differs")

    with pytest.raises(ValueError):
        with atomic_writer(target, verify=refuse) as handle:
            handle.write(NEW)
    assert target.read_bytes() == OLD and leftover_temps(target.parent) == []


def test_a_reader_of_the_old_file_keeps_reading_it_whole(target: Path) -> None:
    """Replacement is a rename, not an overwrite: an open handle still sees the old bytes."""
    with open(target, "rb") as reader:
        first = reader.read(10)
        atomic_write_bytes(target, NEW)
        rest = reader.read()
    assert first + rest == OLD
    assert target.read_bytes() == NEW
