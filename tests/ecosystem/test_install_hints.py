"""Installs that work (issue 37, item 3): every hint names a command that works, the hook audits without torch, py.typed ships."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ecosystem_helpers import REPO_ROOT
from wnaudit.core.torch_api import TORCH_INSTALL

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TEXTS = [
    *sorted((REPO_ROOT / "wnaudit").rglob("*.py")), *sorted((REPO_ROOT / "docs").glob("*.md")),
    *sorted((REPO_ROOT / "rules").glob("*.md")), REPO_ROOT / "README.md", REPO_ROOT / ".pre-commit-hooks.yaml",
    REPO_ROOT / "pyproject.toml",
]


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_no_text_names_the_unpublished_extra(path: Path):
    """``wnaudit[torch]`` asks a package index for a distribution nothing publishes (``.[torch]`` in a checkout works)."""
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"(?<![.\w/])wnaudit\[", text), f"{path.name} names wnaudit[...] from an index"


def test_every_install_hint_in_the_package_is_the_working_command():
    hints = [
        (path.name, hint.rstrip())
        for path in sorted((REPO_ROOT / "wnaudit").rglob("*.py"))
        for hint in re.findall(r"(?<!%)pip install[^\"'`\n]*", path.read_text(encoding="utf-8"))
    ]
    assert hints, "the hints moved: update this test"
    assert all(hint == TORCH_INSTALL.split("python -m ", 1)[1] for _, hint in hints), hints


def test_the_torch_extra_brings_numpy():
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {re.split(r"[<>=;\[ ]", r, maxsplit=1)[0] for r in extras["torch"]} >= {"torch", "safetensors", "numpy"}
    assert TORCH_INSTALL.split()[-3:] == ["torch", "safetensors", "numpy"]


def test_py_typed_ships_in_the_wheel():
    """hatch puts every file of the ``wnaudit`` package that git does not ignore into the wheel."""
    marker = REPO_ROOT / "wnaudit" / "py.typed"
    assert marker.is_file()
    ignored = subprocess.run(["git", "check-ignore", "-q", str(marker)], cwd=REPO_ROOT, capture_output=True)
    assert ignored.returncode == 1, "py.typed is git-ignored, so hatch would leave it out"
    wheel = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["wnaudit"] and "exclude" not in wheel and "only-include" not in wheel


def _block_torch(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in an environment where ``import torch`` fails, as in the pre-commit hook's."""
    code = "import sys; sys.modules['torch'] = None; from wnaudit.cli.command import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT), NO_COLOR="1"),
    )


def test_checkpoints_are_audited_without_torch_and_only_fix_asks_for_it(tmp_path: Path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 4, 3))
    torch.save(conv.state_dict(), tmp_path / "g.pt")
    save_file(conv.state_dict(), str(tmp_path / "g.safetensors"))
    audited = _block_torch("--output-format", "json", "g.pt", "g.safetensors", cwd=tmp_path)
    report = json.loads(audited.stdout)
    assert audited.returncode == 1 and report["errors"] == [], audited.stderr
    assert {f["path"] for f in report["findings"]} == {"g.pt", "g.safetensors"}
    fixed = _block_torch("--output-format", "json", "--fix", "g.safetensors", cwd=tmp_path)
    (error,) = json.loads(fixed.stdout)["errors"]
    assert fixed.returncode == 2 and TORCH_INSTALL in error["message"], error
