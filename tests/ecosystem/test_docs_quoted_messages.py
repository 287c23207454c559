"""Every message the docs quote is the program's (issue 37, item 8): documented error lines are produced
by running the documented command, and the README's summary after `--fix` on examples/ is the real one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ecosystem_helpers import REPO_ROOT

DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
CLEAN = "x = 1\n"
#: What each documented command assumes exists around it: (document, command) -> files.
SETUPS: dict[tuple[str, str], dict[str, str]] = {
    ("getting-started.md", "wnaudit src/"): {"pyproject.toml": '[tool.wnaudit]\nexclude = "build"\n', "src/ok.py": CLEAN},
    ("getting-started.md", "wnaudit --select WN999 src/"): {"src/ok.py": CLEAN},
}


def documented_messages() -> list[tuple[str, str, list[str]]]:
    """(document, command, the ``wnaudit: error/warning:`` lines quoted after it) in console blocks."""
    found = []
    for document in DOCUMENTS:
        for block in re.findall(r"```console\n(.*?)```", document.read_text(encoding="utf-8"), flags=re.S):
            command, quoted = None, []
            for line in [*block.splitlines(), "$"]:
                if line.startswith("$"):
                    if command and quoted:
                        found.append((document.name, command, quoted))
                    command, quoted = line[1:].split("#", 1)[0].strip(), []
                elif re.match(r"wnaudit: (error|warning): ", line):
                    quoted.append(line)
    return found


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    arguments = command.split()[1:]
    code = "import sys; from wnaudit.cli.command import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *arguments], cwd=cwd, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT), NO_COLOR="1"),
    )


def test_the_docs_quote_error_lines():
    assert len(documented_messages()) >= 2


@pytest.mark.parametrize("document, command, quoted", documented_messages(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_documented_error_line_is_what_the_command_prints(tmp_path: Path, document: str, command: str, quoted: list[str]):
    assert (document, command) in SETUPS, f"{document}: add the files `{command}` assumes to SETUPS"
    for name, text in SETUPS[document, command].items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    completed = _run(command, tmp_path)
    assert completed.stderr.splitlines() == quoted


def test_the_readme_summary_after_fixing_the_examples_is_real(tmp_path: Path):
    pytest.importorskip("torch")
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"`(Found \d+ findings \(\d+ fixed, \d+ remaining\)\.)` after `--fix` on `examples/`", readme)
    assert quoted is not None
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    completed = _run("wnaudit --fix --no-cache examples/", tmp_path)
    assert quoted[1] in completed.stdout.splitlines(), completed.stdout
