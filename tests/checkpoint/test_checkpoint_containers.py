"""Checkpoint containers are judged as torch reads them (issue 23, item 5).

Each case was reproduced on main: a concatenation of two torch zips audited
as ``WN302 [*]`` fixable that ``--fix`` then could not read; a big-endian
archive whose fold failed verification; a self-referencing ``data.pkl`` that
gave ``unexpected RecursionError``; a weight-norm ``x.weight_v`` beside
spectral-looking ``x.weight_u``/``x.weight_orig`` that was an input error.
"""

from __future__ import annotations

import array
import json
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from checkpoint_helpers import cli, vocoder_state
from wnaudit import fold_state_dict


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("wnaudit: error:")]


def _legacy_state() -> dict[str, torch.Tensor]:
    return dict(vocoder_state("legacy"))


def _concatenated(path: Path, first: object, second: object) -> Path:
    parts = []
    for index, obj in enumerate((first, second)):
        part = path.with_name(f"part{index}.pt")
        torch.save(obj, part)
        parts.append(part.read_bytes())
        part.unlink()
    path.write_bytes(b"".join(parts))
    return path


def test_two_concatenated_torch_zips_are_one_honest_error_not_fixable(tmp_path, capsys):
    path = _concatenated(tmp_path / "joined.pt", {"other": torch.ones(300)}, _legacy_state())
    with pytest.raises(RuntimeError):
        torch.load(path, weights_only=True)  # torch cannot read it, so wnaudit must not call it fixable
    for args in ((), ("--fix",)):
        before = path.read_bytes()
        status, out, err = cli(capsys, "--format", "json", *args, path)
        report = json.loads(out)
        assert status == 2 and report["findings"] == [], out + err
        (line,) = _errors(err)
        assert "concatenated" in line and "unexpected" not in line, line
        assert path.read_bytes() == before


def test_a_zip_torch_reads_despite_a_copy_before_it_is_still_folded(tmp_path, capsys):
    state = _legacy_state()
    torch.save(state, tmp_path / "one.pt")
    path = tmp_path / "twice.pt"
    path.write_bytes((tmp_path / "one.pt").read_bytes() * 2)  # torch reads the first copy
    torch.load(path, weights_only=True)
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0, out + err
    expected, _ = fold_state_dict(state)
    written = torch.load(path, weights_only=True)
    assert all(torch.equal(written[k], v) for k, v in expected.items()) and sorted(written) == sorted(expected)


def _big_endian(source: Path, target: Path) -> None:
    """The archive a big-endian machine writes: storages byte-swapped, ``byteorder`` says big."""
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as out:
        for info in archive.infolist():
            data = archive.read(info.filename)
            if info.filename.endswith("/byteorder"):
                data = b"big"
            elif "/data/" in info.filename and not info.filename.endswith("serialization_id"):
                values = array.array("f")
                values.frombytes(data)
                values.byteswap()
                data = values.tobytes()
            out.writestr(info, data)


def test_a_big_endian_torch_zip_folds_and_verifies(tmp_path, capsys):
    state = {k: v.float() for k, v in _legacy_state().items()}
    torch.save(state, tmp_path / "little.pt")
    path = tmp_path / "big.pt"
    _big_endian(tmp_path / "little.pt", path)
    loaded = torch.load(path, weights_only=True)
    assert all(torch.equal(loaded[k], v) for k, v in state.items())
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0 and _errors(err) == [], out + err
    expected, _ = fold_state_dict(state)
    written = torch.load(path, weights_only=True)
    assert sorted(written) == sorted(expected)
    assert all(torch.equal(written[k], v) for k, v in expected.items())
    with zipfile.ZipFile(path) as archive:
        (byteorder,) = [n for n in archive.namelist() if n.endswith("/byteorder")]
        assert archive.read(byteorder) == b"big"


def test_a_self_referencing_checkpoint_folds_without_recursion_error(tmp_path, capsys):
    state = _legacy_state()
    checkpoint: dict = {"generator": state}
    checkpoint["self"] = checkpoint
    state["loop"] = [state]
    path = tmp_path / "loop.pt"
    torch.save(checkpoint, path)
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0 and "unexpected" not in err, out + err
    written = torch.load(path, weights_only=True)
    assert written["self"] is written
    assert written["generator"]["loop"][0] is written["generator"]
    expected, _ = fold_state_dict({k: v for k, v in state.items() if k != "loop"})
    assert all(torch.equal(written["generator"][k], v) for k, v in expected.items())


