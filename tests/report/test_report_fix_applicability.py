"""Issue 14 (3): fix applicability as data, enforced by --fix, shown by the text output.

``--fix`` applies safe fixes only; ``--unsafe-fixes`` also applies the ones that
need review (the rules whose page says so); ``[*]`` marks a safe fix, ``[-]`` one that
needs review; ``--show-fixes`` lists what changed; the summary says what was
fixed and what remains; every rule page's "Fix safety" states the applicability
the code declares.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wnaudit.cli.command import run
from wnaudit.common.findings import Applicability
from wnaudit.report.codes import code_registry
from wnaudit.report.rule_pages import page_sections, page_title
from wnaudit.source import all_rules

MIXED = """\
import torch
from torch.nn.utils.parametrizations import weight_norm

conv = weight_norm(torch.nn.Conv1d(2, 2, 3))
torch.nn.utils.remove_weight_norm(conv)
other = weight_norm(torch.nn.Conv1d(2, 2, 3))
torch.nn.utils.parametrize.remove_parametrizations(other)
"""
SAFE_LINE = "torch.nn.utils.remove_weight_norm(conv)"
REVIEW_LINE = "torch.nn.utils.parametrize.remove_parametrizations(other)"


def _cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, list[str], str]:
    capsys.readouterr()
    status = run([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.py"
    path.write_text(MIXED, encoding="utf-8")
    return path


def test_fix_applies_only_safe_fixes(capsys, mixed: Path):
    status, lines, _ = _cli(capsys, "--fix", mixed)
    text = mixed.read_text(encoding="utf-8")
    assert SAFE_LINE not in text, "the safe WN101 fix is applied"
    assert REVIEW_LINE in text, "the WN105 fix needs review: not applied without --unsafe-fixes"
    assert status == 1
    assert any(line.endswith("WN105 [-] remove_parametrizations called without the tensor name") for line in lines), lines
    assert "Found 2 findings (1 fixed, 1 remaining)." in lines
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in lines


def test_unsafe_fixes_applies_the_rest(capsys, mixed: Path):
    status, lines, _ = _cli(capsys, "--fix", "--unsafe-fixes", mixed)
    text = mixed.read_text(encoding="utf-8")
    assert SAFE_LINE not in text and REVIEW_LINE not in text
    assert status == 0
    assert lines[-1] == "Found 2 findings (2 fixed, 0 remaining)."


def test_diff_shows_what_fix_would_write(capsys, mixed: Path):
    status, lines, err = _cli(capsys, "--diff", mixed)
    assert f"-{SAFE_LINE}" in lines and f"-{REVIEW_LINE}" not in lines
    assert not any("WN10" in line or line.startswith("Found") for line in lines), "stdout is the patch alone"
    assert "WN105" in err and "Found 2 findings." in err
    _, lines, _ = _cli(capsys, "--diff", "--unsafe-fixes", mixed)
    assert f"-{SAFE_LINE}" in lines and f"-{REVIEW_LINE}" in lines
    assert mixed.read_text(encoding="utf-8") == MIXED


def test_marks_and_hint_in_the_report(capsys, mixed: Path):
    status, lines, _ = _cli(capsys, mixed)
    assert status == 1
    [safe] = [line for line in lines if " WN101 " in line]
    [review] = [line for line in lines if " WN105 " in line]
    assert " WN101 [*] " in safe and " WN105 [-] " in review
    assert lines[-2:] == [
        "Found 2 findings.",
        "[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]
    _, lines, _ = _cli(capsys, "--unsafe-fixes", mixed)
    assert lines[-1] == "[*] 2 fixable with the `--fix` option (1 of them need review [-])."


def test_show_fixes_lists_what_was_changed(capsys, mixed: Path):
    _, lines, _ = _cli(capsys, "--fix", "--show-fixes", mixed)
    start = lines.index("Fixed 1 finding:")
    assert lines[start + 1] == f"  {mixed}:5:1: WN101 {code_registry()['WN101'].title}"
    _, plain, _ = _cli(capsys, "--fix", mixed)
    assert not any(line.startswith("Fixed") for line in plain)


def test_checkpoint_fix_summary_says_fixed_and_remaining(capsys, tmp_path: Path):
    pytest.importorskip("torch")
    import shutil

    examples = Path(__file__).resolve().parents[2] / "examples"
    shutil.copyfile(examples / "checkpoints" / "g_00100000", tmp_path / "g_00100000")
    shutil.copyfile(examples / "legacy_vocoder.py", tmp_path / "legacy_vocoder.py")
    status, lines, _ = _cli(capsys, "--fix", tmp_path / "g_00100000", tmp_path / "legacy_vocoder.py")
    assert status == 1
    # 14 stored pairs folded; the two WN103 applications need review and remain.
    assert lines[-2:] == [
        "Found 16 findings (14 fixed, 2 remaining).",
        "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option).",
    ]


@pytest.mark.parametrize("code", sorted(code_registry()))
def test_rule_page_fix_safety_agrees_with_the_declared_applicability(code: str):
    """The registry (every entrance's declaration) and the page say the same."""
    info = code_registry()[code]
    fix_safety = page_sections(code)["Fix safety"].lower()
    expected = {Applicability.SAFE: "safe", Applicability.UNSAFE: "needs review", None: "no automatic fix"}
    assert fix_safety.startswith(expected[info.applicability]), (code, fix_safety[:60])
    assert page_title(code) == f"{code}: {info.title}", "one title shape for every page"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_source_rules_needing_review_are_the_documented_ones(rule):
    assert code_registry()[rule.code].applicability is rule.applicability
    documented_unsafe = {
        code for code in code_registry() if page_sections(code)["Fix safety"].lower().startswith("needs review")
    }
    assert (rule.applicability is Applicability.UNSAFE) == (rule.code in documented_unsafe)
