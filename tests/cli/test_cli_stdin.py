"""``wnaudit - --stdin-filename path.py`` (issue 37, item 7): lint stdin as that file; --fix prints the fixed source."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import BUGGY, wnaudit

from wnaudit.source import fix_source


def test_stdin_is_linted_as_the_named_file(tmp_path: Path):
    completed = wnaudit("-", "--stdin-filename", "src/model.py", cwd=tmp_path, stdin=BUGGY.encode())
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.decode().startswith("src/model.py:4:1: WN101 [*] ")
    assert not (tmp_path / "src").exists(), "nothing written"


def test_fix_prints_the_fixed_source_and_the_rest_on_stderr(tmp_path: Path):
    completed = wnaudit("--fix", "-", "--stdin-filename", "model.py", cwd=tmp_path, stdin=BUGGY.encode())
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.decode() == fix_source(BUGGY, "model.py")[0]
    assert "1 fixed" in completed.stderr.decode()
    assert list(tmp_path.iterdir()) == []


def test_clean_input_comes_back_unchanged_with_fix(tmp_path: Path):
    source = b"import torch\nx = torch.ones(2)\n"
    completed = wnaudit("--fix", "-", "--stdin-filename", "clean.py", cwd=tmp_path, stdin=source)
    assert (completed.returncode, completed.stdout) == (0, source)


def test_json_names_the_stdin_filename_and_a_syntax_error_is_one_error(tmp_path: Path):
    completed = wnaudit("--output-format", "json", "-", "--stdin-filename", "m.py", cwd=tmp_path, stdin=BUGGY.encode())
    assert [f["path"] for f in json.loads(completed.stdout)["findings"]] == ["m.py"]
    broken = wnaudit("--output-format", "json", "-", "--stdin-filename", "m.py", cwd=tmp_path,
                     stdin=b"from torch.nn.utils import weight_norm\ndef f(:\n")
    assert broken.returncode == 2
    assert json.loads(broken.stdout)["errors"][0]["path"] == "m.py"


def test_diff_of_stdin_is_a_patch(tmp_path: Path):
    (tmp_path / "model.py").write_text(BUGGY)
    completed = wnaudit("--diff", "-", "--stdin-filename", "model.py", cwd=tmp_path, stdin=BUGGY.encode())
    patch = completed.stdout.decode()
    assert patch.startswith("--- a/model.py\n+++ b/model.py\n") and "+torch.nn.utils.parametrize.remove_parametrizations" in patch
    assert (tmp_path / "model.py").read_text() == BUGGY, "--diff writes nothing"
