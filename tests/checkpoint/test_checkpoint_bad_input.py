"""Bad checkpoints: one clear line each, exit 2, the other inputs still audited, nothing written."""

from __future__ import annotations

import builtins
import json
import os
import pickle
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from checkpoint_helpers import WEIGHT_NORMS, cli, cli_json, vocoder_state
from test_checkpoint_forms import _write_sharded


def _good(tmp_path: Path) -> Path:
    path = tmp_path / "good.pt"
    torch.save(vocoder_state("legacy"), path)
    return path


def _g_fits_no_dim(path: Path) -> None:
    torch.save({"conv.weight_g": torch.ones(3, 1, 1), "conv.weight_v": torch.randn(2, 3, 5)}, path)


def _zero_bytes(path: Path) -> None:
    path.write_bytes(b"")


def _truncated_zip(path: Path) -> None:
    torch.save(vocoder_state("modern"), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _text(path: Path) -> None:
    path.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n")


def _corrupt_safetensors_header(path: Path) -> None:
    save_file({"a.weight": torch.ones(4)}, path)
    data = bytearray(path.read_bytes())
    data[9:13] = b"\xff\x00@@"  # not JSON any more
    path.write_bytes(bytes(data))


def _safetensors_offsets_past_end(path: Path) -> None:
    header = json.dumps({"w": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}).encode()
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 16)


def _plain_pickle(path: Path) -> None:
    path.write_bytes(pickle.dumps({"weight": [1.0, 2.0]}))


