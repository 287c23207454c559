"""Directory listings as observations of the kept cross-file answers (``project.list_kinds``, issue 21).

A listing keeps only the names an import can ask about, so a tool's cache
directory or a README appearing in a project (``.ruff_cache`` in the root, as
a ruff run leaves) does not drop the record, while a new module still does.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.source.test_derived_cache import _answer, _voc
from wnaudit.source.project import list_kinds

REBUILT = "the record is rebuilt"


def test_a_listing_keeps_only_names_an_import_can_ask_for(tmp_path: Path) -> None:
    for name in ("mod.py", "stub.pyi", "pkg", ".ruff_cache", "README.md", "my-tool.py", "a.b.py", "__pycache__"):
        (tmp_path / name).mkdir() if "." not in name or name.startswith(".") else (tmp_path / name).write_text("")
    assert sorted(list_kinds(str(tmp_path)) or {}) == ["__pycache__", "mod.py", "pkg", "stub.pyi"]


def test_an_entry_no_import_can_name_keeps_the_record(tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    cold = _answer(paths, cache=False)
    assert _answer(paths) == cold
    (package / ".ruff_cache").mkdir()
    (package / "README.md").write_text("notes\n")
    with caplog.at_level(logging.DEBUG, logger="wnaudit.source.derived_cache"):
        assert _answer(paths) == cold
    assert REBUILT not in caplog.text
    (package / "extra.py").write_text("x = 1\n")  # a module an import could now find: the record is checked again
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="wnaudit.source.derived_cache"):
        assert _answer(paths) == _answer(paths, cache=False)
    assert REBUILT in caplog.text
