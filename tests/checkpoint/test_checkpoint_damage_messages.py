"""A damaged torch zip says it is damaged; ``--trust-pickle`` is suggested only for globals outside the safe set (issue 13)."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest
import torch

from wnaudit.cli.command import run


def _saved(tmp_path: Path) -> Path:
    path = tmp_path / "good.pt"
    torch.save({"conv.weight_g": torch.ones(3, 1, 1), "conv.weight_v": torch.randn(3, 2, 2)}, path)
    return path


def _record_offset(path: Path, name: str) -> int:
    data = path.read_bytes()
    info = zipfile.ZipFile(path).getinfo(name)
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    return info.header_offset + 30 + name_length + extra_length


def _prefix(path: Path) -> str:
    return zipfile.ZipFile(path).namelist()[0].split("/", 1)[0]


def _bad_crc(tmp_path: Path) -> Path:
    good = _saved(tmp_path)
    data = bytearray(good.read_bytes())
    data[_record_offset(good, f"{_prefix(good)}/data.pkl")] ^= 0xFF  # the PROTO opcode
    path = tmp_path / "bad_crc.pt"
    path.write_bytes(bytes(data))
    return path


def _rezipped(tmp_path: Path, name: str, change) -> Path:
    """A copy of the archive with every record passed through ``change`` (None drops it); CRCs recomputed."""
    good = _saved(tmp_path)
    path = tmp_path / name
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            content = change(info.filename, source.read(info))
            if content is not None:
                target.writestr(info, content)
    return path


def _missing_record(tmp_path: Path) -> Path:
    return _rezipped(tmp_path, "missing.pt", lambda name, data: None if name.endswith("/data/1") else data)


def _tampered_pickle(tmp_path: Path) -> Path:
    return _rezipped(tmp_path, "tampered.pt", lambda name, data: b"\x80\x02\xee" + data[3:] if name.endswith("data.pkl") else data)


def _error(capsys, *args: str) -> str:
    status = run(list(args))
    err = capsys.readouterr().err
    assert status == 2, err
    [line] = err.splitlines()
    return line


@pytest.mark.parametrize("trust", [False, True], ids=["untrusted", "trusted"])
def test_a_bad_crc_is_reported_as_damage(tmp_path, capsys, trust):
    path = _bad_crc(tmp_path)
    line = _error(capsys, *(["--trust-pickle"] if trust else []), str(path))
    assert line == f"wnaudit: error: {path}: damaged torch zip archive: bad CRC in record {_prefix(path)}/data.pkl"


def test_a_missing_record_is_reported_as_damage(tmp_path, capsys):
    path = _missing_record(tmp_path)
    line = _error(capsys, "--trust-pickle", str(path))
    assert line == f"wnaudit: error: {path}: damaged torch zip archive: missing record data/1"


def test_a_truncated_archive_is_reported_as_truncated(tmp_path, capsys):
    good = _saved(tmp_path)
    path = tmp_path / "truncated.pt"
    path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    line = _error(capsys, str(path))
    assert "truncated" in line and "--trust-pickle" not in line


@pytest.mark.parametrize("trust", [False, True], ids=["untrusted", "trusted"])
def test_an_unreadable_pickle_never_suggests_trust_pickle(tmp_path, capsys, trust):
    path = _tampered_pickle(tmp_path)
    line = _error(capsys, *(["--trust-pickle"] if trust else []), str(path))
    assert line.startswith(f"wnaudit: error: {path}: damaged torch zip archive: its pickle cannot be read (")
    assert "--trust-pickle" not in line


def test_a_pickle_naming_unsafe_globals_still_suggests_trust_pickle(tmp_path, capsys):
    path = tmp_path / "module.pt"
    torch.save(torch.nn.Linear(2, 2), path)
    line = _error(capsys, str(path))
    assert "holds pickled Python objects" in line and "rerun with --trust-pickle only if you trust it" in line
