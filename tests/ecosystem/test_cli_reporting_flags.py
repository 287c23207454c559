"""--statistics, --exit-zero, --quiet, --version and --explain, through the real CLI."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from ecosystem_helpers import REPO_ROOT, WN101_LINE, run_wnaudit, write_buggy

import wnaudit
from wnaudit.report.rule_pages import page_codes, read_page

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_buggy(tmp_path, "a.py")
    write_buggy(tmp_path, "b.py")
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    return tmp_path


def test_text_report_lists_findings_and_a_summary(project: Path):
    proc = run_wnaudit("a.py", "b.py", cwd=project)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert re.match(rf"^a\.py:{WN101_LINE}:\d+: WN101 ", lines[0]), lines
    assert re.match(rf"^b\.py:{WN101_LINE}:\d+: WN101 ", lines[1]), lines
    assert lines[-2:] == ["Found 2 findings.", "[*] 2 fixable with the `--fix` option."]
    assert "\x1b[" not in proc.stdout, "colour only on a terminal"


def test_statistics_counts_per_code(project: Path):
    proc = run_wnaudit("--statistics", ".", cwd=project)
    assert proc.returncode == 1
    [row] = [line for line in proc.stdout.splitlines() if re.match(r"^\s*\d+\tWN", line)]
    count, code, _title = row.split("\t", 2)
    assert (int(count), code) == (2, "WN101")


def test_quiet_prints_findings_only(project: Path):
    proc = run_wnaudit("--quiet", ".", cwd=project)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and all(" WN101" in line for line in lines)
    assert run_wnaudit("--quiet", "clean.py", cwd=project).stdout == ""


def test_exit_zero_keeps_reporting_but_exits_0(project: Path):
    proc = run_wnaudit("--exit-zero", ".", cwd=project)
    assert proc.returncode == 0
    assert proc.stdout.count(" WN101") == 2


def test_exit_zero_still_fails_on_unreadable_input(project: Path):
    proc = run_wnaudit("--exit-zero", "a.py", "missing.pt", cwd=project)
    assert proc.returncode == 2
    assert "missing.pt" in proc.stderr
    assert " WN101" in proc.stdout, "the other inputs are still reported"


def test_clean_run_exits_0(project: Path):
    proc = run_wnaudit("clean.py", cwd=project)
    assert (proc.returncode, proc.stdout.strip()) == (0, "All checks passed!")


def test_json_errors_also_get_one_line_on_stderr(project: Path):
    proc = run_wnaudit("--format", "json", "a.py", "missing.pt", cwd=project)
    assert proc.returncode == 2
    payload = json.loads(proc.stdout)
    assert [e["path"] for e in payload["errors"]] == ["missing.pt"]
    assert [line for line in proc.stderr.splitlines() if "missing.pt" in line] == [
        "wnaudit: error: missing.pt: no such file or directory"
    ]


@pytest.mark.parametrize("args", [["--version"], ["check", "--version"], ["--quiet", "--version"]])
def test_version(args: list[str], tmp_path: Path):
    proc = run_wnaudit(*args, cwd=tmp_path)
    assert proc.returncode == 0
    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert proc.stdout.strip() == f"wnaudit, version {wnaudit.__version__}"
    assert wnaudit.__version__ == declared


@pytest.mark.parametrize("spelling", ["WN201", "wn201"])
def test_explain_prints_the_rule_page(spelling: str, tmp_path: Path):
    proc = run_wnaudit("--explain", spelling, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == read_page("WN201")


def test_explain_covers_every_page(capsys: pytest.CaptureFixture[str]):
    from wnaudit.cli.command import run

    for code in page_codes():
        assert run(["--explain", code]) == 0
        assert capsys.readouterr().out == read_page(code), code


def test_explain_unknown_code_is_a_usage_error(tmp_path: Path):
    proc = run_wnaudit("--explain", "WN999", cwd=tmp_path)
    assert proc.returncode == 2
    assert "WN999" in proc.stderr and "WN201" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_statistics_and_quiet_keep_machine_formats_one_json_document(project: Path, output_format: str):
    proc = run_wnaudit("--format", output_format, "--statistics", "--quiet", ".", cwd=project)
    assert proc.returncode == 1
    json.loads(proc.stdout)  # nothing but the document on stdout
