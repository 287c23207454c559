"""Issue 21 item 4: a syntax error is reported for every file whose bytes could hold a finding and every file
a rule reads (WN110's serving files); the files the prefilter rules out count as checked and are not parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from wnaudit.cli.command import run
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_run

APPLIES = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
    "class Generator(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = weight_norm(torch.nn.Conv1d(1, 1, 3))\n"
)
#: Names no API, so the prefilter rules it out; WN110 reads it as code (it builds and evaluates the model).
SERVE_BROKEN = "from .model import Generator\n\n\ndef main():\n    model = Generator()\n    model.eval()\n    return model(\n"


def _errors(paths: list[Path], **options: object) -> dict[str, str]:
    result = lint_run.lint_files(paths, RunOptions(jobs=1, **options))  # type: ignore[arg-type]
    return {Path(e.path).name: e.message for e in result.errors}


def test_an_irrelevant_broken_file_is_not_reported_a_relevant_one_is(tmp_path: Path) -> None:
    irrelevant = tmp_path / "notes.py"
    irrelevant.write_text("def f(:\n    pass\n")
    relevant = tmp_path / "norms.py"
    relevant.write_text("from torch.nn.utils import weight_norm\ndef f(:\n")
    result = lint_run.lint_files([irrelevant, relevant], RunOptions(jobs=1, cache=False))
    assert [(Path(e.path).name, e.message.split(":")[0]) for e in result.errors] == [("norms.py", "syntax error at line 2, column 7")]
    assert result.parsed_sources == 1


@pytest.mark.parametrize("cache", [False, True])
def test_a_broken_serving_file_wn110_reads_is_reported_cold_and_warm(
    tmp_path: Path, cache: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # the source root
    package = tmp_path / "voc"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(APPLIES)
    (package / "serve.py").write_text(SERVE_BROKEN)
    paths = sorted(package.glob("*.py"))
    first = _errors(paths, cache=cache)
    assert list(first) == ["serve.py"] and first["serve.py"].startswith("syntax error at line 7")
    assert _errors(paths, cache=cache) == first  # warm: the kept WN110 answers, same report


def test_the_summary_line_says_plainly_what_was_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 37: no aside on parsed files that puzzles a newcomer (getting-started explains what is parsed)."""
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("from torch.nn.utils import weight_norm\n")
    assert run([str(tmp_path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Checked 2 source files and 0 checkpoints.\n" in out
