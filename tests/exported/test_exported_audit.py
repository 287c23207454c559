"""Audit of torch.export archives and AOTInductor packages: found by layout, read without torch, named as the model names them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from exported_helpers import FOLDED_NAMES, rewrite_model_json

from wnaudit.cli.command import run
from wnaudit.cli.discovery import discover
from wnaudit.common.config import Config
from wnaudit.exported import looks_like_exported_program

ROOT = Path(__file__).resolve().parents[2]


def _json_report(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, dict]:
    status = run(["--format", "json", *map(str, paths)])
    return status, json.loads(capsys.readouterr().out)


def test_an_archive_named_anything_is_audited_not_refused(fused_archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = _json_report(capsys, fused_archive)
    assert status == 1 and report["errors"] == []
    assert sorted((f["code"], f["object"], f["fixable"]) for f in report["findings"]) == sorted(("WN401", name, True) for name in FOLDED_NAMES)
    message = next(f["message"] for f in report["findings"] if f["object"] == "generator.conv_pre.weight")
    assert "generator.conv_pre.weight_g" in message and "generator.conv_pre.weight_v" in message


def test_decomposed_pattern_is_found_with_the_same_names(decomposed_archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = _json_report(capsys, decomposed_archive)
    assert status == 1
    assert sorted((f["code"], f["object"]) for f in report["findings"]) == sorted(("WN402", name) for name in FOLDED_NAMES)


def test_directory_walk_finds_archives_by_content(tmp_path: Path, fused_archive: Path, aoti_package: Path) -> None:
    shutil.copy(fused_archive, tmp_path / "g_00500000")
    shutil.copy(aoti_package, tmp_path / "served.bin.x")
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as plain:
        plain.writestr("top/readme.txt", "not a program")
    found = discover([tmp_path], Config())
    assert sorted(p.name for p in found.exported) == ["g_00500000", "served.bin.x"]
    assert found.checkpoints == [] and found.errors == []
    assert not looks_like_exported_program(tmp_path / "plain.zip")


def test_aoti_package_pairs_are_reported_not_fixable(aoti_package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = shutil.copy(aoti_package, tmp_path / "package.pt2")
    before = Path(copy).read_bytes()
    status = run(["--fix", "--format", "json", str(copy)])
    report = json.loads(capsys.readouterr().out)
    assert status == 1 and report["errors"] == []
    assert sorted((f["code"], f["object"], f["fixable"]) for f in report["findings"]) == sorted(
        ("WN403", name, False) for name in FOLDED_NAMES
    )
    assert all("wnaudit.fold_weight_norm" in f["message"] and "before exporting" in f["message"] for f in report["findings"])
    assert Path(copy).read_bytes() == before


def test_the_audit_never_imports_torch_nor_unpickles(fused_archive: Path, tmp_path: Path) -> None:
    """Code planted in the archive (guard code) is never run: the audit reads JSON and imports no torch at all."""
    tampered = rewrite_model_json(fused_archive, tmp_path / "tampered.pt2", lambda program: program.update(guards_code=["__import__('os')"]))
    script = (  # an AssertionError would exit 1 too, as findings do: torch's import gets a code of its own
        "import sys; from wnaudit.cli.command import run; status = run(['-q', sys.argv[1]]); "
        "sys.exit(42 if 'torch' in sys.modules else status)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(tampered)], check=False, capture_output=True, text=True, env=env)
    assert done.returncode != 42, "the audit imported torch"
    assert done.returncode == 1, done.stderr
    assert done.stdout.count("WN401") == 1 and "(3 tensors: " in done.stdout  # one line for the program's 3 tensors


def test_damaged_graph_json_is_one_error_line_and_other_inputs_still_audited(
    fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.pt2"
    with zipfile.ZipFile(fused_archive) as old, zipfile.ZipFile(broken, "w") as new:
        for info in old.infolist():
            new.writestr(info, b"{not json" if info.filename.endswith("models/model.json") else old.read(info))
    status, report = _json_report(capsys, broken, fused_archive)
    assert status == 2
    assert [e["path"] for e in report["errors"]] == [str(broken)]
    assert "not valid JSON" in report["errors"][0]["message"] and "\n" not in report["errors"][0]["message"]
    assert len(report["findings"]) == 3
