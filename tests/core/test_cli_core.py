"""Exit statuses and usage errors of the command line."""

from __future__ import annotations

from click.testing import CliRunner

from wnaudit.cli.command import main


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_no_paths_is_a_usage_error():
    result = _invoke()
    assert result.exit_code == 2
    assert "no paths given" in result.output


def test_fix_and_diff_together_is_a_usage_error(tmp_path):
    result = _invoke("--fix", "--diff", str(tmp_path))
    assert result.exit_code == 2


def test_output_without_fix_is_a_usage_error(tmp_path):
    assert _invoke("-o", str(tmp_path / "x.pt"), str(tmp_path)).exit_code == 2


def test_missing_input_is_reported_and_exits_2(tmp_path):
    result = _invoke(str(tmp_path / "nope.pt"))
    assert result.exit_code == 2
    assert f"wnaudit: error: {tmp_path / 'nope.pt'}: no such file or directory" in result.output


def test_empty_directory_is_clean_but_says_nothing_was_checked(tmp_path):
    result = _invoke(str(tmp_path))
    assert result.exit_code == 0
    assert "All checks passed!" not in result.output, "nothing was checked (issue 14)"
    assert "nothing checked" in result.output


def test_explain_unknown_code_exits_2():
    result = _invoke("--explain", "WN999")
    assert result.exit_code == 2
    assert "unknown rule code" in result.output


def test_check_is_the_default_command(tmp_path):
    assert _invoke("check", str(tmp_path)).exit_code == 0


def test_help_shows_the_plain_default_form():
    result = CliRunner().invoke(main, ["--help"], prog_name="wnaudit")
    assert result.exit_code == 0
    assert result.output.startswith("Usage: wnaudit [OPTIONS] [PATHS]...")
    assert "wnaudit bench --help" in result.output
