"""``wnaudit bench`` on inputs that used to escape as tracebacks or a silent exit 0 (issue 36).

Each run is a real ``wnaudit`` process: exit statuses and signals are the point.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wnaudit.bench.errors import BenchError
from wnaudit.bench.inputs import check_inputs_fit

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--iterations", "2", "--warmup", "0", "--threads", "1"]


def _bench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WNAUDIT_NO_CACHE": "1"}
    return subprocess.run([sys.executable, "-m", "wnaudit", "bench", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False)


def _factory(directory: Path, body: str, top: str = "") -> str:
    (directory / "factory.py").write_text(textwrap.dedent(f"""\
        import os, signal, time
        from torch import nn
        {top}
        def build():
            {body}
            return nn.Linear(4, 4)
        """))
    return "factory.py:build"


def test_an_input_that_cannot_fit_is_refused_before_allocating(tmp_path: Path) -> None:
    spec = _factory(tmp_path, "pass")
    done = _bench(spec, "--input-shape", "100000,100000,100000", *FAST, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "--input-shape 100000,100000,100000" in lines[0], done.stderr
    assert "nothing allocated" in lines[0] and "Traceback" not in done.stderr


def test_the_bound_is_the_machine_memory() -> None:
    check_inputs_fit([[1024, 1024]], memory=4 * 1024 * 1024)  # exactly fits
    with pytest.raises(BenchError, match="more than this machine's memory"):
        check_inputs_fit([[1024, 1024], [1]], memory=4 * 1024 * 1024)


@pytest.mark.parametrize(("body", "top", "raised"), [
    ("raise SystemExit(0)", "", "SystemExit: 0"),
    ("raise SystemExit('bye')", "", "SystemExit: bye"),
    ("raise KeyboardInterrupt", "", "KeyboardInterrupt"),
    ("pass", "raise SystemExit(0)", "SystemExit: 0"),
], ids=["factory exit 0", "factory exit message", "factory ctrl-c", "module exit on import"])
def test_user_code_leaving_the_run_is_an_error_line(body: str, top: str, raised: str, tmp_path: Path) -> None:
    spec = _factory(tmp_path, body, top)
    done = _bench(spec, "--input-shape", "1,4", *FAST, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and spec in lines[0] and raised in lines[0], (done.returncode, done.stderr)
    assert not done.stdout


def test_a_real_ctrl_c_still_exits_130(tmp_path: Path) -> None:
    spec = _factory(tmp_path, "os.kill(os.getpid(), signal.SIGINT); time.sleep(30)")
    done = _bench(spec, "--input-shape", "1,4", *FAST, cwd=tmp_path)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "interrupted by SIGINT" in done.stderr
