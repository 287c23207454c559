"""noqa, configuration, deterministic output, and the torch-free source path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from wnaudit.cli.command import run
from wnaudit.common.config import Config
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files, lint_source

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOURCES = [str(EXAMPLES / "hift_vocoder.py"), str(EXAMPLES / "legacy_vocoder.py"), str(EXAMPLES / "codec")]
BUGGY = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
    "torch.nn.utils.remove_weight_norm(conv){comment}\n"
    "torch.nn.utils.parametrize.remove_parametrizations(conv)\n"
)


def test_noqa_specific_bare_and_other_code():
    assert [f.code for f in lint_source(BUGGY.format(comment=""), "m.py")] == ["WN101", "WN105"]
    assert [f.code for f in lint_source(BUGGY.format(comment="  # noqa: WN101"), "m.py")] == ["WN105"]
    assert [f.code for f in lint_source(BUGGY.format(comment="  # noqa"), "m.py")] == ["WN105"]
    assert [f.code for f in lint_source(BUGGY.format(comment="  # NOQA:WN105,WN101"), "m.py")] == ["WN105"]
    assert [f.code for f in lint_source(BUGGY.format(comment="  # noqa: WN102"), "m.py")] == ["WN101", "WN105"]


def test_disabled_codes_are_neither_reported_nor_fixed(tmp_path):
    target = tmp_path / "m.py"
    target.write_text(BUGGY.format(comment=""))
    config = Config(ignore=("WN105",), root=tmp_path)
    result = lint_files([target], RunOptions(config=config, fix=True))
    assert [f.code for f in result.fixed] == ["WN101"]
    assert "remove_parametrizations(conv)\n" in target.read_text()


def test_pyproject_per_file_ignores_and_cli_select(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.wnaudit]\nper-file-ignores = {"legacy_*.py" = ["WN103"]}\n')
    (tmp_path / "legacy_model.py").write_text((EXAMPLES / "legacy_vocoder.py").read_text())
    (tmp_path / "m.py").write_text(BUGGY.format(comment=""))
    assert run(["--format", "json", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(Path(f["path"]).name, f["code"]) for f in report["findings"]] == [("m.py", "WN101"), ("m.py", "WN105")]
    assert run(["--format", "json", "--select", "WN105", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in report["findings"]] == ["WN105"]
    assert report["findings"][0]["line"] == 5 and report["findings"][0]["column"] == 1


def _cli(args: list[str], env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    return subprocess.run([sys.executable, "-m", "wnaudit.cli", *args], capture_output=True, text=True, env=env, timeout=120)


def test_output_is_identical_under_any_hash_seed():
    outputs = {
        _cli(["--format", "json", *SOURCES], {"PYTHONHASHSEED": seed}).stdout for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1
    assert json.loads(outputs.pop())["findings"]


def test_source_path_never_imports_torch(tmp_path):
    runner = (
        "import sys\nfrom wnaudit.cli import run\n"
        f"status = run([*{SOURCES!r}, '--diff', '-q'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\nprint('status', status)\n"
    )
    done = subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "status 1" in done.stdout


def test_worker_processes_give_the_same_result(tmp_path, monkeypatch):
    from wnaudit.source.pipeline import scan

    for index in range(6):
        (tmp_path / f"m{index}.py").write_text(BUGGY.format(comment="" if index % 2 else "  # noqa: WN101"))
    (tmp_path / "broken.py").write_text("weight_norm(\n")
    files = sorted(tmp_path.glob("*.py"))
    serial = lint_files(files, RunOptions(jobs=1, cache=False))  # no cache: the second run must parse in workers
    monkeypatch.setattr(scan, "PARALLEL_BYTES", 0)
    calls = []
    real_pool = scan.concurrent.futures.ProcessPoolExecutor
    monkeypatch.setattr(
        scan.concurrent.futures, "ProcessPoolExecutor", lambda **kw: calls.append(kw) or real_pool(**kw)
    )
    parallel = lint_files(files, RunOptions(jobs=2, cache=False))
    assert calls == [{"max_workers": 2}]
    assert parallel.findings == serial.findings and parallel.errors == serial.errors
    assert [f.code for f in serial.findings].count("WN101") == 3 and len(serial.errors) == 1


def test_python_dash_m_wnaudit_is_the_console_script(tmp_path):
    """``python -m wnaudit`` (what ``-X importtime`` checks use) runs the same command, without torch or libcst."""
    (tmp_path / "m.py").write_text(BUGGY.format(comment=""))
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['wnaudit', {str(tmp_path / 'm.py')!r}]\n"
        "try:\n    runpy.run_module('wnaudit', run_name='__main__')\n"
        "except SystemExit as exit:\n    print('exit', exit.code, 'torch' in sys.modules, 'libcst' in sys.modules)\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "WN101" in completed.stdout
    assert completed.stdout.strip().splitlines()[-1] == "exit 1 False False"
