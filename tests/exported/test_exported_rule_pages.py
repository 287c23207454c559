"""The WN401/WN402 pages' examples run: the bad one triggers exactly its code, the good one is clean, --fix makes the bad clean.

(WN403's examples each need an AOTInductor compile, tens of seconds on CPU;
the package audit is exercised on the session's package in test_exported_audit.py.)
"""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import pytest

from wnaudit.cli.command import run
from wnaudit.report.rule_pages import page_sections


def _write_example(code: str, section: str, directory: Path) -> Path:
    source = re.search(r"```python\n(.*?)```", page_sections(code)[section], flags=re.DOTALL)
    assert source, f"{code} {section} has no python block"
    previous = Path.cwd()
    os.chdir(directory)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source.group(1), f"<{code} {section}>", "exec"), {"__name__": "rule_page_example"})  # noqa: S102 - our own docs
    finally:
        os.chdir(previous)
    return directory / "model.pt2"


@pytest.mark.parametrize("code", ["WN401", "WN402"])
def test_example_triggers_exactly_its_code_and_the_fix_cleans_it(code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad").mkdir()
    bad = _write_example(code, "Example", tmp_path / "bad")
    assert run(["--format", "json", str(bad)]) == 1
    assert {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]} == {code}
    assert run(["-q", "--fix", str(bad)]) == 0
    assert run(["-q", str(bad)]) == 0


@pytest.mark.parametrize("code", ["WN401", "WN402"])
def test_use_instead_is_clean(code: str, tmp_path: Path) -> None:
    assert run(["-q", str(_write_example(code, "Use instead", tmp_path))]) == 0


@pytest.mark.parametrize("code", ["WN401", "WN402", "WN403"])
def test_every_wn4xx_code_has_a_readme_row_a_docs_row_and_an_explain_page(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    readme_rows = [line for line in (root / "README.md").read_text().splitlines() if line.startswith(f"| {code} |")]
    assert len(readme_rows) == 1 and "exported program" in readme_rows[0]
    assert f"| {code} |" in (root / "docs" / "exported-programs.md").read_text()
    assert run(["--explain", code]) == 0
    assert capsys.readouterr().out.startswith(f"# {code}:")
