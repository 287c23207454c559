"""``wnaudit bench`` is registered on first use: a lint run never imports it (part of every run's start-up, issue 21)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from wnaudit.cli.command import main


def test_a_lint_run_does_not_import_bench(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n")
    code = (
        "import sys\nfrom wnaudit.cli.command import run\n"
        f"status = run(['--no-cache', '-q', {str(tmp_path)!r}])\n"
        "assert 'wnaudit.bench.command' not in sys.modules, 'bench imported'\nprint(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"


def test_bench_is_still_a_command() -> None:
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert result.exit_code == 0, result.output
    assert "MODEL" in result.output
    assert "bench" in main.list_commands(main.make_context("wnaudit", ["--version"], resilient_parsing=True))
