"""The discovery walk's kept listings and sniff verdicts (``cli/walk_cache.py``, issue 21).

A warm walk must find exactly what a cold one finds after any change of the
tree: an entry added, removed or renamed in a kept directory, a file ruled out
by its first bytes rewritten in place as a checkpoint, a changed exclusion.
And it must save the work: an unchanged directory is not listed, an unchanged
ruled-out file not opened (the tests that fail when the memo is removed).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.source.test_discovery_walk import _tree
from wnaudit.cli import discovery, walk_cache
from wnaudit.cli.command import main
from wnaudit.cli.discovery import Inputs, discover
from wnaudit.common import cache
from wnaudit.common.config import Config

LEGACY_TORCH = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19rest"


def _found(inputs: Inputs) -> tuple[list[Path], list[Path], list[Path], set[Path]]:
    return inputs.sources, inputs.checkpoints, inputs.exported, inputs.read_only


def _warm_equals_cold(root: Path, config: Config) -> Inputs:
    warm = discover([root], config, cache=True)
    assert _found(warm) == _found(discover([root], config))
    return warm


def _settle() -> None:
    """Past the coarse clock's tick: the next change gets later timestamps than the last stamp."""
    time.sleep(0.05)


@pytest.fixture
def keyed(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache in which just-written files and directories are keyed anyway (no racily-clean wait)."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    return cache_dir


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """(directories listed, files opened) from now on."""
    listed: list[str] = []
    opened: list[str] = []
    real_list, real_open = discovery._list, os.open

    def counted_list(directory: str) -> object:
        listed.append(directory)
        return real_list(directory)

    def counted_open(path: object, *args: object, **kwargs: object) -> int:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(discovery, "_list", counted_list)
    monkeypatch.setattr(os, "open", counted_open)
    return listed, opened


def _plain_tree(root: Path) -> None:
    """A tree without links (the cache lives beside it, in ``tmp_path``, never under it)."""
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "m.py").write_text("x = 1\n")
    (root / "pkg" / "notes.h").write_text("int x;\n")
    (root / "pkg" / "data.bin.txt").write_text("plain text, no checkpoint")
    (root / "g_0001").write_bytes(LEGACY_TORCH)


