"""``--fix`` on a notebook keeps the file's line endings, and a cell's own (issue 23)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wnaudit.cli.command import run

BUGGY_CELL = [
    "import torch\n", "from torch.nn.utils.parametrizations import weight_norm\n",
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n", "torch.nn.utils.remove_weight_norm(conv)\n",
]


def _notebook(source: str | list[str]) -> dict:
    return {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Port\n", "text\n"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": source},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }


def _fix(path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.chdir(path.parent)
    assert run(["--fix", path.name]) == 0
    return path.read_bytes()


@pytest.mark.parametrize("dump", [{"indent": 1, "ensure_ascii": False}, {"indent": 2, "separators": (",", " : ")}],
                         ids=["nbformat-layout", "unrecognised-layout"])
def test_a_crlf_notebook_stays_crlf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dump: dict):
    path = tmp_path / "port.ipynb"
    path.write_bytes((json.dumps(_notebook(BUGGY_CELL), **dump) + "\n").replace("\n", "\r\n").encode())
    fixed = _fix(path, monkeypatch)
    assert fixed.count(b"\n") == fixed.count(b"\r\n") > 10, "every line ending is still CRLF"
    notebook = json.loads(fixed)
    assert "remove_weight_norm(conv)" not in "".join(notebook["cells"][1]["source"])
    if dump["indent"] == 1:  # a layout wnaudit recognises comes back exactly, endings included
        assert fixed == (json.dumps(notebook, **dump) + "\n").replace("\n", "\r\n").encode()


def test_an_lf_notebook_stays_lf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "port.ipynb"
    path.write_bytes((json.dumps(_notebook(BUGGY_CELL), indent=1) + "\n").encode())
    assert b"\r" not in _fix(path, monkeypatch)


def test_a_cell_written_with_crlf_keeps_its_crlf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "port.ipynb"
    path.write_bytes((json.dumps(_notebook("".join(BUGGY_CELL).replace("\n", "\r\n")), indent=1) + "\n").encode())
    source = json.loads(_fix(path, monkeypatch))["cells"][1]["source"]
    assert "remove_weight_norm(conv)" not in source
    assert source.count("\n") == source.count("\r\n") >= 3
