"""The zip directory is read once per version of a file (issue 23, linear cost), never stale."""

from __future__ import annotations

import gc
import os
import time
import zipfile
from pathlib import Path

import pytest
import torch

from checkpoint_helpers import cli, vocoder_state
from wnaudit.checkpoint import formats, zip_directory
from wnaudit.checkpoint.zip_layout import read_layout


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []
    real = zipfile.ZipFile._RealGetContents

    def counting(self: zipfile.ZipFile) -> None:
        reads.append(1)
        real(self)

    monkeypatch.setattr(zipfile.ZipFile, "_RealGetContents", counting)
    monkeypatch.setattr(zip_directory, "_last", None)
    return reads


def test_one_directory_read_serves_the_sniff_and_the_layout_check(tmp_path: Path, counted: list[int]):
    path = tmp_path / "g.pt"
    torch.save(vocoder_state("legacy"), path)
    with open(path, "rb") as handle:
        first = zip_directory.zip_infos(handle)
        layout = read_layout(handle)
    assert len(counted) == 1, "read_layout read the directory again (or twice, for data.pkl)"
    assert [info.filename for info in first] == list(layout.records)
    assert layout.verified and layout.storages


def test_a_file_rewritten_in_between_is_read_again(tmp_path: Path, counted: list[int]):
    path = tmp_path / "g.pt"
    torch.save(vocoder_state("legacy"), path)
    with open(path, "rb") as handle:
        before = [info.filename for info in zip_directory.zip_infos(handle)]
    torch.save({"only": torch.ones(3)}, path)
    with open(path, "rb") as handle:
        after = [info.filename for info in zip_directory.zip_infos(handle)]
    assert len(counted) == 2 and before != after
    assert after == [info.filename for info in zipfile.ZipFile(path).infolist()]


def test_the_same_size_rewritten_in_place_is_read_again(tmp_path: Path, counted: list[int]):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a/data.pkl", b"x")
    with open(path, "rb") as handle:
        zip_directory.zip_infos(handle)
    data = path.read_bytes().replace(b"a/data.pkl", b"b/data.pkl")
    stat = os.stat(path)
    time.sleep(0.05)  # past the file system's timestamp granularity
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and mtime: the change time differs
    with open(path, "rb") as handle:
        names = [info.filename for info in zip_directory.zip_infos(handle)]
    assert names == ["b/data.pkl"] and len(counted) == 2


def test_the_torch_fix_runs_with_the_cyclic_collector_paused_and_restores_it(tmp_path: Path, capsys, monkeypatch):
    path = tmp_path / "g.pt"
    torch.save(vocoder_state("legacy"), path)
    seen: list[bool] = []
    real = formats._audit_torch

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(formats, "_audit_torch", spy)
    assert gc.isenabled()
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0, out + err
    assert seen == [False] and gc.isenabled()
