"""The fixed example modules run: the removal folds under every spelling the file can choose."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import warnings
from pathlib import Path

import pytest
import torch

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def _fixed_copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copyfile(EXAMPLES / name, target)
    result = lint_files([target], RunOptions(fix=True, unsafe_fixes=True))  # WN103 needs review
    assert result.fixed and result.findings == [] and result.errors == []
    return target


def _no_weight_norm_left(model: torch.nn.Module) -> bool:
    return not any(
        hasattr(m, "parametrizations") or any("WeightNorm" in type(h).__name__ for h in m._forward_pre_hooks.values())
        for m in model.modules()
    )


@pytest.fixture
def force_legacy(monkeypatch):
    """Make ``from torch.nn.utils.parametrizations import weight_norm`` fail, as on old torch."""
    monkeypatch.delattr(torch.nn.utils.parametrizations, "weight_norm")


def test_hift_example_has_the_bug():
    module = _import(EXAMPLES / "hift_vocoder.py", "hift_buggy")
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        module.HiFTGenerator().remove_weight_norm()


@pytest.mark.parametrize("spelling", ["modern", "legacy"])
def test_fixed_hift_folds_with_either_spelling(tmp_path, request, spelling):
    if spelling == "legacy":
        request.getfixturevalue("force_legacy")
    fixed = _fixed_copy(tmp_path, "hift_vocoder.py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = _import(fixed, f"hift_fixed_{spelling}")
        torch.manual_seed(0)
        model = module.HiFTGenerator().eval()
    uses_modern = any(hasattr(m, "parametrizations") for m in model.modules())
    assert uses_modern is (spelling == "modern")
    mel = torch.randn(1, 80, 12)
    with torch.no_grad():
        before = model(mel)
    model.remove_weight_norm()
    assert _no_weight_norm_left(model)
    with torch.no_grad():
        after = model(mel)
    torch.testing.assert_close(after, before, rtol=1e-4, atol=1e-5)


def test_fixed_legacy_vocoder_migrates_application_and_removal(tmp_path):
    fixed = _fixed_copy(tmp_path, "legacy_vocoder.py")
    module = _import(fixed, "legacy_fixed")
    model = module.Upsampler()
    assert hasattr(model.up, "parametrizations")
    x = torch.randn(1, 8, 6)
    before = model(x).detach()
    model.remove_weight_norm()
    assert _no_weight_norm_left(model)
    torch.testing.assert_close(model(x).detach(), before)


def test_legacy_vocoder_is_clean_for_wn101():
    result = lint_files([EXAMPLES / "legacy_vocoder.py"], RunOptions())
    assert {f.code for f in result.findings} == {"WN103"}


def test_examples_directory_findings():
    files = sorted(EXAMPLES.rglob("*.py"))
    result = lint_files(files, RunOptions())
    by_file = {}
    for f in result.findings:
        by_file.setdefault(Path(f.path).name, set()).add(f.code)
    assert by_file["hift_vocoder.py"] == {"WN101"}
    assert by_file["decoder.py"] == {"WN101"}
    assert by_file["legacy_vocoder.py"] == {"WN103"}
