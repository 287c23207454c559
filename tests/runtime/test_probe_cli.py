"""``wnaudit probe TARGET`` (issue 34, item 2): the project's loader called, its model audited and watched.

Run in-process through ``wnaudit.cli.command.run`` on a project written in
``tmp_path`` (the working directory), and in a real process where the
process's own start matters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from probe_helpers import LOADER, VOCODER, project, write_project  # noqa: F401 - project is a fixture
from wnaudit.cli.command import run

TARGET = "vocoder.serve:load_vocoder"
WORKTREE = Path(__file__).resolve().parents[2]


def _probe(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = run(["probe", *args])
    out, err = capsys.readouterr()
    return status, out, err


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    status, out, err = _probe(capsys, *args, "--output-format", "json")
    return status, json.loads(out), err


def _codes(report: dict) -> list[tuple[str, str]]:
    return sorted((f["code"], f["object"]) for f in report["findings"])


def test_the_returned_model_is_audited(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(project)
    status, report, err = _json(capsys, TARGET)
    assert status == 1, err
    assert _codes(report) == [("WN201", "post.weight"), ("WN201", "pre.weight"), ("WN202", "up.weight")]
    assert {f["path"] for f in report["findings"]} == {TARGET}
    assert report["errors"] == []


def test_one_watched_inference_call_adds_wn206(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(project)
    status, report, err = _json(capsys, TARGET, "--input-shape", "1,80,20")
    assert status == 1, err
    watched = sorted(f["object"] for f in report["findings"] if f["code"] == "WN206")
    assert watched == ["post.weight", "pre.weight", "up.weight"]
    assert {f["path"] for f in report["findings"]} == {TARGET}  # the watch's findings too name the entry point
    assert all(" computed once during the watched calls" in f["message"] for f in report["findings"] if f["code"] == "WN206")


def test_select_keeps_the_linters_meaning(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(project)
    status, report, _ = _json(capsys, TARGET, "--input-shape", "1,80,20", "--select", "WN206")
    assert status == 1 and {f["code"] for f in report["findings"]} == {"WN206"}
    status, report, _ = _json(capsys, TARGET, "--select", "WN203")
    assert status == 0 and report["findings"] == []
    status, _, err = _probe(capsys, TARGET, "--select", "WN999")
    assert status == 2 and err.count("\n") == 1 and "WN999" in err


def test_a_folded_model_is_clean(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(project, LOADER.replace("    return model", "    import wnaudit\n    wnaudit.fold_weight_norm(model)\n    return model"))
    status, out, err = _probe(capsys, TARGET, "--input-shape", "1,80,20")
    assert status == 0, out + err
    assert "All checks passed!" in out


def test_a_file_target_and_a_saved_input(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serve = write_project(project)
    torch.save({"mel": torch.randn(1, 80, 12)}, project / "mel.pt")
    status, report, err = _json(capsys, f"{serve.relative_to(project)}:load_vocoder", "--input", "mel.pt")
    assert status == 1, err
    assert sum(f["code"] == "WN206" for f in report["findings"]) == 3


def test_serving_entries_are_probed_without_a_target(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject = '[tool.wnaudit]\nserving = ["vocoder.serve:load_vocoder", "vocoder.serve:load_folded"]\n'
    folded = LOADER + "\n\ndef load_folded():\n    model = load_vocoder()\n    import wnaudit\n    wnaudit.fold_weight_norm(model)\n    return model\n"
    write_project(project, folded, pyproject=pyproject)
    status, report, err = _json(capsys)
    assert status == 1, err
    assert {f["path"] for f in report["findings"]} == {TARGET}
    status, _, err = _probe(capsys, "--config", str(project / "missing.toml"))
    assert status == 2 and err.count("\n") == 1


@pytest.mark.parametrize(
    ("loader", "expected"),
    [
        ("\n\ndef load_vocoder():\n    raise SystemExit(3)\n", "load_vocoder() raised SystemExit: 3"),
        ("\n\ndef load_vocoder():\n    raise RuntimeError('no checkpoint at /x')\n", "load_vocoder() raised RuntimeError: no checkpoint at /x"),
        ("\n\ndef load_vocoder():\n    return {'model': 1}\n", "the loader returned a dict, not a torch.nn.Module"),
        ("\nimport sys\nsys.exit('bad config')\n", "cannot import vocoder.serve: SystemExit: bad config"),
        ("\n\nload_vocoder = 3\n", "load_vocoder is not callable"),
    ],
)
def test_user_code_failing_is_one_error_line(project: Path, capsys: pytest.CaptureFixture[str], loader: str, expected: str) -> None:
    write_project(project, loader)
    status, out, err = _probe(capsys, TARGET)
    assert status == 2
    assert err.splitlines()[-1] == f"wnaudit: error: {TARGET}: {expected}"
    assert sum(line.startswith("wnaudit: error:") for line in err.splitlines()) == 1


def test_a_failing_call_keeps_the_audit(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(project)
    status, report, err = _json(capsys, TARGET, "--input-shape", "1,3,20")
    assert status == 2
    assert len(report["errors"]) == 1 and "running the model failed: RuntimeError" in report["errors"][0]["message"]
    assert {f["code"] for f in report["findings"]} == {"WN201", "WN202"}


def test_usage_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(project)
    status, _, err = _probe(capsys, TARGET, "--input-shape", "1,80,4", "--input", "x.pt")
    assert status == 2 and err.startswith("wnaudit: error: --input-shape and --input are exclusive")
    status, _, err = _probe(capsys)
    assert status == 2 and "no TARGET given and no [tool.wnaudit] serving entries" in err
    status, _, err = _probe(capsys, "vocoder.nothing:load")
    assert status == 2 and "cannot import vocoder.nothing: ModuleNotFoundError" in err
    status, _, err = _probe(capsys, TARGET, "--input", "missing.pt")
    assert status == 2 and "--input missing.pt: no such file" in err


def _process(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script as users run it: its own directory, not the project's, is first on sys.path."""
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    script = "import sys; from wnaudit.cli.command import process_main; sys.argv[0] = 'wnaudit'; process_main()"
    runner = Path(cwd).parent / "wnaudit_script.py"
    runner.write_text(script)
    return subprocess.run([sys.executable, str(runner), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120)


def test_the_working_directory_is_importable_from_the_console_script(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_project(root)
    done = _process(root, "probe", TARGET, "--output-format", "json")
    assert done.returncode == 1, done.stderr
    assert len(json.loads(done.stdout)["findings"]) == 3


def test_the_lint_never_imports_the_project_nor_the_probe(tmp_path: Path) -> None:
    """Only probe and bench run project code (docs/security.md): a lint with serving entries declared imports nothing."""
    root = tmp_path / "proj"
    marker = tmp_path / "imported"
    write_project(root, LOADER + f"\n\nopen({str(marker)!r}, 'w').close()\n",
                  pyproject='[tool.wnaudit]\nserving = ["vocoder.serve:load_vocoder"]\n')
    code = textwrap.dedent(
        f"""\
        import sys
        from wnaudit.cli.command import run
        status = run(['--no-cache', '-q', {str(root)!r}])
        assert not any(m.startswith(('wnaudit.probe', 'wnaudit.cli.probe', 'wnaudit.common.entry_points')) for m in sys.modules), 'probe imported'
        assert 'torch' not in sys.modules
        print(status)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(WORKTREE)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


def test_probe_is_a_command_registered_on_first_use(capsys: pytest.CaptureFixture[str]) -> None:
    from wnaudit.cli.command import main

    assert "probe" in main.list_commands(main.make_context("wnaudit", ["--version"], resilient_parsing=True))
    assert run(["probe", "--help"]) == 0
    out = capsys.readouterr().out
    assert "TARGET" in out and "--input-shape" in out and "RUNS THE PROJECT'S CODE" in " ".join(out.split())


def test_the_probe_reaches_the_other_entrances_without_one_importing_another() -> None:
    """The runtime entrance imports no other entrance; the probe's --fix reaches the source rewrite itself."""
    import ast

    package = WORKTREE / "wnaudit"

    def imports(path: Path) -> set[str]:
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(("." * node.level) + node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        return found

    for path in sorted((package / "runtime").rglob("*.py")):
        bad = {name for name in imports(path) if name.lstrip(".").split(".")[0] in {"source", "module", "probe", "cli", "checkpoint", "exported"}
               or name.startswith(("wnaudit.source", "wnaudit.module", "wnaudit.probe", "wnaudit.cli"))}
        assert not bad, (path, bad)
    fix_imports = imports(package / "probe" / "fix.py")
    assert "..source.rewrite.at_return" in fix_imports
    assert not any("cli" in name for name in (*fix_imports, *imports(package / "probe" / "run.py")))


def test_a_src_layout_is_importable_through_the_configured_src(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(project / "src", pyproject="")
    (project / "pyproject.toml").write_text('[tool.wnaudit]\nsrc = ["src"]\nserving = ["vocoder.serve:load_vocoder"]\n')
    status, report, err = _json(capsys)
    assert status == 1, err
    assert len(report["findings"]) == 3
    assert str(project / "src") not in sys.path  # taken off again
