"""``--diff`` prints a patch that ``git apply`` and ``patch -p1`` apply, equal to ``--fix`` (issue 13).

The cases are the ones the fixer writes: no newline at the end, CRLF, a BOM,
a latin-1 and a cp1251 coding cookie, a name with a space, a nested path.
stdout carries the patch alone; findings and the summary go to stderr.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import BUGGY, wnaudit

CASES: dict[str, bytes] = {
    "plain.py": BUGGY.encode(),
    "no_newline.py": BUGGY.rstrip("\n").encode(),
    "crlf.py": BUGGY.replace("\n", "\r\n").encode(),
    "crlf_no_newline.py": BUGGY.rstrip("\n").replace("\n", "\r\n").encode(),
    "bom.py": b"\xef\xbb\xbf" + BUGGY.encode(),
    "latin1.py": ("# -*- coding: latin-1 -*-\n# caf\xe9 \xe0 la cr\xe8me\n" + BUGGY + "s = '\xe9'\n").encode("latin-1"),
    "cp1251.py": ("# coding: cp1251\n# \u0441\u0432\u0451\u0440\u0442\u043a\u0430\n" + BUGGY.rstrip("\n")).encode("cp1251"),
    "with space.py": BUGGY.encode(),
    "pkg/sub/nested.py": BUGGY.encode(),
}

needs_tools = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("patch") is None, reason="needs git and GNU patch"
)


def _tree(root: Path, cases: dict[str, bytes]) -> Path:
    root.mkdir()
    for name, data in cases.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _diff(root: Path, *names: str) -> bytes:
    completed = wnaudit("--diff", *names, cwd=root)
    assert completed.returncode == 1, completed.stderr  # the findings remain: nothing was written
    assert b"Traceback" not in completed.stderr
    return completed.stdout


def _fixed(root: Path, *names: str) -> dict[str, bytes]:
    completed = wnaudit("--fix", *names, cwd=root)
    assert completed.returncode == 0, completed.stderr
    return _snapshot(root)


@needs_tools
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_applies_with_git_apply_and_patch_and_equals_fix(tmp_path, name):
    cases = {name: CASES[name]}
    patch_bytes = _diff(_tree(tmp_path / "diffed", cases), name)
    assert patch_bytes.startswith(b"--- a/")
    expected = _fixed(_tree(tmp_path / "fixed", cases), name)
    assert expected[name] != CASES[name]

    by_git = _tree(tmp_path / "git", cases)
    subprocess.run(["git", "apply", "-"], cwd=by_git, input=patch_bytes, check=True, capture_output=True)
    assert _snapshot(by_git) == expected

    by_patch = _tree(tmp_path / "patch", cases)
    subprocess.run(["patch", "-p1", "--batch", "--no-backup-if-mismatch"], cwd=by_patch, input=patch_bytes, check=True, capture_output=True)
    assert _snapshot(by_patch) == expected


@needs_tools
def test_one_patch_for_a_whole_tree_applies_and_equals_fix(tmp_path):
    patch_bytes = _diff(_tree(tmp_path / "diffed", CASES), ".")
    expected = _fixed(_tree(tmp_path / "fixed", CASES), ".")
    by_git = _tree(tmp_path / "git", CASES)
    subprocess.run(["git", "apply", "-"], cwd=by_git, input=patch_bytes, check=True, capture_output=True)
    assert _snapshot(by_git) == expected
    by_patch = _tree(tmp_path / "patch", CASES)
    subprocess.run(["patch", "-p1", "--batch"], cwd=by_patch, input=patch_bytes, check=True, capture_output=True)
    assert _snapshot(by_patch) == expected


def test_the_patch_keeps_each_files_own_bytes(tmp_path):
    root = _tree(tmp_path / "t", {k: CASES[k] for k in ("latin1.py", "no_newline.py", "crlf.py")})
    patch_bytes = _diff(root, "latin1.py", "no_newline.py", "crlf.py")
    assert b"s = '\xe9'" in patch_bytes  # latin-1 bytes, not UTF-8
    assert b"\n\\ No newline at end of file\n" in patch_bytes
    assert b"-torch.nn.utils.remove_weight_norm(conv)\r\n" in patch_bytes


def test_diff_keeps_findings_and_summary_off_stdout(tmp_path):
    root = _tree(tmp_path / "t", {"plain.py": CASES["plain.py"]})
    completed = wnaudit("--diff", "plain.py", cwd=root)
    out, err = completed.stdout.decode(), completed.stderr.decode()
    assert all(line[:1] in ("-", "+", " ", "@", "\\") for line in out.splitlines()), out
    assert "plain.py:4:1: WN101" in err and "Found 1 finding" in err
    assert (root / "plain.py").read_bytes() == CASES["plain.py"]


def test_diff_of_a_clean_file_is_empty(tmp_path):
    root = _tree(tmp_path / "t", {"clean.py": b"x = 1\n"})
    completed = wnaudit("--diff", "clean.py", cwd=root)
    assert completed.returncode == 0 and completed.stdout == b""
