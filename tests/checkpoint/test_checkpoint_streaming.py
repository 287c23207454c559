"""The streaming torch-zip fix (issue 11, case 7): untouched records copied in the kernel,
one folded tensor in memory at a time, the result what torch.save of the fold would load as."""

from __future__ import annotations

import errno
import os
import weakref
import zipfile

import pytest
import torch

from checkpoint_helpers import WEIGHT_NORMS, cli, vocoder_state
from wnaudit import fold_state_dict
from wnaudit.checkpoint import formats, torch_zip


def _checkpoint(tmp_path):
    path = tmp_path / "g_00500000"
    state = vocoder_state("legacy")
    extra = {"table": torch.randn(1 << 18), "ids": torch.arange(10)}
    torch.save({"generator": state, "extra": extra, "steps": 7}, path)
    return path, state, extra


def _assert_fixed(path, state, extra):
    expected, _ = fold_state_dict(state)
    for mmap in (False, True):
        fixed = torch.load(path, weights_only=True, mmap=mmap)
        assert list(fixed) == ["generator", "extra", "steps"] and fixed["steps"] == 7
        assert list(fixed["generator"]) == list(expected)
        assert all(torch.equal(fixed["generator"][k], v) for k, v in expected.items())
        assert all(torch.equal(fixed["extra"][k], v) for k, v in extra.items())
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None  # every CRC right
        for info in archive.infolist():
            if "/data/" in info.filename:
                with open(path, "rb") as handle:
                    handle.seek(info.header_offset + 26)
                    name, extra_length = (int.from_bytes(handle.read(2), "little") for _ in range(2))
                assert (info.header_offset + 30 + name + extra_length) % torch_zip.ALIGNMENT == 0


def test_untouched_records_are_copied_in_the_kernel(tmp_path, capsys, monkeypatch):
    path, state, extra = _checkpoint(tmp_path)
    copied = []
    real = os.copy_file_range

    def counting(src, dst, count, offset_src=None, *rest):
        done = real(src, dst, count, offset_src, *rest)
        copied.append(done)
        return done

    monkeypatch.setattr(os, "copy_file_range", counting)
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0 and f"Found {WEIGHT_NORMS} findings ({WEIGHT_NORMS} fixed, 0 remaining)." in out, out + err
    untouched = [t.numel() * t.element_size() for k, t in state.items() if not k.endswith(("_g", "_v"))]
    untouched += [t.numel() * t.element_size() for t in extra.values()]
    large = sum(size for size in untouched if size > torch_zip._SMALL_RECORD)
    assert large >= 1 << 20 and sum(copied) >= large, "large records are copied in the kernel"
    assert sum(copied) < sum(untouched), "small records go through the buffered writer"
    _assert_fixed(path, state, extra)


def test_small_records_are_batched_into_few_writes(tmp_path, capsys, monkeypatch):
    """100,000 small records were 300,000 write syscalls; now a buffer is flushed a few times."""
    path = tmp_path / "many.pt"
    torch.manual_seed(0)
    state = {}
    for i in range(300):
        state[f"l{i}.weight_g"] = torch.rand(4, 1, 1) + 0.5
        state[f"l{i}.weight_v"] = torch.randn(4, 4, 3)
        state[f"l{i}.bias"] = torch.randn(4)
    torch.save(state, path)
    writes = []
    real = os.write

    def counting(fd, data):
        writes.append(len(memoryview(data)))
        return real(fd, data)

    monkeypatch.setattr(os, "write", counting)
    status, out, err = cli(capsys, "--fix", path)
    monkeypatch.setattr(os, "write", real)
    assert status == 0, out + err
    assert len(writes) < 50, f"{len(writes)} writes for 600 records"
    expected, _ = fold_state_dict(state)
    fixed = torch.load(path, weights_only=True)
    assert list(fixed) == list(expected) and all(torch.equal(fixed[k], v) for k, v in expected.items())


@pytest.mark.parametrize("missing", ["copy_file_range", "both"])
def test_fallbacks_without_in_kernel_copy_give_the_same_file(tmp_path, capsys, monkeypatch, missing):
    path, state, extra = _checkpoint(tmp_path)

    def unsupported(*args, **kwargs):
        raise OSError(errno.EXDEV if missing == "copy_file_range" else errno.ENOSYS, "not here")

    monkeypatch.setattr(os, "copy_file_range", unsupported)
    if missing == "both":
        monkeypatch.setattr(os, "sendfile", lambda *a: (_ for _ in ()).throw(OSError(errno.EINVAL, "not here")))
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0, out + err
    _assert_fixed(path, state, extra)


def test_one_folded_tensor_in_memory_at_a_time(tmp_path, capsys, monkeypatch):
    path, state, extra = _checkpoint(tmp_path)
    alive = {"now": 0, "most": 0}
    real = formats.fold_checked

    def tracked(tensors, planned):
        folded = real(tensors, planned)
        for item in planned:
            tensor = folded[item.group.folded_key]
            alive["now"] += 1
            alive["most"] = max(alive["most"], alive["now"])
            weakref.finalize(tensor, lambda: alive.__setitem__("now", alive["now"] - 1))
        return folded

    monkeypatch.setattr(formats, "fold_checked", tracked)
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0, out + err
    assert alive["most"] == 1
    _assert_fixed(path, state, extra)


def test_compressed_archive_falls_back_to_torch_save(tmp_path, capsys, caplog):
    path, state, extra = _checkpoint(tmp_path)
    deflated = tmp_path / "deflated.pt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    with caplog.at_level("DEBUG", logger="wnaudit"):
        status, out, err = cli(capsys, "--fix", deflated)
    assert status == 0 and "streamed (" not in caplog.text
    _assert_fixed(deflated, state, extra)


def test_zip64_records_are_readable(tmp_path, monkeypatch):
    """Force the zip64 fields (used above 4 GiB) on a small archive: zipfile and torch read it."""
    path, state, extra = _checkpoint(tmp_path)
    monkeypatch.setattr(torch_zip, "_ZIP64_LIMIT", 0)  # every size and offset "too large"
    from wnaudit.checkpoint import zip_layout

    with open(path, "rb") as source:
        layout = zip_layout.read_layout(source)
        out = tmp_path / "copy.pt"
        fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            writer = torch_zip.ZipStreamWriter(fd, lambda n: None)
            for name, record in layout.records.items():
                writer.add_copy(name, source.fileno(), record.data_offset, record.file_size, record.crc)
            writer.finish()
        finally:
            os.close(fd)
    with zipfile.ZipFile(out) as archive:
        assert archive.testzip() is None
    loaded = torch.load(out, weights_only=True)
    assert torch.equal(loaded["extra"]["table"], extra["table"])