def test_a_checkpoint_nested_too_deeply_is_one_honest_line(tmp_path, capsys, monkeypatch):
    from wnaudit.checkpoint import tables

    path = tmp_path / "deep.pt"
    torch.save({"generator": _legacy_state()}, path)

    def too_deep(*args: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(tables, "_rebuild", too_deep)
    status, out, err = cli(capsys, "--fix", path)
    (line,) = _errors(err)
    assert status == 2 and "nested too deeply" in line and "unexpected" not in line, line


@pytest.mark.parametrize("kind", ["torch", "safetensors"])
@pytest.mark.parametrize("fix", [False, True], ids=["audit", "fix"])
def test_a_weight_norm_v_beside_spectral_looking_keys_is_wn304(tmp_path, capsys, kind, fix):
    torch.manual_seed(0)
    state = {"x.weight_v": torch.randn(3, 3), "x.weight_u": torch.randn(3), "x.weight_orig": torch.randn(3, 3)}
    path = tmp_path / ("orphan.pt" if kind == "torch" else "orphan.safetensors")
    torch.save(state, path) if kind == "torch" else save_file(state, path)
    before = path.read_bytes()
    status, out, err = cli(capsys, "--format", "json", *(["--fix"] if fix else []), path)
    report = json.loads(out)
    assert status == 1 and report["errors"] == [], out + err
    assert {(f["code"], f["object"]) for f in report["findings"]} == {("WN304", "x.weight_v"), ("WN304", "x.weight_orig")}
    assert path.read_bytes() == before


def _declaring_zip_version(data: bytes, version: int) -> bytes:
    """Every central-directory entry says it needs zip version ``version`` / 10 to extract."""
    out = bytearray(data)
    start = out.find(b"PK\x01\x02")
    while start >= 0:
        out[start + 6] = version
        start = out.find(b"PK\x01\x02", start + 4)
    return bytes(out)


def test_a_zip_version_python_refuses_but_torch_reads_is_audited_and_folded(tmp_path, capsys):
    """Found by the hostile-checkpoint fuzzer: "zip file version 6.4" was a traceback (exit 1)."""
    path = tmp_path / "v64.pt"
    torch.save({"generator": _legacy_state(), "steps": 3}, path)
    path.write_bytes(_declaring_zip_version(path.read_bytes(), 64))
    with pytest.raises(NotImplementedError):
        zipfile.ZipFile(path)
    assert list(torch.load(path, weights_only=True)) == ["generator", "steps"]  # torch reads it
    status, out, err = cli(capsys, path)
    assert status == 1 and "WN302 [*]" in out and _errors(err) == [], out + err
    status, out, err = cli(capsys, "--fix", path)
    assert status == 0 and _errors(err) == [], out + err
    expected, _ = fold_state_dict(_legacy_state())
    fixed = torch.load(path, weights_only=True)
    assert fixed["steps"] == 3 and list(fixed["generator"]) == list(expected)
    assert all(torch.equal(fixed["generator"][k], v) for k, v in expected.items())


def test_a_zip_version_python_refuses_without_torch_data_is_one_line(tmp_path, capsys):
    path = tmp_path / "other.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hello")
    path.write_bytes(_declaring_zip_version(path.read_bytes(), 64))
    for args in ((), ("--fix",)):
        status, out, err = cli(capsys, *args, path)
        assert status == 2 and "Traceback" not in err and "unexpected" not in err, out + err
        (line,) = _errors(err)
        assert line.startswith(f"wnaudit: error: {path}: ") and "zip file version 6.4" in line


def test_a_zip_version_python_refuses_on_a_file_torch_cannot_read_is_torchs_line(tmp_path, capsys):
    """Found by the fuzzer: the damage probe after torch's error met the same field: 'unexpected NotImplementedError'."""
    path = tmp_path / "v64.pt"
    torch.save({"generator": _legacy_state(), "steps": 3}, path)
    data = bytearray(_declaring_zip_version(path.read_bytes(), 64))
    last = data.rfind(b"PK\x01\x02")
    data[last + 8] |= 1  # the last record marked encrypted: torch's reader refuses the file
    path.write_bytes(bytes(data))
    with pytest.raises(Exception):
        torch.load(path, weights_only=True)
    for args in ((), ("--fix",)):
        status, out, err = cli(capsys, *args, path)
        (line,) = _errors(err)
        assert status == 2 and "unexpected" not in line and "cannot read this torch zip archive" in line, out + err
