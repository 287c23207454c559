"""Stat keys (issue 21): a warm run trusts a file's stat instead of reading it, only where that is sound.

The record of derived answers keeps, per file, the stat taken before its bytes
were read ([size, mtime_ns, ctime_ns, inode, device]) with their digest.  A
later check that finds exactly that stat takes the digest without reading the
file; anything else is read.  A file changed less than ``RACY_NS`` before its
stamp is "racily clean" and never keyed (git's rule).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.source.test_derived_cache import MID, SERVE, _answer, _voc
from wnaudit.common import cache
from wnaudit.source import derived_cache
from wnaudit.source.derived_cache import Stamp, stamp, stat_key


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = derived_cache.read_source_file

    def counted(path: Path | str) -> bytes | None:
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(derived_cache, "read_source_file", counted)
    return reads


def test_a_warm_check_reads_no_file_whose_stat_is_recorded(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0)  # the files were just written: key them anyway
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    cold = _answer(paths, cache=False)
    assert _answer(paths) == cold  # writes the record, with the stat keys of the files the prefilter read
    reads = _count_reads(monkeypatch)
    assert _answer(paths) == cold
    assert [r for r in reads if r.startswith(str(package))] == []


def test_a_change_that_keeps_size_and_mtime_is_seen(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same size, mtime set back: the ctime (set by the kernel, never by a user) still differs, so the file is read."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    _answer(paths)
    _answer(paths)
    serve = package / "serve.py"
    before = os.stat(serve)
    time.sleep(0.05)  # past the coarse clock's tick: the change gets a later ctime
    edited = SERVE.replace("remove_weight_norm(Mid().conv)", "print(Mid().conv)".ljust(30))
    assert len(edited) == len(SERVE)
    serve.write_text(edited)
    os.utime(serve, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(serve).st_size == before.st_size and os.stat(serve).st_mtime_ns == before.st_mtime_ns
    assert _answer(paths) == _answer(paths, cache=False)


def test_a_replaced_file_is_read_again(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0)
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    _answer(paths)
    _answer(paths)
    time.sleep(0.05)
    (package / "mid.tmp").write_text(MID.replace("pass", "x = 1"))
    os.replace(package / "mid.tmp", package / "mid.py")
    reads = _count_reads(monkeypatch)
    assert _answer(paths) == _answer(paths, cache=False)
    assert str(package / "mid.py") in reads


def test_a_racily_clean_file_is_never_keyed(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    taken = stamp(str(path))
    assert taken is not None
    assert stat_key(taken, "00") is None  # changed within RACY_NS of its stamp
    later = Stamp(taken.clock_ns + cache.RACY_NS + 1, taken.status)
    assert stat_key(later, "00") == [
        taken.status.st_size, taken.status.st_mtime_ns, taken.status.st_ctime_ns, taken.status.st_ino, taken.status.st_dev, "00",
    ]


def test_a_damaged_stat_key_drops_the_record(tmp_path: Path) -> None:
    for bad in ([1, 2, 3], [1, 2, 3, 4, 5, 6], ["1", 2, 3, 4, 5, "d"], "x"):
        with pytest.raises(ValueError):
            derived_cache._stat_entry(bad)


def test_a_small_run_checks_no_record_of_the_whole_tree(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-file run keeps a record of its own packages: it never asks about the files of other packages."""
    first = _voc(tmp_path / "a")
    other = _voc(tmp_path / "b")
    monkeypatch.chdir(tmp_path)
    every = sorted([*first.glob("*.py"), *other.glob("*.py")])
    whole = _answer(every)
    asked: list[str] = []
    real = derived_cache.take_stamp  # what the check stamps files and directories with
    monkeypatch.setattr(derived_cache, "take_stamp", lambda path: asked.append(str(path)) or real(path))
    one = [first / "serve.py"]
    alone = _answer(one)
    assert alone == _answer(one, cache=False)
    assert alone and alone == [item for item in whole if str(item[0]) == str(first / "serve.py")]
    assert _answer(one) == alone  # its own record, kept and checked
    assert asked and not [path for path in asked if path.startswith(str(other))]


def _records(cache_dir: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in cache_dir.rglob("derived/*.json")}


def test_a_cold_run_keys_the_directories_it_lists(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first check after the run that wrote the record lists no directory that run listed (none changed since)."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    time.sleep(0.05)
    cold = _answer(paths)
    listed: list[str] = []
    real = derived_cache.list_kinds_and_links
    monkeypatch.setattr(derived_cache, "list_kinds_and_links", lambda directory: listed.append(directory) or real(directory))
    assert _answer(paths) == cold == _answer(paths, cache=False)
    assert str(package) not in listed
    assert [d for d in listed if (real(d)[0] or {}) and not real(d)[1]] == []  # only empty or linked listings, if any


def test_a_few_new_stat_keys_do_not_rewrite_the_record(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A touched file is read again and keyed anew, but the record is not written for it; many such keys are written."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    package = _voc(tmp_path)
    for index in range(40):
        (package / f"helper_{index}.py").write_text(f"VALUE = {index}\n")
    paths = sorted(package.glob("*.py"))
    time.sleep(0.05)
    cold = _answer(paths)
    assert _answer(paths) == cold
    written = _records(cache_dir)
    assert written
    time.sleep(0.05)
    os.utime(package / "helper_0.py")  # a new stat, the same bytes
    reads = _count_reads(monkeypatch)
    assert _answer(paths) == cold == _answer(paths, cache=False)
    assert _records(cache_dir) == written
    reads.clear()
    assert _answer(paths) == cold
    assert reads == [str(package / "helper_0.py")]  # its old key no longer holds: read each time, still right
    time.sleep(0.05)
    for path in paths:
        os.utime(path)
    assert _answer(paths) == cold
    assert _records(cache_dir) != written
