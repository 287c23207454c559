"""A journal beside a shard index can only finish what wnaudit started (issue 23, item 1).

A downloaded model directory may carry a planted ``.INDEX.wnaudit-journal``;
``--fix`` used to rename whatever it named over whatever it named, exit 0.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from checkpoint_helpers import WEIGHT_NORMS, cli
from test_checkpoint_forms import _write_sharded


def journal_path(index: Path) -> Path:
    """The journal's name beside its index (spelt out, so the test runs against any version)."""
    return index.with_name(f".{index.name}.wnaudit-journal")


def staged_name(target: str, pid: int) -> str:
    return f".{target}.{pid}.wnaudit-staged"


CONFIG = '{"auto_map": {"AutoModel": "modeling_safe.Model"}}'
EVIL = b'{"auto_map": {"AutoModel": "modeling_evil.Model"}}'


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _plant_v1(index: Path, pairs: list[tuple[str, str]]) -> Path:
    """The journal format main honoured: [staged, target] pairs, nothing else checked."""
    path = journal_path(index)
    path.write_text(json.dumps({"version": 1, "files": [list(pair) for pair in pairs]}))
    return path


def _plant_v2(index: Path, pairs: list[tuple[str, str]], contents: dict[str, bytes]) -> Path:
    """A forgery in today's format, digests and all, from a process that is gone."""
    files = [{"staged": s, "target": t, "sha256": hashlib.sha256(contents[s]).hexdigest()} for s, t in pairs]
    document = {"format": "wnaudit-journal", "version": 2, "owner": index.name, "pid": os.getpid(), "files": files}
    path = journal_path(index)
    path.write_text(json.dumps(document))
    return path


def _refused(capsys: Any, directory: Path, *args: Any) -> str:
    before = _snapshot(directory)
    status, out, err = cli(capsys, *args)
    assert status == 2, out + err
    errors = [line for line in err.splitlines() if line.startswith("wnaudit: error: ")]
    assert len(errors) == 1 and "unexpected" not in err, err
    assert "refusing the journal" in errors[0] and "--discard-journal" in errors[0], err
    assert _snapshot(directory) == before, "a refused journal changed a file"
    return errors[0]


@pytest.mark.parametrize("form", ["v1", "v2"])
def test_a_planted_journal_cannot_rewrite_config_json(tmp_path, capsys, form):
    index, _ = _write_sharded(tmp_path, "modern", "safetensors")
    (tmp_path / "config.json").write_text(CONFIG)
    staged = f".config.json.{os.getpid()}.wnaudit-staged"
    (tmp_path / staged).write_bytes(EVIL)
    if form == "v1":
        _plant_v1(index, [(staged, "config.json")])
    else:
        _plant_v2(index, [(staged, "config.json")], {staged: EVIL})
    _refused(capsys, tmp_path, "--fix", index)
    assert (tmp_path / "config.json").read_text() == CONFIG


def test_a_planted_journal_cannot_replace_another_models_index_and_shard(tmp_path, capsys):
    ours = tmp_path / "ours"
    ours.mkdir()
    index, _ = _write_sharded(ours, "modern", "safetensors")
    other = index.with_name("other.safetensors.index.json")
    other.write_text(index.read_text())
    shard = "model-00001-of-00002.safetensors"
    other_shard = ours / "other-00001.safetensors"
    other_shard.write_bytes((ours / shard).read_bytes())
    pairs = []
    for target in (other.name, other_shard.name):
        staged = f".{target}.{os.getpid()}.wnaudit-staged"
        (ours / staged).write_bytes(b"planted")
        pairs.append((staged, target))
    _plant_v1(index, pairs)
    _refused(capsys, ours, "--fix", index)


def test_a_nul_byte_in_a_journal_name_is_one_honest_line(tmp_path, capsys):
    index, _ = _write_sharded(tmp_path, "modern", "safetensors")
    _plant_v1(index, [("x\0.wnaudit-staged", "model-00001-of-00002.safetensors")])
    line = _refused(capsys, tmp_path, "--fix", index)
    assert "ValueError" not in line


def test_an_audit_reports_a_planted_journal_as_refused(tmp_path, capsys):
    index, _ = _write_sharded(tmp_path, "modern", "safetensors")
    (tmp_path / "config.json").write_text(CONFIG)
    staged = staged_name("config.json", os.getpid())
    (tmp_path / staged).write_bytes(EVIL)
    _plant_v2(index, [(staged, "config.json")], {staged: EVIL})
    _refused(capsys, tmp_path, index)


def test_discard_journal_drops_a_refused_journal_and_the_fix_proceeds(tmp_path, capsys, caplog):
    index, _ = _write_sharded(tmp_path, "modern", "safetensors")
    (tmp_path / "config.json").write_text(CONFIG)
    staged = f".config.json.{os.getpid()}.wnaudit-staged"
    (tmp_path / staged).write_bytes(EVIL)
    journal = _plant_v1(index, [(staged, "config.json")])
    status, out, err = cli(capsys, "--fix", "--discard-journal", index)
    assert status == 0 and f"({WEIGHT_NORMS} fixed, 0 remaining)" in out, out + err
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "discarded the journal" in r.getMessage()]
    assert len(said) == 1, said
    assert not journal.exists()
    assert (tmp_path / "config.json").read_text() == CONFIG


def test_a_forged_journal_replacing_a_shard_with_other_bytes_is_refused(tmp_path, capsys):
    index, _ = _write_sharded(tmp_path, "modern", "safetensors")
    shard = "model-00001-of-00002.safetensors"
    staged = staged_name(shard, os.getpid())
    (tmp_path / staged).write_bytes(b"tampered after the journal")
    _plant_v2(index, [(staged, shard)], {staged: b"what wnaudit staged"})
    assert "digest" in _refused(capsys, tmp_path, "--fix", index)