BAD = {
    "g fits no dim": ("bad.pt", _g_fits_no_dim, "fits no dimension"),
    "zero bytes": ("bad.pt", _zero_bytes, "empty file"),
    "truncated zip": ("bad.pth", _truncated_zip, "damaged torch zip archive: truncated or corrupt"),
    "text renamed .pt": ("bad.pt", _text, "text file"),
    "corrupt safetensors header": ("bad.safetensors", _corrupt_safetensors_header, "corrupt safetensors header"),
    "safetensors offsets past the end": ("bad.safetensors", _safetensors_offsets_past_end, "corrupt safetensors header"),
    "plain pickle": ("bad.bin", _plain_pickle, "plain pickle"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("fix", [False, True])
def test_bad_input_is_one_line_exit_2_others_still_processed(tmp_path, capsys, case, fix):
    name, make, expected = BAD[case]
    bad = tmp_path / name
    make(bad)
    good = _good(tmp_path)
    bad_before = bad.read_bytes()
    status, out, err = cli(capsys, *(["--fix"] if fix else []), bad, good)
    assert status == 2
    error_lines = [line for line in err.splitlines() if line.startswith("wnaudit: error:")]
    assert len(error_lines) == 1, err
    assert error_lines[0].startswith(f"wnaudit: error: {bad}: ") and expected in error_lines[0], err
    assert "Traceback" not in err
    assert bad.read_bytes() == bad_before
    if fix:
        assert f"Found {WEIGHT_NORMS} findings ({WEIGHT_NORMS} fixed, 0 remaining)." in out
    else:
        assert f"Found {WEIGHT_NORMS} findings" in out
    assert not list(tmp_path.glob(".*wnaudit-tmp"))


def test_unreadable_file(tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    bad = tmp_path / "locked.pt"
    torch.save(vocoder_state("modern"), bad)
    bad.chmod(0)
    try:
        status, report = cli_json(capsys, bad, _good(tmp_path))
    finally:
        bad.chmod(0o644)
    assert status == 2
    assert report["errors"] == [{"path": str(bad), "message": "permission denied: cannot read the file"}]
    assert len(report["findings"]) == WEIGHT_NORMS


def test_permission_error_becomes_one_line(tmp_path, capsys, monkeypatch):
    """Root reads any file, so the permission check itself is simulated here."""
    from wnaudit.checkpoint import audit

    bad = tmp_path / "locked.pt"
    bad.write_bytes(b"PK")
    real = audit.detect_format

    def refuse(path):
        if Path(path) == bad:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(audit, "detect_format", refuse)
    status, report = cli_json(capsys, bad, _good(tmp_path))
    assert status == 2
    assert report["errors"] == [{"path": str(bad), "message": "permission denied: cannot read the file"}]
    assert len(report["findings"]) == WEIGHT_NORMS


def test_traceback_only_with_verbose(tmp_path, capsys, caplog):
    bad = tmp_path / "bad.pt"
    _g_fits_no_dim(bad)
    with caplog.at_level("DEBUG", logger="wnaudit"):
        cli(capsys, bad)
        assert not any(r.exc_info for r in caplog.records)
        status, out, err = cli(capsys, "-v", bad)
    assert status == 2
    assert any(r.exc_info and "fits no dimension" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("problem", ["missing shard", "outside directory", "symlink outside"])
def test_bad_shard_index(tmp_path, capsys, problem):
    directory = tmp_path / "ckpt"
    directory.mkdir()
    index, _ = _write_sharded(directory, "modern", "safetensors")
    document = json.loads(index.read_text())
    elsewhere = tmp_path / "elsewhere.safetensors"
    (directory / "model-00002-of-00002.safetensors").rename(elsewhere)
    if problem == "outside directory":
        document["weight_map"] = {
            k: ("../elsewhere.safetensors" if v.startswith("model-00002") else v) for k, v in document["weight_map"].items()
        }
        index.write_text(json.dumps(document))
    elif problem == "symlink outside":
        (directory / "model-00002-of-00002.safetensors").symlink_to(elsewhere)
    elsewhere_before = elsewhere.read_bytes()
    status, report = cli_json(capsys, "--fix", index, _good(tmp_path))
    assert status == 2
    (error,) = report["errors"]
    assert error["path"] == str(index)
    expected = "missing shard" if problem == "missing shard" else "outside the index's directory"
    assert expected in error["message"]
    assert elsewhere.read_bytes() == elsewhere_before
    assert len(report["findings"]) == 0  # the good file was fixed
    assert "parametrizations" in index.read_text()


def _evil_payload(marker: Path) -> object:
    class Evil:
        def __reduce__(self):
            return (builtins.exec, (f"open({str(marker)!r}, 'w').close()",))

    return Evil()


@pytest.mark.parametrize("legacy_format", [False, True])
def test_malicious_pickle_never_runs_without_trust_pickle(tmp_path, capsys, legacy_format):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    torch.save({"state_dict": vocoder_state("modern"), "x": _evil_payload(marker)}, path, _use_new_zipfile_serialization=not legacy_format)
    for args in ([path], ["--fix", path], ["--fold-spectral", "--fix", path]):
        status, out, err = cli(capsys, *args)
        assert status == 2 and "--trust-pickle" in err and "(first: exec)" in err
        assert not marker.exists()
    # The payload is real: trusting the file runs it.
    cli(capsys, "--trust-pickle", path)
    assert marker.exists()


def test_malicious_plain_pickle_renamed_pt_never_runs(tmp_path, capsys):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps(_evil_payload(marker)))
    status, out, err = cli(capsys, path)
    assert status == 2 and not marker.exists()


def test_zip_without_torch_data(tmp_path, capsys):
    path = tmp_path / "archive.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hello")
    status, report = cli_json(capsys, path)
    assert status == 2 and "not a torch checkpoint" in report["errors"][0]["message"]


def test_missing_torch_is_one_line_saying_what_to_install(tmp_path, capsys, monkeypatch):
    import sys

    from wnaudit.core.torch_api import TORCH_INSTALL

    bad = tmp_path / "model.pt"
    torch.save({"generator": vocoder_state("legacy")}, bad)
    monkeypatch.setitem(sys.modules, "torch", None)  # "import torch" now raises ImportError
    status, report = cli_json(capsys, "--fix", bad)
    assert status == 2
    (error,) = report["errors"]
    assert error["path"] == str(bad)
    assert error["message"].startswith("torch is not installed") and TORCH_INSTALL in error["message"]
    assert "only --fix" in error["message"]


def test_key_clash_in_a_checkpoint_is_an_error_and_nothing_is_written(tmp_path, capsys):
    bad = tmp_path / "clash.safetensors"
    save_file({"w.weight": torch.zeros(2, 3), "w.weight_g": torch.ones(2, 1), "w.weight_v": torch.ones(2, 3)}, bad)
    before = bad.read_bytes()
    status, report = cli_json(capsys, "--fix", bad)
    assert status == 2 and "w.weight_g: folds into w.weight, which is already stored" in report["errors"][0]["message"]
    assert bad.read_bytes() == before
