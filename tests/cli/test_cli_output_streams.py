"""Output that cannot be written: fixes kept, one error line, an exit status that reflects the disk (issue 23).

Each test runs the real command line in a child process whose standard streams
are closed, ``/dev/full``, or a pipe its reader closed before anything was written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import BUGGY, REPO_ROOT

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

FULL = Path("/dev/full")


def _unfolded_checkpoint(path: Path) -> Path:
    """A real modern weight-norm module's state: one WN301 pair."""
    torch.manual_seed(0)
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 3, 3))
    safetensors_torch.save_file({k: v.contiguous() for k, v in conv.state_dict().items()}, str(path))
    return path


def _keys(path: Path) -> set[str]:
    return set(safetensors_torch.load_file(str(path)))


def _folded(path: Path) -> bool:
    return _keys(path) == {"weight", "bias"}


def _wnaudit(*args: str, cwd: Path, close: tuple[int, ...] = (), **streams: Any) -> subprocess.CompletedProcess[bytes]:
    """``wnaudit ARGS`` with the descriptors in ``close`` closed in the child before it starts."""
    streams.setdefault("stdout", subprocess.PIPE)
    streams.setdefault("stderr", subprocess.PIPE)

    def close_fds() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run(
        [sys.executable, "-m", "wnaudit", *args], cwd=cwd, timeout=120, preexec_fn=close_fds, **streams,
        env=dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO_ROOT)),
    )


def _no_traceback(stderr: bytes) -> None:
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr, stderr.decode()


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return _unfolded_checkpoint(tmp_path / "model.safetensors")


def test_fix_with_stderr_closed_still_folds_and_exits_clean(model: Path):
    completed = _wnaudit("--fix", model.name, cwd=model.parent, close=(2,), stderr=None)
    assert completed.returncode == 0, completed.stdout.decode()
    assert _folded(model)
    assert "(1 fixed, 0 remaining)" in completed.stdout.decode()


def test_stderr_closed_and_an_unreadable_input_still_exits_2(model: Path):
    (model.parent / "broken.pt").write_bytes(b"PK\x03\x04 not a zip at all")
    completed = _wnaudit("broken.pt", model.name, cwd=model.parent, close=(2,), stderr=None)
    assert completed.returncode == 2
    assert "WN301" in completed.stdout.decode(), "the readable input is still reported"


def test_stderr_full_and_an_unreadable_input_still_exits_2(model: Path):
    (model.parent / "broken.pt").write_bytes(b"PK\x03\x04 not a zip at all")
    with FULL.open("wb") as full:
        completed = _wnaudit("--fix", "broken.pt", model.name, cwd=model.parent, stderr=full)
    assert completed.returncode == 2
    assert _folded(model)


def test_fix_with_stdout_closed_keeps_the_fix_and_says_the_report_was_lost(model: Path):
    completed = _wnaudit("--fix", model.name, cwd=model.parent, close=(1,), stdout=None)
    assert completed.returncode == 2, "an unwritten report is an error, not 'findings remain'"
    assert _folded(model)
    _no_traceback(completed.stderr)
    assert completed.stderr.decode().splitlines()[-1] == (
        "wnaudit: error: cannot write the report: standard output is closed; the files this run fixed stay fixed"
    )


def test_stdout_closed_and_stderr_closed_still_fixes(model: Path):
    completed = _wnaudit("--fix", model.name, cwd=model.parent, close=(1, 2), stdout=None, stderr=None)
    assert completed.returncode == 2
    assert _folded(model)


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
@pytest.mark.parametrize("output_format", ["concise", "json", "sarif"])
def test_a_full_stdout_is_one_error_line_and_exit_2(model: Path, output_format: str):
    with FULL.open("wb") as full:
        completed = _wnaudit("--format", output_format, model.name, cwd=model.parent, stdout=full)
    assert completed.returncode == 2
    assert completed.stderr.decode().splitlines() == [
        "wnaudit: error: cannot write the report: standard output: No space left on device"
    ]


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
def test_a_full_stdout_after_a_fix_keeps_the_fix(model: Path):
    with FULL.open("wb") as full:
        completed = _wnaudit("--fix", model.name, cwd=model.parent, stdout=full)
    assert completed.returncode == 2
    assert _folded(model)
    _no_traceback(completed.stderr)


def _with_reader_gone(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``wnaudit ARGS | head -0``: the pipe's reader has closed it before the first byte is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return _wnaudit(*args, cwd=cwd, stdout=write_end)
    finally:
        os.close(write_end)


def test_a_reader_that_stops_early_ends_the_report_quietly(model: Path):
    completed = _with_reader_gone(model.name, cwd=model.parent)
    assert completed.stderr == b""
    assert completed.returncode == 1, "the exit status still says findings remain"


def test_a_reader_that_stops_early_after_a_fix_exits_clean(model: Path):
    completed = _with_reader_gone("--fix", model.name, cwd=model.parent)
    _no_traceback(completed.stderr)
    assert completed.returncode == 0
    assert _folded(model)


def test_head_one_on_a_long_report_exits_quietly(tmp_path: Path):
    """``wnaudit src | head -1`` on a report far longer than a pipe's buffer."""
    (tmp_path / "many.py").write_text(
        "import torch\n" + "".join(f"m{i} = torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))\n" for i in range(3000)),
        encoding="utf-8",
    )
    completed = subprocess.run(
        f'"{sys.executable}" -m wnaudit many.py | head -1; exit "${{PIPESTATUS[0]}}"', shell=True,
        executable="/bin/bash", cwd=tmp_path, capture_output=True, timeout=300,
        env=dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO_ROOT)),
    )
    assert completed.stdout.decode().startswith("many.py:2:")
    assert completed.stderr == b""
    assert completed.returncode == 1


def test_a_usage_error_with_stderr_closed_still_exits_2(tmp_path: Path):
    assert _wnaudit("--frobnicate", ".", cwd=tmp_path, close=(2,), stderr=None).returncode == 2


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
def test_a_patch_that_cannot_be_written_is_one_error_line_and_the_source_is_untouched(tmp_path: Path):
    source = tmp_path / "bug.py"
    source.write_text(BUGGY, encoding="utf-8")
    with FULL.open("wb") as full:
        completed = _wnaudit("--diff", "bug.py", cwd=tmp_path, stdout=full)
    assert completed.returncode == 2
    assert completed.stderr.decode().splitlines() == [
        "wnaudit: error: cannot write the patches: standard output: No space left on device"
    ]
    assert source.read_text(encoding="utf-8") == BUGGY
