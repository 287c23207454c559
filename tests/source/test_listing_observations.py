"""Directory listings as observations of the kept cross-file answers (``project.list_kinds``, issue 21).

A listing keeps only the names an import can ask about, so a tool's cache
directory or a README appearing in a project (``.ruff_cache`` in the root, as
a ruff run leaves) does not drop the record, while a new module still does.
"""

from __future__ import annotations

import logging
import os
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


def _disk_of(listed: list[Path]) -> derived_cache._Disk:
    """A check's disk that holds the listings of ``listed`` as recorded now (as a run's observations would)."""
    disk = derived_cache._Disk()
    disk.listings = {str(directory): list_kinds(str(directory)) for directory in listed}
    return disk


def test_held_listings_answer_as_the_file_system_does(tmp_path: Path) -> None:
    """``isfile`` and an empty listing, answered from a parent's held listing, are what ``os`` and ``list_kinds`` say.

    Files, directories, links to each, a dangling link, a FIFO, names no import can ask for, nothing, and
    paths under each of those (a missing directory's children are known from the nearest recorded listing).
    """
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "m.py").write_text("")
    (package / "empty").mkdir()
    (package / "a.py").write_text("")
    (package / "my-tool.py").write_text("")
    (package / "to_sub").symlink_to(package / "sub")
    (package / "to_a.py").symlink_to(package / "a.py")
    (package / "dangling.py").symlink_to(package / "nowhere.py")
    os.mkfifo(package / "fifo")
    names = ["sub", "empty", "a.py", "my-tool.py", "to_sub", "to_a.py", "dangling.py", "fifo", "missing", "missing.py"]
    paths = [package / n for n in names] + [package / n / "x" for n in names] + [package / "missing" / "deeper" / "x.py", package / "sub" / "m.py", package / "to_sub" / "m.py"]
    disk = _disk_of([tmp_path, package])
    for path in paths:
        assert disk.is_file(str(path)) == os.path.isfile(path), path
        assert disk.same_listing(str(path), {}) == (list_kinds(str(path)) == {}), path


def test_held_listings_save_the_check_its_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Children of a held listing, and paths below a missing directory, are neither listed nor ``stat``-ed again."""
    package = _voc(tmp_path)
    asked: list[str] = []
    listed = _listed_by_the_check(monkeypatch)
    real = os.path.isfile
    monkeypatch.setattr(derived_cache.os.path, "isfile", lambda path: asked.append(path) or real(path))
    observed = derived_cache.Observations(
        files={str(package / "base.py"): True, str(package / "gone.py"): False, str(package / "nope" / "__init__.py"): False},
        listings={str(package): list_kinds(str(package)), str(package / "nope"): {}, str(package / "nope" / "deeper"): {}},
    )
    assert observed.still_hold(("files", "listings"))
    assert asked == [] and listed == [str(package)]
    (package / "nope").mkdir()
    (package / "nope" / "__init__.py").write_text("")
    assert not observed.still_hold(("files",))
    assert not observed.still_hold(("listings",))


def test_a_record_drops_only_what_a_parent_listing_answers(tmp_path: Path) -> None:
    """``isfile`` and empty listings a recorded parent listing states are dropped; one it contradicts is kept, and fails."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "m.py").write_text("")
    (package / "a.py").write_text("")
    (package / "my-tool.py").write_text("")
    observed = derived_cache.Observations(
        files={
            str(package / "a.py"): True, str(package / "gone.py"): False, str(package / "sub"): False,  # stated
            str(package / "my-tool.py"): True,  # a name no listing keeps: asked itself
            str(package / "sub" / "__init__.py"): False,  # under a directory the record did not list
        },
        listings={str(package): list_kinds(str(package)), str(package / "missing"): {}, str(package / "a.py"): {}},
    )
    observed.drop_implied()
    assert observed.files == {str(package / "my-tool.py"): True, str(package / "sub" / "__init__.py"): False}
    assert observed.listings == {str(package): list_kinds(str(package))}
    assert observed.still_hold(("files", "listings"))
    # A record whose isfile and listing disagree (the file became a directory between the two questions)
    # keeps both, so its check fails as it did before: the answers rest on the isfile.
    contradicted = derived_cache.Observations(
        files={str(package / "sub"): True, str(package / "a.py"): False},
        listings={str(package): list_kinds(str(package)), str(package / "sub"): {}},
    )
    contradicted.drop_implied()
    assert contradicted.files == {str(package / "sub"): True, str(package / "a.py"): False}
    assert contradicted.listings == {str(package): list_kinds(str(package)), str(package / "sub"): {}}
    assert not contradicted.still_hold(("files",)) and not contradicted.still_hold(("listings",))


def test_a_warm_record_holds_no_answered_observation(tmp_path: Path, cache_dir: Path) -> None:
    """After a run, the stored record names no ``isfile`` its parent's listing states; a new module is still seen."""
    import json

    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    cold = _answer(paths)
    [record] = list(cache_dir.rglob("derived/*.json"))
    raw = record.read_bytes()
    stored = next(iter(json.loads(raw[raw.index(b"\n") + 1:]).values()))["observed"]
    assert str(package / "__init__.py") not in stored["files"] and str(package) in stored["listings"]
    assert _answer(paths) == cold
    (package / "extra.py").write_text("x = 1\n")
    assert _answer(paths) == _answer(paths, cache=False)
