"""Every byte the fold consumes is the byte torch would load (issue 11, cases 1 and 2).

Compressed zip records are decompressed exactly (never memory-mapped), a record
shorter than its storage is refused, and a tensor view reaching past its storage
is refused, before any tensor data is read.
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile
from pathlib import Path

import pytest
import torch
from torch import nn

from checkpoint_helpers import WEIGHT_NORMS, cli, vocoder_state
from wnaudit import fold_state_dict


def _rezip(source: Path, target: Path, compression: int, edit=None) -> None:
    """Re-zip every member of a torch archive as the ``zip`` tool or a storage pipeline would."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", compression) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if edit is not None:
                data = edit(info.filename, data)
            dst.writestr(info.filename, data)


def _issue_example(tmp_path: Path) -> tuple[Path, dict[str, torch.Tensor]]:
    torch.manual_seed(0)
    plain = tmp_path / "p.pt"
    torch.save(nn.utils.weight_norm(nn.Conv1d(4, 8, 3)).state_dict(), plain)
    return plain, torch.load(plain, weights_only=True)


def _bits(tensor: torch.Tensor) -> bytes:
    return tensor.contiguous().view(-1).view(torch.uint8).numpy().tobytes()


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compressed_records_are_folded_from_their_true_bytes(tmp_path, capsys, compression):
    plain, original = _issue_example(tmp_path)
    model = tmp_path / "model.pt"
    _rezip(plain, model, compression)
    status, out, err = cli(capsys, "--fix", model)
    if compression != zipfile.ZIP_DEFLATED and status == 2:  # torch's reader knows deflate only
        assert err.count("wnaudit: error:") == 1 and str(model) in err
        return
    assert status == 0, out + err
    fixed = torch.load(model, weights_only=True)
    expected, _ = fold_state_dict(original)
    assert list(fixed) == list(expected)
    for key in expected:
        assert _bits(fixed[key]) == _bits(expected[key]), key
    assert fixed["bias"][0].item() == pytest.approx(original["bias"][0].item())


def test_compressed_vocoder_checkpoint_is_folded_exactly(tmp_path, capsys):
    state = vocoder_state("modern")
    plain = tmp_path / "plain.pt"
    torch.save({"generator": state}, plain)
    model = tmp_path / "g_00500000"
    _rezip(plain, model, zipfile.ZIP_DEFLATED)
    status, out, err = cli(capsys, "--fix", model)
    assert status == 0 and f"Found {WEIGHT_NORMS} findings ({WEIGHT_NORMS} fixed, 0 remaining)." in out, out + err
    expected, _ = fold_state_dict(state)
    fixed = torch.load(model, weights_only=True)["generator"]
    assert all(_bits(fixed[k]) == _bits(expected[k]) for k in expected)


def _short_record(tmp_path: Path) -> Path:
    plain, original = _issue_example(tmp_path)
    biggest = max(original.values(), key=lambda t: t.numel())
    key = None
    with zipfile.ZipFile(plain) as archive:
        for info in archive.infolist():
            if "/data/" in info.filename and info.file_size == biggest.numel() * 4:
                key = info.filename
    assert key is not None
    short = tmp_path / "short.pt"
    _rezip(plain, short, zipfile.ZIP_STORED, lambda name, data: data[:100] if name == key else data)
    return short


@pytest.mark.parametrize("fix", [False, True])
def test_record_shorter_than_its_storage_is_refused(tmp_path, capsys, fix):
    short = _short_record(tmp_path)
    before = short.read_bytes()
    status, out, err = cli(capsys, *(["--fix"] if fix else []), short)
    assert status == 2
    (line,) = [line for line in err.splitlines() if line.startswith("wnaudit: error:")]
    assert line.startswith(f"wnaudit: error: {short}: damaged torch zip archive: record data/") and "holds 100 bytes" in line
    assert short.read_bytes() == before


class _FakeStorage:
    def __init__(self, key: str, numel: int) -> None:
        self.key, self.numel = key, numel


class _FakeTensor:
    def __init__(self, storage: _FakeStorage, offset: int, size: tuple[int, ...], stride: tuple[int, ...]) -> None:
        self.args = (storage, offset, torch.Size(size), stride, False, collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


class _ArchivePickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _FakeStorage):
            return ("storage", torch.FloatStorage, obj.key, "cpu", obj.numel)
        return None


def _hand_made_archive(path: Path, views: dict[str, tuple[int, tuple[int, ...], tuple[int, ...]]], numel: int) -> None:
    """A torch zip whose ``data.pkl`` builds each named tensor as the given view of one storage."""
    storage = _FakeStorage("0", numel)
    state = collections.OrderedDict((name, _FakeTensor(storage, *view)) for name, view in views.items())
    buffer = io.BytesIO()
    _ArchivePickler(buffer, protocol=2).dump(state)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", buffer.getvalue())
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/data/0", torch.arange(numel, dtype=torch.float32).numpy().tobytes())
        archive.writestr("archive/version", "3\n")


def test_hand_made_archive_is_what_torch_loads(tmp_path):
    path = tmp_path / "ok.pt"
    _hand_made_archive(path, {"conv.weight_g": (0, (2, 1), (1, 1)), "conv.weight_v": (2, (2, 3), (3, 1))}, 8)
    loaded = torch.load(path, weights_only=True)
    assert loaded["conv.weight_v"].tolist() == [[2, 3, 4], [5, 6, 7]]


@pytest.mark.parametrize(
    "view, problem",
    [
        ((4, (2, 3), (3, 1)), "past the storage"),  # elements 4..9 of an 8-element storage
        ((0, (2, 3), (6, 1)), "past the storage"),  # a stride that steps out
        ((0, (2, 3), (3, -1)), "negative"),
    ],
)
@pytest.mark.parametrize("fix", [False, True])
def test_view_outside_its_storage_is_refused_before_reading(tmp_path, capsys, view, problem, fix):
    path = tmp_path / "bad.pt"
    _hand_made_archive(path, {"conv.weight_g": (0, (2, 1), (1, 1)), "conv.weight_v": view}, 8)
    before = path.read_bytes()
    status, out, err = cli(capsys, *(["--fix"] if fix else []), path)
    assert status == 2, out + err
    (line,) = [line for line in err.splitlines() if line.startswith("wnaudit: error:")]
    assert line.startswith(f"wnaudit: error: {path}: ") and problem in line
    assert path.read_bytes() == before


def test_storage_without_a_record_is_refused(tmp_path, capsys):
    path = tmp_path / "bad.pt"
    _hand_made_archive(path, {"conv.weight_g": (0, (2, 1), (1, 1)), "conv.weight_v": (2, (2, 3), (3, 1))}, 8)
    broken = tmp_path / "broken.pt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(broken, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith("data/0"):
                dst.writestr(info.filename, src.read(info.filename))
    status, out, err = cli(capsys, "--fix", broken)
    assert status == 2 and "missing record data/0" in err
