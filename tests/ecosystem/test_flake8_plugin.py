"""The source rules as a flake8 extension, exercised through the real flake8."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from ecosystem_helpers import BUGGY_WN101, WN101_LINE, write_buggy


def run_flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd,
        env=dict(os.environ, NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_flake8_reports_wn101_on_the_buggy_line(tmp_path: Path):
    write_buggy(tmp_path)
    proc = run_flake8("--select", "WN", "vocoder.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [line] = proc.stdout.splitlines()
    path, lineno, column, rest = line.split(":", 3)
    assert (path, int(lineno)) == ("vocoder.py", WN101_LINE)
    # flake8 prints 1-based columns; the call starts at column 9 of that line.
    source_line = BUGGY_WN101.splitlines()[WN101_LINE - 1]
    assert int(column) in (source_line.index("torch") + 1, source_line.index("remove_weight_norm") + 1)
    assert rest.strip().startswith("WN101 ")


def test_flake8_lists_the_plugin(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=60)
    assert "wnaudit:" in proc.stdout, proc.stdout


def test_noqa_and_ignore_are_flake8s_own(tmp_path: Path):
    source = BUGGY_WN101.replace(
        "remove_weight_norm(self.conv_pre)", "remove_weight_norm(self.conv_pre)  # noqa: WN101"
    )
    (tmp_path / "quiet.py").write_text(source, encoding="utf-8")
    write_buggy(tmp_path)
    assert run_flake8("--select", "WN", "vocoder.py", cwd=tmp_path).returncode == 1
    assert run_flake8("--select", "WN", "quiet.py", cwd=tmp_path).returncode == 0
    assert run_flake8("--select", "WN", "--extend-ignore", "WN101", "vocoder.py", cwd=tmp_path).returncode == 0


def test_clean_file_passes(tmp_path: Path):
    (tmp_path / "clean.py").write_text("import torch\n\nx = torch.zeros(3)\n", encoding="utf-8")
    proc = run_flake8("--select", "WN", "clean.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_plugin_never_imports_torch():
    code = (
        "import ast, sys\n"
        "from wnaudit.source.flake8_plugin import WnauditFlake8\n"
        f"source = {BUGGY_WN101!r}\n"
        "lines = source.splitlines(keepends=True)\n"
        "found = list(WnauditFlake8(ast.parse(source), 'v.py', lines).run())\n"
        "assert [f[2].split()[0] for f in found] == ['WN101'], found\n"
        "assert 'torch' not in sys.modules, 'the flake8 plugin imported torch'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_plugin_yields_flake8_tuples_with_0_based_columns():
    from wnaudit.source.flake8_plugin import WnauditFlake8

    lines = BUGGY_WN101.splitlines(keepends=True)
    [(line, column, text, kind)] = list(WnauditFlake8(ast.parse(BUGGY_WN101), "v.py", lines).run())
    assert line == WN101_LINE and kind is WnauditFlake8
    assert lines[line - 1][column:].startswith(("torch.nn.utils.remove_weight_norm", "remove_weight_norm"))
    assert text.startswith("WN101 ")
