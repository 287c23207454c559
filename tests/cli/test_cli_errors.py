"""Usage, configuration and output-path errors: one ``wnaudit: error:`` line, exit 2 (issues 13 and 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import BUGGY, wnaudit


def _error_lines(stderr: bytes) -> list[str]:
    return stderr.decode().splitlines()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--frobnicate", "."], "wnaudit: error: No such option '--frobnicate'"),
        (["--format", "nope", "."], "wnaudit: error: Invalid value for '--output-format' / '--format': 'nope' is not one of"),
        ([], "wnaudit: error: no paths given; try: wnaudit ."),
        (["--fix", "--diff", "."], "wnaudit: error: --fix and --diff are exclusive"),
        (["--jobs", "-3", "."], "wnaudit: error: Invalid value for '-j' / '--jobs'"),
        (["--select"], "wnaudit: error: Option '--select' requires an argument"),
        (["bench", "--frobnicate"], "wnaudit: error: No such option '--frobnicate'"),
    ],
    ids=["unknown-option", "bad-choice", "no-paths", "fix-and-diff", "bad-int", "missing-value", "bench"],
)
def test_usage_errors_are_one_line_without_the_click_usage_block(tmp_path, args, expected):
    completed = wnaudit(*args, cwd=tmp_path)
    assert completed.returncode == 2
    lines = _error_lines(completed.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith(expected)
    assert "Usage:" not in lines[0] and "check" not in lines[0] and "Try " not in lines[0]
    assert completed.stdout == b""


@pytest.mark.parametrize(
    ("args", "selector"),
    [(["--select", "WN999"], "WN999"), (["--select", "WN1,WN9"], "WN9"), (["--ignore", "X1"], "X1"),
     (["--extend-select", "WN5"], "WN5")],
)
def test_unknown_selectors_on_the_command_line_are_usage_errors(tmp_path, args, selector):
    (tmp_path / "bug.py").write_text(BUGGY)
    completed = wnaudit(*args, "bug.py", cwd=tmp_path)
    assert completed.returncode == 2
    [line] = _error_lines(completed.stderr)
    assert f"unknown rule selector '{selector}' (known prefixes: ALL, WN, WN1, WN2, WN3" in line
    assert b"All checks passed" not in completed.stdout


def test_an_unknown_selector_in_config_is_a_usage_error_not_a_green_build(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.wnaudit]\nselect = ["WN9"]\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bug.py").write_text(BUGGY)
    completed = wnaudit("src", cwd=tmp_path)
    assert completed.returncode == 2
    assert _error_lines(completed.stderr) == [
        "wnaudit: error: pyproject.toml: [tool.wnaudit] select: unknown rule selector 'WN9' "
        "(known prefixes: ALL, WN, WN1, WN2, WN3, WN4; codes WN101..WN403; wnaudit --explain CODE describes one)"
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[tool.wnaudit]\nexclude = "x"\n', "pyproject.toml: [tool.wnaudit] exclude: expected a list of strings, got a string"),
        ("tool = 5\n", "pyproject.toml: [tool]: expected a table, got an integer"),
        ('tool = "wnaudit"\n', "pyproject.toml: [tool]: expected a table, got a string"),
        ("[tool.wnaudit]\nexclude = {a = 1}\n", "pyproject.toml: [tool.wnaudit] exclude: expected a list of strings, got a table"),
        ("a = " + "[" * 50_000 + "]" * 50_000 + "\n", "pyproject.toml: invalid TOML: values nested too deeply to read"),
    ],
    ids=["exclude-string", "tool-int", "tool-string", "exclude-table", "deep-nesting"],
)
def test_config_errors_found_by_walking_up_are_one_line_exit_2(tmp_path, body, message):
    (tmp_path / "pyproject.toml").write_text(body)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bug.py").write_text(BUGGY)
    completed = wnaudit("pkg/bug.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert _error_lines(completed.stderr) == [f"wnaudit: error: {message}"]
    assert b"Traceback" not in completed.stderr


def test_output_pointing_at_a_directory_names_the_directory(tmp_path):
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04")
    (tmp_path / "out").mkdir()
    completed = wnaudit("--fix", "-o", "out", "model.pt", cwd=tmp_path)
    assert completed.returncode == 2
    assert _error_lines(completed.stderr) == ["wnaudit: error: -o/--output: out is a directory; give the path of the file to write"]


def test_output_in_a_missing_directory_is_named(tmp_path):
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04")
    completed = wnaudit("--fix", "-o", "nowhere/folded.pt", "model.pt", cwd=tmp_path)
    assert completed.returncode == 2
    [line] = _error_lines(completed.stderr)
    assert line.startswith("wnaudit: error: -o/--output: nowhere/folded.pt: directory ") and "nowhere does not exist" in line


def test_in_process_run_prints_the_same_one_line(tmp_path, capsys):
    from wnaudit.cli.command import run

    assert run(["--select", "WN999", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wnaudit: error: --select: unknown rule selector 'WN999'") and err.count("\n") == 1


def test_help_does_not_name_the_check_subcommand(tmp_path):
    completed = wnaudit("--help", cwd=tmp_path)
    assert completed.returncode == 0
    text = completed.stdout.decode()
    assert "--extend-select" in text and "--extend-exclude" in text and "--force-exclude" in text
    assert "wnaudit check" not in text


def test_path_that_cannot_be_found_still_one_line(tmp_path):
    completed = wnaudit(str(Path("missing.py")), cwd=tmp_path)
    assert completed.returncode == 2
    assert _error_lines(completed.stderr) == ["wnaudit: error: missing.py: cannot read: No such file or directory"]
