"""Verify before commit: a fixed checkpoint replaces nothing unless it reads back as intended.

Each test makes the writer go wrong in one way (a folded tensor's bytes, an
untouched tensor's bytes, a non-tensor value) and checks that the read-back
catches it: exit 2, one line saying verification failed, the original byte-identical.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import save_file

from checkpoint_helpers import cli, vocoder_state
from test_checkpoint_forms import _write_sharded
from wnaudit.checkpoint import safetensors_io, shards, torch_io
from wnaudit.common import atomic


def _error_line(err: str, path: Path) -> str:
    (line,) = [line for line in err.splitlines() if line.startswith("wnaudit: error:")]
    assert line.startswith(f"wnaudit: error: {path}: ")
    return line


def _assert_refused(capsys, path: Path, *extra: Any) -> None:
    before = path.read_bytes()
    status, out, err = cli(capsys, "--fix", *extra, path)
    assert status == 2, out + err
    assert "verification of the fixed file failed" in _error_line(err, path)
    assert path.read_bytes() == before
    assert not [p for p in path.parent.iterdir() if "wnaudit-tmp" in p.name]


@pytest.fixture
def safetensors_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.safetensors"
    save_file({k: v.contiguous() for k, v in vocoder_state("modern").items()}, path)
    return path


def test_folded_bytes_that_differ_from_the_fold_are_caught(safetensors_file, capsys, monkeypatch):
    real = safetensors_io.tensor_view

    def off_by_one_ulp(tensor):
        view = bytearray(real(tensor))
        view[0] ^= 1
        return memoryview(bytes(view))

    monkeypatch.setattr(safetensors_io, "tensor_view", off_by_one_ulp)
    _assert_refused(capsys, safetensors_file)


class _CorruptingReader:
    """The source as the copy sees it, with one flipped bit in every chunk."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def read(self, size: int = -1) -> bytes:
        data = bytearray(self._handle.read(size))
        if data:
            data[-1] ^= 0x80
        return bytes(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def test_untouched_bytes_that_differ_from_the_input_are_caught(safetensors_file, capsys, monkeypatch):
    real = safetensors_io.rewrite

    def rewrite(source, *args, **kwargs):
        return real(_CorruptingReader(source), *args, **kwargs)

    monkeypatch.setattr(safetensors_io, "rewrite", rewrite)
    _assert_refused(capsys, safetensors_file)


def _torch_file(tmp_path: Path) -> Path:
    path = tmp_path / "g_00500000"
    torch.save({"generator": vocoder_state("legacy"), "steps": 500000, "config": {"sr": 22050}}, path)
    return path


@pytest.mark.parametrize("what", ["folded tensor", "untouched tensor", "plain value"])
def test_torch_save_that_writes_something_else_is_caught(tmp_path, capsys, monkeypatch, what):
    from wnaudit.checkpoint import torch_zip

    def not_streamable(self, layout):
        raise torch_zip.NotStreamable("forced by the test")

    monkeypatch.setattr(torch_zip.StorageKeys, "resolve", not_streamable)
    path = _torch_file(tmp_path)
    real = torch_io.save

    def save(obj, handle, fmt, progress):
        generator = dict(obj["generator"])
        if what == "folded tensor":
            generator["conv_pre.weight"] = torch.nextafter(generator["conv_pre.weight"], torch.tensor(2.0))
        elif what == "untouched tensor":
            generator["conv_pre.bias"] = generator["conv_pre.bias"].clone()
            generator["conv_pre.bias"][0] += 1
        obj = {**obj, "generator": generator, "steps": obj["steps"] + (what == "plain value")}
        return real(obj, handle, fmt, progress)

    monkeypatch.setattr(torch_io, "save", save)
    _assert_refused(capsys, path)


def test_byte_copy_for_output_is_verified(tmp_path, capsys, monkeypatch):
    clean = tmp_path / "clean.safetensors"
    save_file({"w": torch.ones(4)}, clean)
    out = tmp_path / "out.safetensors"
    real = atomic.shutil.copyfileobj  # the verified byte copy of a clean input

    def copy(source, target, length):
        real(_CorruptingReader(source), target, length)

    monkeypatch.setattr(atomic.shutil, "copyfileobj", copy)
    status, _, err = cli(capsys, "--fix", "-o", out, clean)
    assert status == 2 and "verification" in err and not out.exists()


def test_sharded_fix_verifies_each_shard(tmp_path, capsys, monkeypatch):
    directory = tmp_path / "ckpt"
    directory.mkdir()
    index, _ = _write_sharded(directory, "modern", "safetensors")
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    real = safetensors_io.rewrite

    def rewrite(source, *args, **kwargs):
        return real(_CorruptingReader(source), *args, **kwargs)

    monkeypatch.setattr(shards.safetensors_io, "rewrite", rewrite)
    status, out, err = cli(capsys, "--fix", index)
    assert status == 2 and "verification of the fixed file failed" in err
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before


@pytest.mark.parametrize("what", ["folded tensor", "untouched tensor", "untouched small tensor", "plain value"])
def test_streaming_writer_that_writes_something_else_is_caught(tmp_path, capsys, monkeypatch, what):
    import os

    from wnaudit.checkpoint import torch_zip

    path = _torch_file(tmp_path)
    if what == "folded tensor":
        from wnaudit.checkpoint import tensor_bytes

        real_view = tensor_bytes.tensor_view

        def off_by_one_ulp(tensor, *byteorder):
            view = bytearray(real_view(tensor, *byteorder))
            view[0] ^= 1
            return memoryview(bytes(view))

        monkeypatch.setattr(tensor_bytes, "tensor_view", off_by_one_ulp)
    elif what == "untouched small tensor":  # read and written through the writer's buffer
        real_pread = os.pread

        def pread_then_flip(fd, size, offset):
            data = real_pread(fd, size, offset)
            return data[:-1] + bytes([data[-1] ^ 0x80]) if size > 64 else data

        monkeypatch.setattr(os, "pread", pread_then_flip)
    elif what == "untouched tensor":
        monkeypatch.setattr(torch_zip, "_SMALL_RECORD", 0)  # every record copied in the kernel
        real_copy = torch_zip._copy_range

        def copy_then_flip(source_fd, offset, target_fd, size, progress):
            real_copy(source_fd, offset, target_fd, size, progress)
            if size > 64:  # a tensor record, not byteorder/version
                end = os.lseek(target_fd, 0, os.SEEK_CUR)
                last = bytes([os.pread(source_fd, 1, offset + size - 1)[0] ^ 0x80])
                os.pwrite(target_fd, last, end - 1)

        monkeypatch.setattr(torch_zip, "_copy_range", copy_then_flip)
    else:
        real_pickle = torch_zip.pickle_object
        monkeypatch.setattr(torch_zip, "pickle_object", lambda obj, *a: real_pickle({**obj, "steps": obj["steps"] + 1}, *a))
    _assert_refused(capsys, path)


def test_torch_zip_fix_streams(tmp_path, capsys, caplog):
    path = _torch_file(tmp_path)
    with caplog.at_level("DEBUG", logger="wnaudit"):
        status, out, err = cli(capsys, "--fix", path)
    assert status == 0, out + err
    assert "streamed (" in caplog.text
