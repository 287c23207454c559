"""Directory walks find checkpoints by content, once per file, never rewriting outside the tree
(issue 11, cases 5 and 8)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from checkpoint_helpers import WEIGHT_NORMS, cli, cli_json, vocoder_state
from wnaudit.checkpoint import sniff
from wnaudit.checkpoint.sniff import looks_like_checkpoint
from wnaudit.cli.discovery import discover
from wnaudit.common.config import Config


def _safetensors(path: Path, spelling: str = "modern") -> None:
    save_file({k: v.contiguous() for k, v in vocoder_state(spelling).items()}, path)


def test_checkpoints_are_found_by_content_whatever_their_name(tmp_path, capsys):
    torch.save({"model": {"generator": vocoder_state("legacy")}}, tmp_path / "checkpoint-400000steps.pkl")
    torch.save({"state_dict": vocoder_state("modern")}, tmp_path / "model_best.pth.tar")
    torch.save(vocoder_state("legacy"), tmp_path / "old.weights", _use_new_zipfile_serialization=False)
    _safetensors(tmp_path / "vocoder.st")
    (tmp_path / "train.py").write_text("import torch\n")
    status, report = cli_json(capsys, tmp_path)
    assert status == 1 and report["errors"] == []
    paths = sorted({Path(f["path"]).name for f in report["findings"]})
    assert paths == ["checkpoint-400000steps.pkl", "model_best.pth.tar", "old.weights", "vocoder.st"]
    status, out, _ = cli(capsys, tmp_path)
    assert "Checked 1 source file and 4 checkpoints." in out


def test_other_files_are_not_checkpoints(tmp_path, capsys):
    with zipfile.ZipFile(tmp_path / "assets.zip", "w") as archive:
        archive.writestr("readme.txt", "hello")
        archive.writestr("data.json", "{}")
    (tmp_path / "notes.txt").write_text("{ not a checkpoint }\n" * 10)
    (tmp_path / "plain.pkl").write_bytes(__import__("pickle").dumps({"a": 1}, protocol=2))
    (tmp_path / "header_like").write_bytes((10**6).to_bytes(8, "little") + b"{" + b" " * 20)  # length > file
    for name in ("assets.zip", "notes.txt", "plain.pkl", "header_like"):
        assert not looks_like_checkpoint(tmp_path / name), name
    status, out, err = cli(capsys, tmp_path)
    # Nothing there is a checkpoint (nor Python): the run says that nothing was checked.
    assert status == 0 and "nothing checked" in err and "Nothing checked" in out


def test_zip_with_data_pkl_later_in_the_archive_is_found(tmp_path):
    source = tmp_path / "a.pt"
    torch.save(vocoder_state("modern"), source)
    reordered = tmp_path / "reordered"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(reordered, "w") as dst:
        for info in sorted(src.infolist(), key=lambda i: i.filename.endswith("data.pkl")):
            dst.writestr(info.filename, src.read(info.filename))
    assert looks_like_checkpoint(reordered)


def test_a_format_s_first_bytes_are_known_in_one_place(tmp_path, monkeypatch):
    """A signature added to ``sniff.SIGNATURES`` alone is what the audit, the sniffer and the walk go by."""
    marked = tmp_path / "weights"  # no checkpoint suffix: only its content can make the walk take it
    marked.write_bytes(b"WNAUDIT-TEST" + bytes(64))
    signature = sniff.Signature(sniff.Format.SAFETENSORS, lambda head: head.startswith(b"WNAUDIT-TEST"), lambda handle, head: True)
    assert not looks_like_checkpoint(marked) and discover([tmp_path], Config()).checkpoints == []
    monkeypatch.setattr(sniff, "SIGNATURES", (*sniff.SIGNATURES, signature))
    assert sniff.detect_format(marked) is sniff.Format.SAFETENSORS
    assert looks_like_checkpoint(marked)
    assert discover([tmp_path], Config()).checkpoints == [marked]


def _hugging_face_cache(root: Path) -> tuple[Path, Path]:
    blob = root / "models--org--vocoder" / "blobs" / "4f2a9c"
    snapshot = root / "models--org--vocoder" / "snapshots" / "abc123" / "model.safetensors"
    blob.parent.mkdir(parents=True)
    snapshot.parent.mkdir(parents=True)
    _safetensors(blob)
    snapshot.symlink_to(os.path.relpath(blob, snapshot.parent))
    return blob, snapshot


def test_a_file_reached_through_several_links_is_checked_once(tmp_path, capsys):
    blob, snapshot = _hugging_face_cache(tmp_path / "hub")
    os.link(blob, tmp_path / "hub" / "hardlinked.safetensors")
    status, report = cli_json(capsys, tmp_path / "hub")
    assert status == 1
    assert {f["path"] for f in report["findings"]} == {str(snapshot)}  # the name a person uses
    assert len(report["findings"]) == WEIGHT_NORMS
    _, out, _ = cli(capsys, tmp_path / "hub")
    assert "and 1 checkpoint." in out


def test_walk_never_rewrites_through_a_symlink_out_of_the_tree(tmp_path, capsys, caplog):
    outside = tmp_path / "elsewhere" / "model.safetensors"
    outside.parent.mkdir()
    _safetensors(outside)
    before = outside.read_bytes()
    tree = tmp_path / "project"
    tree.mkdir()
    (tree / "link.safetensors").symlink_to(outside)
    (tree / "script.py").symlink_to(tmp_path / "elsewhere" / "script.py")
    (tmp_path / "elsewhere" / "script.py").write_text(
        "from torch.nn.utils import weight_norm, remove_weight_norm\n"
    )
    status, report = cli_json(capsys, "--fix", "--unsafe-fixes", tree)
    assert status == 1 and len(report["findings"]) == WEIGHT_NORMS  # audited, not fixed
    assert outside.read_bytes() == before
    assert "name it explicitly to fix it" in caplog.text
    # Named explicitly, the link is followed (and stays a link), as documented in docs/security.md.
    status, report = cli_json(capsys, "--fix", tree / "link.safetensors")
    assert status == 0 and (tree / "link.safetensors").is_symlink() and outside.read_bytes() != before


def test_symlink_inside_the_tree_is_fixed_through(tmp_path, capsys):
    blob, snapshot = _hugging_face_cache(tmp_path / "hub")
    status, report = cli_json(capsys, "--fix", "--unsafe-fixes", tmp_path / "hub")
    assert status == 0 and report["findings"] == []
    from safetensors.torch import load_file

    assert snapshot.is_symlink() and not any("parametrizations" in key for key in load_file(blob))


@pytest.mark.parametrize("name", [".model.safetensors.1234.abcd1234.wnaudit-tmp", ".model.safetensors.99.wnaudit-staged"])
def test_own_temporaries_are_never_inputs(tmp_path, capsys, name):
    _safetensors(tmp_path / name)
    status, out, _ = cli(capsys, tmp_path)
    assert status == 0 and "Nothing checked" in out
