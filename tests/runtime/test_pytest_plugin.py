"""The pytest plugin, run in a subprocess on a small test file: off by default, on with the flag or the ini key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

TESTS = '''
import sys

import pytest
import torch
from torch import nn

import wnaudit


class Served(nn.Module):
    def __init__(self):
        super().__init__()
        wn = nn.utils.parametrizations.weight_norm
        self.generator = nn.Sequential(wn(nn.Conv1d(2, 2, 3, padding=1)))
        self.f0_predictor = nn.Sequential(wn(nn.Conv1d(2, 2, 1)))
        self.f0_predictor_extra = wn(nn.Conv1d(2, 2, 1))

    def forward(self, x):
        return self.generator(x) + self.f0_predictor(x) + self.f0_predictor_extra(x)


def model():
    return Served()


def run(m):
    return m(torch.randn(1, 2, 5)).sum()


def test_serving():
    run(model().eval())


def test_inference_mode_in_training_mode():
    with torch.inference_mode():
        run(model().train())


def test_training():
    run(model().train()).backward()


@pytest.mark.wnaudit_allow("generator", "f0_predictor", "f0_predictor_extra")
def test_allowed():
    run(model().eval())


@pytest.mark.wnaudit_allow("generator", "f0_predictor")
def test_allowed_on_whole_components():
    run(model().eval())


def test_folded():
    m = model().eval()
    wnaudit.fold_weight_norm(m)
    run(m)


def test_fixture(wnaudit_watch):
    run(model().train())
    assert sorted(f.object for f in wnaudit_watch.findings) == ["f0_predictor.0.weight", "f0_predictor_extra.weight", "generator.0.weight"]


def test_own_failure_is_kept():
    run(model().eval())
    assert False, "the test's own failure"
'''

EXPECTED_ON = {
    "test_serving": "FAILED", "test_inference_mode_in_training_mode": "FAILED", "test_training": "PASSED",
    "test_allowed": "PASSED", "test_allowed_on_whole_components": "FAILED", "test_folded": "PASSED",
    "test_fixture": "PASSED", "test_own_failure_is_kept": "FAILED",
}


def _pytest(directory: Path, *args: str) -> tuple[dict[str, str], str]:
    """Run pytest on ``directory`` with the plugin loaded by name (installed entry points are not loaded)."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-p", "wnaudit.runtime.pytest_plugin", "-rA", "-p", "no:cacheprovider", *args]
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True, env=env, timeout=300, check=False)
    outcomes = {name: outcome for outcome, name in re.findall(r"^(PASSED|FAILED) \S+::(\w+)", done.stdout, re.MULTILINE)}
    return outcomes, done.stdout + done.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("plugin-project")
    (directory / "test_served.py").write_text(TESTS)
    return directory


def test_with_the_flag_serving_tests_fail_with_the_wn206_text(project: Path):
    outcomes, output = _pytest(project, "--wnaudit-watch")
    assert outcomes == EXPECTED_ON, output
    failure = output[output.index("_ test_serving _"):]
    assert "WN206 generator.0.weight: weight norm (modern) of generator.0.weight computed once" in failure
    assert "fold it once at load with wnaudit.fold_weight_norm(model)" in failure
    whole_components = output[output.index("_ test_allowed_on_whole_components _"):]
    assert "wnaudit: 1 reparametrized weight(s)" in whole_components and "WN206 f0_predictor_extra.weight" in whole_components
    own = output[output.index("_ test_own_failure_is_kept _"):]
    assert "the test's own failure" in own


def test_without_the_flag_the_plugin_does_nothing(project: Path):
    outcomes, output = _pytest(project)
    expected = {name: "PASSED" for name in EXPECTED_ON} | {"test_own_failure_is_kept": "FAILED"}
    assert outcomes == expected, output
    assert "WN206" not in output


def test_the_ini_key_turns_it_on(project: Path, tmp_path: Path):
    (tmp_path / "test_served.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nwnaudit_watch = true\n")
    outcomes, output = _pytest(tmp_path, "-k", "serving or training")
    assert outcomes == {"test_serving": "FAILED", "test_inference_mode_in_training_mode": "FAILED", "test_training": "PASSED"}, output


def test_off_it_never_imports_torch(tmp_path: Path):
    (tmp_path / "test_plain.py").write_text(textwrap.dedent('''
        import sys

        def test_no_torch():
            assert "torch" not in sys.modules
    '''))
    outcomes, output = _pytest(tmp_path, "--strict-markers")
    assert outcomes == {"test_no_torch": "PASSED"}, output


def test_the_entry_point_is_declared():
    """pytest finds the plugin through the pytest11 entry point of an installed wnaudit."""
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[project\.entry-points\.pytest11\]\n((?:[^\[\n].*\n)*)", text, re.MULTILINE)
    assert section, "pyproject.toml declares no pytest11 entry point"
    assert re.search(r'^wnaudit\s*=\s*"wnaudit\.runtime\.pytest_plugin"\s*$', section.group(1), re.MULTILINE)
    from wnaudit.runtime import pytest_plugin

    assert hasattr(pytest_plugin, "pytest_addoption")


def test_installed_it_loads_without_naming_it(project: Path):
    """Where wnaudit is installed from this checkout, the entry point alone loads the plugin."""
    from importlib.metadata import entry_points

    points = [p for p in entry_points(group="pytest11") if p.value == "wnaudit.runtime.pytest_plugin"]
    if not points:
        pytest.skip("wnaudit is not installed with its pytest11 entry point in this environment")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "--wnaudit-watch", "-k", "test_serving"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert re.search(r"^FAILED \S+::test_serving", done.stdout, re.MULTILINE), done.stdout + done.stderr
