"""Issue 14 (6): honest install docs, a README that runs as written, documented outputs that are real."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from ecosystem_helpers import REPO_ROOT, run_wnaudit

DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
TEST_COMMAND = 'python -m pip install -e ".[test]" && python -m pytest'


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def _install_commands(text: str) -> list[str]:
    """Each ``pip install ...`` up to the end of the shell command (``&&``, ``;``, a comment, a backtick)."""
    return [re.split(r"&&|;|#|\|", command)[0] for command in re.findall(r"pip install[^`\n]*", text)]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_no_install_command_names_an_unpublished_distribution(document: Path):
    """`pip install wnaudit` would fetch whatever someone registers under that free name."""
    for command in _install_commands(document.read_text(encoding="utf-8")):
        requirements = re.findall(r'"[^"]*"|\S+', command[len("pip install"):])
        for requirement in requirements:
            requirement = requirement.strip('"')
            bare = re.match(r"^wnaudit(\[[^\]]*\])?(==.*)?$", requirement)
            assert bare is None, f"{document.name}: {command!r} names the unpublished distribution"


def test_pre_commit_manifest_names_no_index_install():
    text = (REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "pip install wnaudit" not in text


def test_readme_quick_start_has_exactly_the_two_set_up_commands():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    [block] = _blocks(quick_start, "bash")
    commands = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 2
    assert "wnaudit examples/" in commands[0] and "pip install" in commands[0]
    assert commands[1] == TEST_COMMAND


def test_readme_drifts_are_fixed():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "libcst and click only" not in readme, "libcst brings PyYAML"
    assert "PyYAML" in readme
    getting_started = (REPO_ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert "without it a checkpoint input gets one clear error" not in getting_started
    assert "The checkpoint audit works\nwithout torch too" in getting_started


def test_readme_python_snippet_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("torch")
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    [snippet] = _blocks(readme, "python")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        exec(compile(snippet, "README.md", "exec"), namespace)  # noqa: S102 - our own docs
    assert sorted(f.code for f in namespace["findings"]) == ["WN201", "WN203"]  # type: ignore[attr-defined]
    assert namespace["names"] == ["0.weight"]


PORT_PY = """\
import torch
from torch.nn.utils.parametrizations import weight_norm

conv = weight_norm(torch.nn.Conv1d(2, 2, 3))
torch.nn.utils.remove_weight_norm(conv)
other = weight_norm(torch.nn.Conv1d(2, 2, 3))
torch.nn.utils.parametrize.remove_parametrizations(other)
"""


def _console(markdown: str, command: str) -> list[str]:
    for block in _blocks(markdown, "console"):
        lines = block.splitlines()
        if f"$ {command}" in lines:
            start = lines.index(f"$ {command}") + 1
            end = next((i for i in range(start, len(lines)) if lines[i].startswith("$ ")), len(lines))
            return lines[start:end]
    raise AssertionError(f"no console block runs {command!r}")


def test_documented_fix_safety_and_notebook_outputs_are_real(tmp_path: Path):
    doc = (REPO_ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    (tmp_path / "port.py").write_text(PORT_PY, encoding="utf-8")
    for command in ("wnaudit --fix port.py", "wnaudit --fix --unsafe-fixes --show-fixes port.py"):
        proc = run_wnaudit(*command.split()[1:], cwd=tmp_path)
        assert proc.stdout.splitlines() == _console(doc, command), command
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Port\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["%pip install torch\n", "import torch\n", "from torch.nn.utils.parametrizations import weight_norm\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n", "\n", "def fold(m):\n", "    if m is not None:\n",
                    "        torch.nn.utils.remove_weight_norm(m)\n"]},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "port.ipynb").write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    proc = run_wnaudit("port.ipynb", cwd=tmp_path)
    assert proc.stdout.splitlines()[:1] == _console(doc, "wnaudit port.ipynb")
