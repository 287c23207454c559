"""A warm run that gives a kept answer imports neither the stages nor the rules, and reads no module of its own code.

Start-up was most of a warm run on a small tree (imports alone took 0.19 s of a
0.27 s run on 1,249 files).  Each check here runs the command in a fresh
interpreter (``sys.modules`` says what a run imported) with stats vouching for
bytes at once (``RACY_NS`` 0, as a tree untouched for a few seconds has).
"""

from __future__ import annotations

import json
import os
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


def _tree_with_links(root: Path) -> Path:
    for directory in ("a/b/c", "a/d", "e", ".hidden", "tests"):
        (root / directory).mkdir(parents=True, exist_ok=True)
    for name in ("a/x.py", "a/b/y.yaml", "a/b/c/z.json", "a/d/w.py", "e/v.yml", ".hidden/u.yaml", "tests/t.py", "top.yaml"):
        (root / name).write_text("x: 1\n")
    (root / "a" / "to_e").symlink_to(root / "e", target_is_directory=True)  # listed as a directory, never entered
    (root / "a" / "b" / "link.yaml").symlink_to(root / "top.yaml")
    (root / "a" / "dangling.yaml").symlink_to(root / "nowhere.yaml")
    (root / "e" / "loop").symlink_to(root, target_is_directory=True)
    return root


@pytest.mark.parametrize("kept", [False, True])
def test_walk_tree_is_os_walk(tmp_path: Path, kept: bool) -> None:
    """The same triples in the same order, the caller's pruning honoured, links to directories never entered."""
    from wnaudit.source.serving.walk import Listings, skipped, walk_tree

    root = _tree_with_links(tmp_path / "tree")

    def walked(walk: object) -> list[tuple[str, list[str], list[str]]]:
        out = []
        for directory, dirs, files in walk:  # type: ignore[attr-defined]
            dirs[:] = sorted(d for d in dirs if not skipped(d))
            out.append((directory, list(dirs), sorted(files)))
        return out

    listings = Listings() if kept else None
    assert walked(walk_tree(root, listings)) == walked(os.walk(root))
    assert walked(walk_tree(root / "missing", listings)) == []


def test_a_records_check_lists_each_directory_once(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WN110's project walk, config walk and config targets of one tree share the check's listings."""
    from collections import Counter

    from tests.source.test_derived_cache import BASE, SERVE_FLAGGED
    from wnaudit.common.options import RunOptions
    from wnaudit.source import lint_run
    from wnaudit.source.pipeline import journals

    project = tmp_path / "proj"
    package = project / "voc"
    (package / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    for name, text in {"__init__.py": "", "sub/__init__.py": "", "base.py": BASE, "serve.py": SERVE_FLAGGED}.items():
        (package / name).write_text(text)
    (package / "config.yaml").write_text("fold_weight_norm: false\nmodel:\n  _target_: voc.base.Base\n")
    paths = sorted(package.glob("*.py"))
    monkeypatch.setattr(cache, "RACY_NS", 0)
    cold = lint_run.lint_files(paths, RunOptions(jobs=1)).findings
    listed: Counter[str] = Counter()
    real = os.scandir

    def counted(path: object = ".") -> object:
        listed[os.fspath(path)] += 1  # type: ignore[call-overload]
        return real(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", counted)
    monkeypatch.setattr(journals, "_journals_in", lambda folder: [])  # the journal check lists its folders apart
    assert lint_run.lint_files(paths, RunOptions(jobs=1)).findings == cold
    assert str(package) in listed and max(listed.values()) == 1, listed


def test_walk_tree_walks_a_deep_tree(tmp_path: Path) -> None:
    """A stack, not recursion: a tree deeper than the recursion limit is walked whole (``os.walk`` since 3.12).

    The limit is lowered for the walk (a tree deeper than the usual limit would break pytest's own clean-up).
    """
    from wnaudit.source.serving.walk import walk_tree

    deepest = tmp_path.joinpath(*["d"] * 300)
    deepest.mkdir(parents=True)
    (deepest / "last.yaml").write_text("x: 1\n")
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 100)  # the walk may use 100 frames more than the test has: fewer than the tree's depth
    try:
        walked = list(walk_tree(tmp_path))
    finally:
        sys.setrecursionlimit(limit)
    assert len(walked) == 301 and walked[-1] == (str(deepest), [], ["last.yaml"])
