"""The directory walk of discovery (issue 21): the same inputs, in the same order, as the ``os.walk`` it replaced.

The walk keeps names as text, tells links from the listing and opens a file
that is not source once (its first bytes decide whether a sniffer may say yes).
The reference below is the walk as it was; both must sort every kind of entry alike.
"""

from __future__ import annotations

import builtins
import os
import struct
from pathlib import Path
from typing import Callable

import pytest

from wnaudit.checkpoint.sniff import is_checkpoint_name, looks_like_checkpoint
from wnaudit.cli import discovery
from wnaudit.cli.discovery import SOURCE_SUFFIXES, Inputs, discover
from wnaudit.common.config import Config
from wnaudit.exported.sniff import looks_like_exported_program


def _reference_walk(root: Path, config: Config, found: Inputs, add: Callable[[list[Path], Path], None]) -> None:
    real_root = os.path.realpath(root)
    for directory, dirnames, filenames in os.walk(root):
        base = Path(directory)
        dirnames[:] = sorted(d for d in dirnames if not config.is_excluded(base / d, root))
        for name in sorted(filenames):
            candidate = base / name
            if name.endswith(discovery._OWN_SUFFIXES) or config.is_excluded(candidate, root):
                continue
            outside = candidate.is_symlink() and not discovery._inside(os.path.realpath(candidate), real_root)
            if candidate.suffix in SOURCE_SUFFIXES:
                if outside:
                    continue
                add(found.sources, candidate)
            elif looks_like_exported_program(candidate):
                add(found.exported, candidate)
                if outside:
                    found.read_only.add(candidate)
            elif is_checkpoint_name(candidate) or looks_like_checkpoint(candidate):
                add(found.checkpoints, candidate)
                if outside:
                    found.read_only.add(candidate)


def _tree(root: Path, outside: Path) -> None:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "m.py").write_text("x = 1\n")
    (root / "pkg" / "b.pyi").write_text("")
    (root / "pkg" / ".py").write_text("")  # no suffix: not source
    (root / "pkg" / "x..py").write_text("")
    (root / "aa").mkdir()
    (root / "aa" / "z.py").write_text("")
    (root / "aa" / "notes.h").write_text("int x;\n")
    (root / "aa" / "model_best.pth.tar").write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19rest")  # legacy torch, odd name
    (root / "aa" / "g_0001").write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19rest")
    header = b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    (root / "aa" / "weights.data").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)  # safetensors
    (root / "aa" / "empty.pt").write_bytes(b"")  # a checkpoint by name
    (root / "aa" / "UPPER.PTH").write_bytes(b"text")
    (root / "aa" / "model.safetensors.INDEX.JSON").write_text("{}")
    (root / "aa" / ".pt").write_bytes(b"")  # no suffix
    (root / "aa" / "short").write_bytes(b"PK")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("")  # excluded by the default patterns? decided by the config alike
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.py").write_text("")
    (outside / "far.py").write_text("")
    (outside / "far.ckpt").write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19")
    (outside / "dir").mkdir()
    (outside / "dir" / "in_linked_dir.py").write_text("")
    (root / "aa" / "link.py").symlink_to(outside / "far.py")
    (root / "aa" / "link.ckpt").symlink_to(outside / "far.ckpt")
    (root / "aa" / "inner.py").symlink_to(root / "pkg" / "sub" / "m.py")
    (root / "aa" / "broken.py").symlink_to(root / "nowhere.py")
    (root / "aa" / "dirlink").symlink_to(outside / "dir")
    (root / "pkg" / "x.wnaudit-tmp").write_text("")
    os.mkfifo(root / "aa" / "pipe")


@pytest.mark.parametrize("exclude", [[], ["aa"], ["pkg/sub"], ["*.h", "g_*"]])
def test_the_walk_finds_what_os_walk_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exclude: list[str]) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    _tree(root, outside)
    monkeypatch.chdir(root)
    config = Config(root=root).with_overrides(extend_exclude=exclude)
    for target in (Path("."), root):
        new = discover([target], config)
        monkeypatch.setattr(discovery, "_walk", _reference_walk)
        old = discover([target], config)
        monkeypatch.undo()
        monkeypatch.chdir(root)
        assert (new.sources, new.checkpoints, new.exported, new.read_only) == (old.sources, old.checkpoints, old.exported, old.read_only)
        assert new.sources  # the tree is walked at all


def test_a_file_that_is_not_source_is_opened_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(5):
        (tmp_path / f"header{index}.h").write_text("int x;\n")
    os.mkfifo(tmp_path / "pipe")  # never opened: not a regular file
    opened: list[str] = []

    def counting(real: Callable[..., object]) -> Callable[..., object]:
        def counted(path: object, *args: object, **kwargs: object) -> object:
            opened.append(str(path))
            return real(path, *args, **kwargs)

        return counted

    monkeypatch.setattr(os, "open", counting(os.open))
    monkeypatch.setattr(builtins, "open", counting(builtins.open))
    discover([tmp_path], Config(root=tmp_path))
    monkeypatch.undo()
    assert sorted(p for p in opened if p.endswith(".h")) == sorted(str(tmp_path / f"header{i}.h") for i in range(5))
    assert str(tmp_path / "pipe") not in opened


