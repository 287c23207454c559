"""Directory listings as observations of the kept cross-file answers (``project.list_kinds``, issue 21).

A listing keeps only the names an import can ask about, so a tool's cache
directory or a README appearing in a project (``.ruff_cache`` in the root, as
a ruff run leaves) does not drop the record, while a new module still does.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from tests.source.test_derived_cache import _answer, _voc
from wnaudit.common import cache
from wnaudit.source import derived_cache
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


def _listed_by_the_check(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    listed: list[str] = []
    real = derived_cache.list_kinds_and_links

    def counted(directory: str) -> tuple[dict[str, int] | None, bool]:
        listed.append(directory)
        return real(directory)

    monkeypatch.setattr(derived_cache, "list_kinds_and_links", counted)
    return listed


def test_an_unchanged_directory_is_not_listed_by_the_check(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing observation holds while the directory's stat is the one keyed with it; a new module is still seen."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    time.sleep(0.05)
    cold = _answer(paths, cache=False)
    assert _answer(paths) == cold  # writes the record
    assert _answer(paths) == cold  # its check keys the listings it compared
    listed = _listed_by_the_check(monkeypatch)
    assert _answer(paths) == cold
    assert str(package) not in listed
    time.sleep(0.05)  # past the coarse clock's tick: the new entry gives the directory a later ctime
    (package / "extra.py").write_text("x = 1\n")
    assert _answer(paths) == _answer(paths, cache=False)
    assert str(package) in listed


def test_a_listing_with_a_link_is_never_keyed(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0)
    package = _voc(tmp_path)
    (tmp_path / "real_helpers.py").write_text("x = 1\n")
    (package / "helpers.py").symlink_to(tmp_path / "real_helpers.py")
    paths = sorted(p for p in package.glob("*.py") if not p.is_symlink())
    time.sleep(0.05)
    _answer(paths)
    _answer(paths)
    listed = _listed_by_the_check(monkeypatch)
    assert _answer(paths) == _answer(paths, cache=False)
    assert str(package) in listed
