"""The checkpoint fold works without numpy (issue 23, item 8's root cause).

README command 1 (``pip install ".[torch]" "torch==2.13.0"``) brings no numpy;
``--fix`` then failed with "unexpected RuntimeError: Numpy is not available".
Each run here is a fresh process in which ``import numpy`` fails, whatever
the test environment has installed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from checkpoint_helpers import vocoder_state
from test_checkpoint_forms import _write_sharded
from wnaudit import fold_state_dict

REPO = Path(__file__).resolve().parents[2]

#: Runs the CLI where numpy cannot be imported (as after README command 1).
_WITHOUT_NUMPY = r"""
import sys
sys.modules["numpy"] = None  # any "import numpy" now raises ImportError
import torch
try:
    torch.zeros(1).numpy()
except RuntimeError as error:
    assert "Numpy is not available" in str(error), error
else:
    raise SystemExit("numpy is still reachable")
from wnaudit.cli import main
main(sys.argv[1:], prog_name="wnaudit")
"""


def _fix_without_numpy(*paths: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", _WITHOUT_NUMPY, "--fix", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)


def _assert_folded(loaded: dict[str, torch.Tensor], state: dict[str, torch.Tensor]) -> None:
    expected, _ = fold_state_dict(state)
    assert sorted(loaded) == sorted(expected)
    for key, value in expected.items():
        assert torch.equal(loaded[key].view(torch.uint8), value.contiguous().view(torch.uint8)), key


def test_the_example_checkpoints_fold_without_numpy(tmp_path):
    examples = tmp_path / "checkpoints"
    shutil.copytree(REPO / "examples" / "checkpoints", examples)
    torch_file, safetensors_file = examples / "g_00100000", examples / "vocoder.safetensors"
    torch_state = torch.load(torch_file, weights_only=True)
    safetensors_state = load_file(safetensors_file)
    done = _fix_without_numpy(torch_file, safetensors_file)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unexpected" not in done.stderr and "Numpy" not in done.stderr, done.stderr
    _assert_folded(load_file(safetensors_file), safetensors_state)
    written = torch.load(torch_file, weights_only=True)
    for key in ("generator", "state_dict", "model"):
        if isinstance(torch_state, dict) and key in torch_state and isinstance(torch_state[key], dict):
            torch_state, written = torch_state[key], written[key]
    _assert_folded(written, {k: v for k, v in torch_state.items() if isinstance(v, torch.Tensor)})


@pytest.mark.parametrize("kind", ["safetensors", "bin"])
def test_a_sharded_checkpoint_folds_without_numpy(tmp_path, kind):
    index, state = _write_sharded(tmp_path, "modern", kind)
    done = _fix_without_numpy(index)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unexpected" not in done.stderr, done.stderr


def test_a_streamed_torch_zip_folds_without_numpy(tmp_path):
    state = dict(vocoder_state("legacy"))
    path = tmp_path / "g.pt"
    torch.save(state, path)
    done = _fix_without_numpy(path)
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_folded(torch.load(path, weights_only=True), state)
