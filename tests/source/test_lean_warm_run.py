"""A warm run that gives a kept answer imports neither the stages nor the rules, and reads no module of its own code.

Start-up was most of a warm run on a small tree (imports alone took 0.19 s of a
0.27 s run on 1,249 files).  Each check here runs the command in a fresh
interpreter (``sys.modules`` says what a run imported) with stats vouching for
bytes at once (``RACY_NS`` 0, as a tree untouched for a few seconds has).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wnaudit.common import cache
from wnaudit.report import codes

#: Modules a warm run that gives a kept answer never needs.
_HEAVY = (
    "wnaudit.source.engine", "wnaudit.source.rules", "wnaudit.source.analysis", "wnaudit.source.workspace",
    "wnaudit.source.model", "wnaudit.source.serving.flags", "wnaudit.checkpoint.audit", "wnaudit.exported.audit",
)

_DRIVER = """
import json, sys
from wnaudit.common import cache
cache.RACY_NS = 0
from wnaudit.cli.command import run
status = run(sys.argv[1:])
print(json.dumps({"status": status, "imported": sorted(name for name in sys.modules if name.startswith("wnaudit"))}))
"""

_MODEL = """\
import torch.nn as nn
from torch.nn.utils import remove_weight_norm
from torch.nn.utils.parametrizations import weight_norm


class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(1, 1, 3))

    def remove(self):
        remove_weight_norm(self.conv)
"""


def _run(arguments: list[str], cwd: Path, cache_dir: Path, *extra: str) -> dict:
    env = {"WNAUDIT_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *arguments, *extra], cwd=cwd, env=env, capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "project" / "voc"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(_MODEL)
    return tmp_path / "project"


def test_a_warm_run_imports_no_stage_and_no_rule(project: Path, tmp_path: Path) -> None:
    cold = _run(["--select", "ALL", "-q", "."], project, tmp_path / "cache")
    assert cold["status"] == 1 and "wnaudit.source.engine" in cold["imported"]
    warm = _run(["--select", "ALL", "-q", "."], project, tmp_path / "cache")
    assert warm["status"] == 1
    assert [name for name in _HEAVY if name in warm["imported"]] == []


def test_a_warm_run_that_finds_a_change_runs_the_stages(project: Path, tmp_path: Path) -> None:
    _run(["--select", "ALL", "-q", "."], project, tmp_path / "cache")
    (project / "voc" / "model.py").write_text(_MODEL.replace("remove_weight_norm(self.conv)", "pass"))
    changed = _run(["--select", "ALL", "-q", "."], project, tmp_path / "cache")
    assert "wnaudit.source.engine" in changed["imported"]


def test_no_cache_gathers_the_registry_from_the_rules(project: Path, tmp_path: Path) -> None:
    _run(["--select", "ALL", "-q", "."], project, tmp_path / "cache")
    uncached = _run(["--select", "ALL", "-q", "--no-cache", "."], project, tmp_path / "cache")
    assert "wnaudit.source.rules" in uncached["imported"]


def test_the_kept_registry_is_the_gathered_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WNAUDIT_NO_CACHE", raising=False)
    gathered = codes._gather()
    assert codes._kept_or_gathered() == gathered  # gathered, and kept
    monkeypatch.setattr(codes, "_gather", lambda: pytest.fail("the kept registry was not used"))
    assert codes._kept_or_gathered() == gathered


@pytest.mark.parametrize("stored", [[["WN101", "t", 9, None]], {"WN101": 1}, [["WN101", 2, "error", None]], [["WN101", "t", "error", "maybe"]]])
def test_a_kept_registry_of_another_shape_is_not_believed(stored: object) -> None:
    assert cache.CacheStore._checked(codes.KEPT_CODES, stored) is None
    assert cache.CacheStore._checked(codes.KEPT_CODES, codes._encode(codes._gather())) == codes._gather()


def test_the_codes_digest_is_kept_with_the_modules_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Believed while every module's stat is the one kept; computed from their bytes otherwise."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    fingerprint = cache.code_fingerprint.__wrapped__  # not the process's memo
    real = fingerprint()
    assert fingerprint(tmp_path) == real
    kept = tmp_path / "code-fingerprint"
    stats, _, digest = kept.read_text().partition(" ")
    assert digest == real
    kept.write_text(f"{stats} abcdefabcdef")
    assert fingerprint(tmp_path) == "abcdefabcdef"  # the stats vouch: the modules are not read
    kept.write_text(f"{'0' * len(stats)} abcdefabcdef")
    assert fingerprint(tmp_path) == real  # other stats: read again, and kept
    assert kept.read_text() == f"{stats} {real}"
