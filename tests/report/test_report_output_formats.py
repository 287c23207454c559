"""Issue 14 (4): output formats, statistics, colour, "nothing checked", syntax errors everywhere."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from wnaudit.cli.command import run
from wnaudit.report.codes import code_registry

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BUGGY = """\
import torch
from torch.nn.utils.parametrizations import weight_norm

conv = weight_norm(torch.nn.Conv1d(2, 2, 3))
torch.nn.utils.remove_weight_norm(conv)
"""


def _cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    status = run([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return target


def test_concise_is_the_default_and_a_checkpoint_is_one_short_line_per_code(capsys, examples: Path):
    """Issue 37: one line per checkpoint and code, with the count and the first names (not one per tensor)."""
    status, out, _ = _cli(capsys, "examples/checkpoints/g_00100000")
    assert status == 1
    assert (
        "examples/checkpoints/g_00100000: WN302 [*] "
        f"{code_registry()['WN302'].title} (14 tensors: generator.conv_post.weight, ...)"
    ) in out.splitlines()
    assert sum(" WN302 " in line for line in out.splitlines()) == 1
    assert "recomputed on every forward" not in out, "the explanation is not repeated per finding"
    assert _cli(capsys, "--output-format", "concise", "examples/checkpoints/g_00100000")[1] == out
    assert _cli(capsys, "--format", "text", "examples/checkpoints/g_00100000")[1] == out, "--format text is an alias"


def test_examples_print_one_line_per_finding_and_a_short_summary_under_160_columns(capsys, examples: Path):
    status, out, _ = _cli(capsys, "examples/")
    lines = out.splitlines()
    findings = [line for line in lines if re.search(r" WN\d{3} ", line)]
    assert status == 1 and len(findings) == 13  # 11 source findings, a line for each checkpoint's 14 tensors
    assert "Found 39 findings." in lines
    assert len(lines) <= len(findings) + 3  # "Checked ...", "Found ...", the fix hint
    assert max(map(len, lines)) < 160, max(lines, key=len)


def test_full_keeps_each_message_and_explains_each_code_once(capsys, examples: Path):
    _, out, _ = _cli(capsys, "--output-format", "full", "examples/")
    assert out.count("recomputed on every forward") == 28, "each checkpoint finding keeps its whole message"
    for code in ("WN101", "WN103", "WN301", "WN302"):
        assert out.count(f"\n{code}: {code_registry()[code].title}\n") == 1
        assert out.count(f"More: wnaudit --explain {code}") == 1


def test_grouped_lists_findings_under_their_file_with_counts(capsys, examples: Path):
    _, out, _ = _cli(capsys, "--output-format", "grouped", "examples/")
    lines = out.splitlines()
    assert "examples/checkpoints/g_00100000: 14 findings" in lines
    assert "examples/hift_vocoder.py: 6 findings" in lines
    assert "examples/legacy_vocoder.py: 2 findings" in lines
    header = lines.index("examples/hift_vocoder.py: 6 findings")
    assert re.match(r"^  54:13: WN101 \[\*\] ", lines[header + 1]), lines[header + 1]


def test_statistics_prints_counts_only(capsys, examples: Path):
    _, out, _ = _cli(capsys, "--statistics", "examples/")
    lines = out.splitlines()
    rows = [line.split("\t") for line in lines if "\t" in line]
    assert [(int(count), code) for count, code, _ in rows] == [(14, "WN301"), (14, "WN302"), (7, "WN101"), (2, "WN103"), (2, "WN110")]
    assert dict((code, mark_title) for _, code, mark_title in rows)["WN103"].startswith("[-] ")
    assert not any(re.search(r": WN\d{3} ", line) for line in lines), "no finding lines"


@pytest.fixture
def buggy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "b.py").write_text(BUGGY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path / "b.py"


def test_color_flag_and_environment(capsys, buggy: Path, monkeypatch: pytest.MonkeyPatch):
    assert "\x1b[" not in _cli(capsys, "b.py")[1], "not a terminal: no colour"
    assert "\x1b[" in _cli(capsys, "--color", "always", "b.py")[1]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in _cli(capsys, "b.py")[1]
    assert "\x1b[" not in _cli(capsys, "--color", "never", "b.py")[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in _cli(capsys, "b.py")[1], "NO_COLOR wins over FORCE_COLOR"
    assert "\x1b[" in _cli(capsys, "--color", "always", "b.py")[1], "the flag wins over both"
    assert "\x1b[" not in _cli(capsys, "--color", "always", "--output-format", "json", "b.py")[1]


def test_terminal_gets_colour_unless_no_color(capsys, buggy: Path, monkeypatch: pytest.MonkeyPatch):
    import sys

    class Tty:
        encoding = "utf-8"

        def __init__(self) -> None:
            self.parts: list[str] = []

        def write(self, text: str) -> int:
            self.parts.append(text)
            return len(text)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return True

    for env, coloured in ((None, True), ("1", False)):
        if env:
            monkeypatch.setenv("NO_COLOR", env)
        tty = Tty()
        monkeypatch.setattr(sys, "stdout", tty)
        run(["b.py"])
        assert ("\x1b[" in "".join(tty.parts)) is coloured


def test_nothing_checked_is_said(capsys, tmp_path: Path):
    (tmp_path / "README.txt").write_text("no python here\n", encoding="utf-8")
    status, out, err = _cli(capsys, tmp_path)
    assert status == 0
    assert "All checks passed!" not in out
    assert out.strip() == "Nothing checked: no Python file, notebook or checkpoint found."
    assert err.strip() == (
        "wnaudit: warning: no Python file, notebook or checkpoint found under the given paths: nothing checked"
    )
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    status, out, err = _cli(capsys, tmp_path)
    assert (status, out.strip(), err) == (0, "Checked 1 source file and 0 checkpoints.\nAll checks passed!", "")


def test_syntax_error_not_reported_in_a_file_that_names_no_weight_norm_api(capsys, tmp_path: Path):
    """Issue 21: such a file cannot hold a finding and no rule reads it: checked, not parsed (a general linter's job)."""
    (tmp_path / "broken.py").write_text("def f(:\n    return 1\n", encoding="utf-8")
    (tmp_path / "relevant.py").write_text("from torch.nn.utils import weight_norm\ndef f(:\n", encoding="utf-8")
    (tmp_path / "buggy.py").write_text(BUGGY, encoding="utf-8")
    status, out, err = _cli(capsys, tmp_path)
    assert status == 2
    assert f"wnaudit: error: {tmp_path / 'relevant.py'}: syntax error at line 2" in err
    assert "broken.py" not in err
    assert " WN101 " in out, "the other files are still linted"


@pytest.mark.parametrize("jobs", [1, 2])
def test_syntax_errors_found_serially_and_in_the_process_pool(tmp_path: Path, jobs: int):
    from wnaudit.common.options import RunOptions
    from wnaudit.source import lint_files

    files = []
    for index in range(6):
        path = tmp_path / f"m{index}.py"
        path.write_text("x = 1\n" if index % 2 else "def f(:  # weight_norm\n", encoding="utf-8")
        files.append(path)
    (tmp_path / "buggy.py").write_text(BUGGY, encoding="utf-8")
    files.append(tmp_path / "buggy.py")
    result = lint_files(files, RunOptions(jobs=jobs))
    assert sorted(Path(e.path).name for e in result.errors) == ["m0.py", "m2.py", "m4.py"]
    assert [f.code for f in result.findings] == ["WN101"]
