"""``wnaudit probe --fix`` (issue 34, item 2): the fold goes into the loader where it returns the model.

The edit is WN110's (same statement, same inserter): the torch-only local fold
unless the project already imports wnaudit; the re-probe is a fresh import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from probe_helpers import LOADER, project, write_project  # noqa: F401 - project is a fixture
from wnaudit.cli.command import run

TARGET = "vocoder.serve:load_vocoder"
WORKTREE = Path(__file__).resolve().parents[2]

#: Load the project's loader in a fresh process, count live norms (wnaudit's own inspector) and save its output.
SERVE = textwrap.dedent(
    """\
    import sys, torch, wnaudit
    from vocoder.serve import load_vocoder
    model = load_vocoder()
    torch.manual_seed(1)
    mel = torch.randn(1, 80, 20)
    with torch.inference_mode():
        out = model(mel)
    torch.save(out, sys.argv[1])
    print(len(wnaudit.audit_module(model)))
    """
)


def _serve(root: Path, output: Path) -> int:
    done = subprocess.run([sys.executable, "-c", SERVE, str(output)], cwd=root, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(WORKTREE)])}, timeout=120)
    return int(done.stdout.strip())


def _probe(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    status = run(["probe", *args, "--output-format", "json"])
    out, err = capsys.readouterr()
    return status, json.loads(out), err


def test_fix_folds_in_the_loader_and_serves_the_same_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    serve = write_project(project)
    assert _serve(project, project / "before.pt") == 3
    status, report, err = _probe(capsys, TARGET, "--input-shape", "1,80,20")
    assert status == 1 and {"WN201", "WN202", "WN206"} <= {f["code"] for f in report["findings"]}
    before = serve.read_text()

    status, report, err = _probe(capsys, TARGET, "--input-shape", "1,80,20", "--fix")
    assert status == 0, err
    assert report["findings"] == [] and report["errors"] == []
    assert "wnaudit: fixed: vocoder/serve.py: load_vocoder() folds the model before returning it" in err
    text = serve.read_text()
    assert "    model.eval()\n    _fold_weight_norm_for_inference(model)\n    return model\n" in text
    assert "import wnaudit" not in text and text.startswith(before.split("\n\n\nclass")[0])  # no dependency added
    assert _serve(project, project / "after.pt") == 0
    assert torch.equal(torch.load(project / "before.pt"), torch.load(project / "after.pt"))

    status, report, _ = _probe(capsys, TARGET, "--input-shape", "1,80,20")  # a fresh probe agrees
    assert status == 0 and report["findings"] == []


def test_fix_calls_wnaudit_where_the_project_already_imports_it(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serve = write_project(project)
    (project / "vocoder" / "train.py").write_text("import wnaudit\n")
    status, report, err = _probe(capsys, TARGET, "--fix")
    assert status == 0, err
    text = serve.read_text()
    assert "    wnaudit.fold_weight_norm(model)\n    return model\n" in text and "\nimport wnaudit\n" in text
    assert _serve(project, project / "out.pt") == 0


def test_fix_follows_fix_fold_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serve = write_project(project, pyproject='[tool.wnaudit]\nfix-fold = "wnaudit"\n')
    status = run(["probe", TARGET, "--fix", "--select", "WN202"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "wnaudit.fold_weight_norm(model)" in serve.read_text()
    assert "Fixed 1 finding" in out and "WN201" not in out  # only the selected finding is reported fixed


def test_fix_names_a_returned_expression(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loader = "\n\ndef load_vocoder(cuda=False):\n    torch.manual_seed(0)\n    if cuda:\n        return Vocoder().cuda().eval()\n    return Vocoder().eval()\n"
    serve = write_project(project, loader)
    status, report, err = _probe(capsys, TARGET, "--fix")
    assert status == 0, err
    assert len(report.get("fixed", [])) in (0, 3)  # the JSON report may or may not list fixed findings
    text = serve.read_text()
    assert text.count("_fold_weight_norm_for_inference(model)\n") == 2
    assert "        model = Vocoder().cuda().eval()\n        _fold_weight_norm_for_inference(model)\n        return model\n" in text
    assert _serve(project, project / "out.pt") == 0


def test_fix_refuses_a_loader_outside_the_project(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An installed package (or any file outside the project's root) is never edited; a tmp copy stands in for one."""
    outside = write_project(project.parent / f"{project.name}_installed")
    before = outside.read_bytes()
    status, report, err = _probe(capsys, f"{outside}:load_vocoder", "--fix")
    assert status == 2
    assert "--fix:" in report["errors"][0]["message"] and "is not a file of this project" in report["errors"][0]["message"]
    assert report["findings"]  # the findings stay reported
    assert outside.read_bytes() == before


def test_fix_without_findings_edits_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serve = write_project(project, LOADER.replace("    return model", "    import wnaudit\n    wnaudit.fold_weight_norm(model)\n    return model"))
    before = serve.read_bytes()
    status, _, err = _probe(capsys, TARGET, "--fix")
    assert status == 0, err
    assert serve.read_bytes() == before


def test_fix_a_file_target(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serve = write_project(project)
    status, report, err = _probe(capsys, "vocoder/serve.py:load_vocoder", "--input-shape", "1,80,20", "--fix")
    assert status == 0, err
    assert report["findings"] == [] and "_fold_weight_norm_for_inference(model)\n    return model" in serve.read_text()


def test_fix_a_loader_defined_in_another_package_and_reexported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``app.main:load`` is ``vocoder.serve.load_vocoder`` imported: the fold goes into serve.py, both are imported afresh."""
    serve = write_project(project)
    (project / "app").mkdir()
    (project / "app" / "__init__.py").write_text("")
    (project / "app" / "main.py").write_text("from vocoder.serve import load_vocoder as load\n")
    status, report, err = _probe(capsys, "app.main:load", "--input-shape", "1,80,20", "--fix")
    assert status == 0, err
    assert report["findings"] == [] and "_fold_weight_norm_for_inference(model)\n    return model" in serve.read_text()
    assert not (project / "app" / "main.py").read_text().count("fold")
