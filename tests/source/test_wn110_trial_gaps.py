"""WN110 silent while weight norms stay live: gaps found trying the porting path as a user (round-2 trial).

Each case builds a small vocoder project whose served model keeps its F0 predictor's two weight norms live
(counted at run time on the real module), and asks WN110 to say so.  Both were silent
(`All checks passed!`) before the serving index learnt that a partial fold leaves parts live.
"""

from __future__ import annotations

import importlib.util
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torch.nn.utils import parametrize

import wnaudit
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

MODEL = """
import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class F0Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(weight_norm(nn.Conv1d(8, 4, 3, padding=1)), nn.ELU(),
                                 weight_norm(nn.Conv1d(4, 1, 1)))

    def forward(self, mel):
        return self.net(mel)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_pre = weight_norm(nn.Conv1d(8, 4, 7, padding=3))
        self.conv_post = weight_norm(nn.Conv1d(4, 1, 7, padding=3))
        self.f0_predictor = F0Predictor()

    def forward(self, mel):
        return torch.tanh(self.conv_post(self.conv_pre(mel) + self.f0_predictor(mel)))

    def remove_weight_norm(self):
        remove_parametrizations(self.conv_pre, "weight")
        remove_parametrizations(self.conv_post, "weight")
"""

SERVE = """
import wnaudit
from voc.model import Generator


def load_vocoder():
    model = Generator()
    model.eval()
    {fold}
    return model
"""

#: Lines of MODEL where F0Predictor applies weight norm (the sites that stay live).
F0_SITES = {10, 11}


def _project(root: Path, fold: str) -> Path:
    (root / "voc").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "voc"\n\n[tool.wnaudit]\nserving = ["voc.serve:load_vocoder"]\n')
    (root / "voc" / "__init__.py").write_text("")
    (root / "voc" / "model.py").write_text(textwrap.dedent(MODEL).lstrip())
    (root / "voc" / "serve.py").write_text(textwrap.dedent(SERVE).lstrip().format(fold=fold))
    return root


def _live_at_run_time(root: Path, fold: Callable[[Any], object]) -> list[str]:
    """Build the project's model and fold it as its ``load_vocoder`` does (``fold``: that statement, as a call)."""
    spec = importlib.util.spec_from_file_location(f"trial_model_{root.name}", root / "voc" / "model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Generator().eval()
    fold(model)
    return [name for name, sub in model.named_modules() if parametrize.is_parametrized(sub)]


def _wn110_lines(root: Path) -> set[int]:
    files = sorted((root / "voc").rglob("*.py"))
    result = lint_files(files, RunOptions())
    assert result.errors == []
    return {f.line for f in result.findings if f.code == "WN110" and Path(f.path).name == "model.py" and f.line}


def test_a_removal_method_that_skips_a_child_leaves_that_child_reported(tmp_path: Path):
    fold = "model.remove_weight_norm()"
    root = _project(tmp_path, fold)
    assert _live_at_run_time(root, lambda model: model.remove_weight_norm()) == ["f0_predictor.net.0", "f0_predictor.net.2"]
    assert _wn110_lines(root) >= F0_SITES


def test_a_partial_fold_with_exclude_and_no_later_fold_is_reported(tmp_path: Path):
    fold = 'wnaudit.fold_weight_norm(model, exclude=("f0_predictor",))'
    root = _project(tmp_path, fold)
    partial = _live_at_run_time(root, lambda model: wnaudit.fold_weight_norm(model, exclude=("f0_predictor",)))
    assert partial == ["f0_predictor.net.0", "f0_predictor.net.2"]
    assert _wn110_lines(root) == F0_SITES  # what the partial fold folds is not reported


def test_a_partial_fold_then_the_later_fold_of_the_part_is_clean(tmp_path: Path):
    """The CosyVoice3 recipe done right: every part but the F0 predictor now, the F0 predictor later."""
    fold = 'wnaudit.fold_weight_norm(model, exclude=("f0_predictor",))\n    wnaudit.fold_weight_norm(model.f0_predictor)'
    root = _project(tmp_path, fold)
    assert _live_at_run_time(
        root, lambda model: (wnaudit.fold_weight_norm(model, exclude=("f0_predictor",)), wnaudit.fold_weight_norm(model.f0_predictor))
    ) == []
    assert _wn110_lines(root) == set()


def test_the_partial_fold_s_message_names_what_it_leaves(tmp_path: Path):
    root = _project(tmp_path, 'wnaudit.fold_weight_norm(model, exclude=("f0_predictor",))')
    result = lint_files(sorted((root / "voc").rglob("*.py")), RunOptions())
    messages = {f.message for f in result.findings if f.code == "WN110"}
    assert messages and all("leaves `f0_predictor` live, and nothing folds it later" in m for m in messages), messages


def test_with_no_fold_the_f0_sites_are_reported(tmp_path: Path):
    """The baseline the cases above differ from (and the check that ``F0_SITES`` names the right lines)."""
    fold = "pass"
    root = _project(tmp_path, fold)
    assert len(_live_at_run_time(root, lambda model: None)) == 4
    assert _wn110_lines(root) >= F0_SITES