def test_the_project_walk_as_text_is_the_walk_as_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``project_file_names`` (the record's check) yields exactly ``str`` of each path ``project_files`` yields."""
    from wnaudit.source.serving.walk import project_file_names, project_files

    _tree(tmp_path / "root", tmp_path)
    (tmp_path / "root" / "src" / "lib").mkdir(parents=True)
    (tmp_path / "root" / "src" / "lib" / "__init__.py").write_text("")
    (tmp_path / "root" / "test_x.py").write_text("")
    monkeypatch.chdir(tmp_path / "root")
    for root in (tmp_path / "root", Path("."), Path("pkg")):
        for whole in (True, False):
            names = list(project_file_names(root, whole))
            assert names == [str(p) for p in project_files(root, whole)]
            assert all(str(Path(name)) == name for name in names)  # the text a ``Path`` walk gives: "." adds no prefix
            expected = sorted(str(root / "pkg" / n) for n in ("__init__.py", "x..py")) if root != Path("pkg") else []
            assert set(expected) <= set(names)


def test_the_project_walk_lists_each_directory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A subdirectory listed to see whether it is a package is not listed again when the walk enters it."""
    from wnaudit.source.serving import walk

    root = tmp_path / "proj"
    for directory in ("pkg/sub", "pkg/portion/deeper", "scripts/more", "venv", ".hidden", "tests", "pkg/__pycache__"):
        (root / directory).mkdir(parents=True)
    for name in ("setup.py", "pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/m.py", "pkg/portion/p.py",
                 "pkg/portion/deeper/d.py", "scripts/run.py", "scripts/more/x.py", "venv/pyvenv.cfg", "venv/v.py",
                 ".hidden/h.py", "tests/t.py", "pkg/test_m.py", "pkg/notes.txt", "pkg/nb.ipynb"):
        (root / name).write_text("")
    (root / "pkg" / "big.py").write_bytes(b"#" * 200)
    monkeypatch.setattr(walk, "DEFAULT_MAX_SOURCE_BYTES", 100)
    listed: list[str] = []
    real = walk.Listings.scan
    monkeypatch.setattr(walk.Listings, "scan", lambda self, directory: listed.append(directory) or real(self, directory))
    expected = {
        True: ["setup.py", "pkg/__init__.py", "pkg/nb.ipynb", "pkg/portion/p.py", "pkg/sub/__init__.py", "pkg/sub/m.py",
               "pkg/portion/deeper/d.py", "scripts/run.py", "scripts/more/x.py"],
        False: ["setup.py", "pkg/__init__.py", "pkg/nb.ipynb", "pkg/portion/p.py", "pkg/sub/__init__.py", "pkg/sub/m.py",
                "pkg/portion/deeper/d.py"],
    }
    for whole in (True, False):
        listed.clear()
        assert list(walk.project_file_names(str(root), whole)) == [str(root / name) for name in expected[whole]]
        assert len(listed) == len(set(listed))
        assert str(root / "pkg" / "sub") in listed and str(root / "venv") in listed


def test_the_record_check_sizes_walked_files_with_the_stats_it_took(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check stats each walked file once (its digest's stat is its size), and still sees one grow past the limit."""
    from wnaudit.source import derived_cache
    from wnaudit.source.serving import walk

    monkeypatch.setattr(walk, "DEFAULT_MAX_SOURCE_BYTES", 100)
    (tmp_path / "pkg").mkdir()
    files = [tmp_path / "pkg" / name for name in ("__init__.py", "a.py", "b.py")]
    for file in files:
        file.write_text("x = 1\n")
    key = "1" + str(tmp_path)
    observed = derived_cache.Observations(
        serving_reads={str(f): derived_cache.content_digest(f.read_bytes()) for f in files},
        walks={key: list(walk.project_file_names(str(tmp_path), True))},
    )
    stats: list[str] = []
    real = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: stats.append(os.fspath(path)) or real(path, *a, **k))
    assert observed.still_hold(("serving_reads",))
    digests_alone = sorted(p for p in stats if p.endswith(".py"))
    stats.clear()
    assert observed.still_hold(derived_cache.SERVING_KINDS)
    assert sorted(p for p in stats if p.endswith(".py")) == digests_alone
    files[1].write_text("#" * 200)  # too big for the walk now
    observed.serving_reads[str(files[1])] = derived_cache.content_digest(files[1].read_bytes())
    assert not observed.still_hold(derived_cache.SERVING_KINDS)