def test_an_unchanged_tree_is_neither_listed_nor_opened_again(tmp_path: Path, keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "tree"
    _plain_tree(tree)
    _settle()
    first = _warm_equals_cold(tree, Config(root=tree))
    listed, opened = _counting(monkeypatch)
    again = discover([tree], Config(root=tree), cache=True)
    assert _found(again) == _found(first)
    assert listed == []
    # Only the checkpoint is opened (by its sniffer); the ruled-out files are not.
    assert not [p for p in opened if p.endswith((".h", ".txt"))]


@pytest.mark.parametrize("change", ["add", "remove", "rename", "add_dir", "replace_by_dir"])
def test_an_entry_changed_in_a_kept_directory_is_seen(tmp_path: Path, keyed: Path, change: str) -> None:
    tree = tmp_path / "tree"
    _plain_tree(tree)
    _settle()
    _warm_equals_cold(tree, Config(root=tree))
    _warm_equals_cold(tree, Config(root=tree))
    _settle()
    pkg = tree / "pkg"
    if change == "add":
        (pkg / "new.py").write_text("")
        (pkg / "model.ckpt").write_bytes(LEGACY_TORCH)
    elif change == "remove":
        (pkg / "sub" / "m.py").unlink()
    elif change == "rename":
        (pkg / "sub" / "m.py").rename(pkg / "sub" / "n.py")
        (pkg / "notes.h").rename(pkg / "notes.py")
    elif change == "add_dir":
        (pkg / "deeper").mkdir()
        (pkg / "deeper" / "d.py").write_text("")
    else:
        (pkg / "notes.h").unlink()
        (pkg / "notes.h").mkdir()
        (pkg / "notes.h" / "inside.py").write_text("")
    warm = _warm_equals_cold(tree, Config(root=tree))
    names = {p.name for p in warm.sources + warm.checkpoints}
    expected = {"add": {"new.py", "model.ckpt"}, "remove": set(), "rename": {"n.py", "notes.py"},
                "add_dir": {"d.py"}, "replace_by_dir": {"inside.py"}}[change]
    assert expected <= names
    if change in ("remove", "rename"):
        assert "m.py" not in names


def test_a_ruled_out_file_rewritten_as_a_checkpoint_is_found(tmp_path: Path, keyed: Path) -> None:
    tree = tmp_path / "tree"
    _plain_tree(tree)
    _settle()
    _warm_equals_cold(tree, Config(root=tree))
    _warm_equals_cold(tree, Config(root=tree))
    _settle()
    target = tree / "pkg" / "data.bin.txt"
    before = os.stat(target)
    target.write_bytes(LEGACY_TORCH[: before.st_size].ljust(before.st_size, b"x"))  # same size, in place
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # the mtime set back: only the ctime tells
    warm = _warm_equals_cold(tree, Config(root=tree))
    assert target in warm.checkpoints


def test_a_changed_exclusion_is_seen_at_once(tmp_path: Path, keyed: Path) -> None:
    tree = tmp_path / "tree"
    _plain_tree(tree)
    _settle()
    plain = _warm_equals_cold(tree, Config(root=tree))
    _warm_equals_cold(tree, Config(root=tree))
    excluded = _warm_equals_cold(tree, Config(root=tree).with_overrides(extend_exclude=["sub", "g_*"]))
    assert tree / "pkg" / "sub" / "m.py" in plain.sources and tree / "g_0001" in plain.checkpoints
    assert tree / "pkg" / "sub" / "m.py" not in excluded.sources and excluded.checkpoints == []
    assert _found(_warm_equals_cold(tree, Config(root=tree))) == _found(plain)


def test_a_directory_with_a_link_is_always_listed(tmp_path: Path, keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    _tree(root, outside)
    _settle()
    config = Config(root=root)
    _warm_equals_cold(root, config)
    listed, _ = _counting(monkeypatch)
    _warm_equals_cold(root, config)
    assert str(root / "aa") in listed  # holds links (and a FIFO): its links' targets change without it
    assert str(root / "pkg") not in listed[: len(listed) // 2]  # a plain directory is not (the cold pass lists it)
    # The link's target changes: a warm walk follows it as a cold one does.
    _settle()
    (root / "aa" / "link.py").unlink()
    (root / "aa" / "link.py").symlink_to(root / "pkg" / "__init__.py")
    _warm_equals_cold(root, config)


def test_a_racily_clean_directory_is_not_kept(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "tree"
    _plain_tree(tree)  # just written: every directory changed within ``RACY_NS`` of the walk's stamp
    discover([tree], Config(root=tree), cache=True)
    listed, _ = _counting(monkeypatch)
    discover([tree], Config(root=tree), cache=True)
    assert str(tree / "pkg") in listed


@pytest.mark.parametrize("damage", ["shape", "digest"])
def test_a_damaged_record_is_a_miss(tmp_path: Path, keyed: Path, damage: str) -> None:
    tree = tmp_path / "tree"
    _plain_tree(tree)
    _settle()
    cold = discover([tree], Config(root=tree))
    discover([tree], Config(root=tree), cache=True)
    (record,) = keyed.glob("*/walk/*.json")
    (key, value), = cache.decode_file(walk_cache.WALKS, record.read_bytes()).items()
    if damage == "shape":
        for entry in value["dirs"].values():
            entry[2] = [["wrong.py"]]  # not a listing: the whole record is dropped
        record.write_bytes(cache.encode_file(walk_cache.WALKS, {key: value}))
    else:
        record.write_bytes(record.read_bytes().replace(b"m.py", b"w.py"))  # the file's digest no longer holds
    assert _found(discover([tree], Config(root=tree), cache=True)) == _found(cold)


def test_no_cache_writes_no_walk_record(tmp_path: Path, keyed: Path) -> None:
    tree = tmp_path / "tree"
    _plain_tree(tree)
    _settle()
    (tree / "g_0001").unlink()  # an unreadable checkpoint would make the exit status 2
    discover([tree], Config(root=tree), cache=False)
    result = CliRunner().invoke(main, ["--no-cache", "-q", "--exit-zero", str(tree)])
    assert result.exit_code == 0, result.output
    assert list(keyed.glob("*/walk/*.json")) == []
    result = CliRunner().invoke(main, ["-q", "--exit-zero", str(tree)])
    assert result.exit_code == 0, result.output
    assert len(list(keyed.glob("*/walk/*.json"))) == 1  # the command line keeps it
