"""WN103's migration takes along every removal of the modules it migrates, across files (issue 35, item 6).

Each project is fixed with ``--fix --unsafe-fixes`` and then run: the model the
fixed code builds must fold exactly as the original did (no weight norm left),
including where a helper in another module catches the legacy remover's error.
Where a removal cannot be migrated, the migration is not offered at all.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

MODEL = """
import torch.nn as nn
from torch.nn.utils import weight_norm

from .utils import fold


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 4, 3))
        self.post = weight_norm(nn.Conv1d(4, 1, 3))

    def forward(self, x):
        return self.post(self.conv(x))

    def remove_weight_norm(self):
        fold(self.conv)
        fold(self.post)
"""

#: The seeds' helper: the error of the legacy remover on a modern norm is caught, so it would fold nothing.
SWALLOWING = """
from torch.nn.utils import remove_weight_norm


def fold(module):
    try:
        remove_weight_norm(module)
    except ValueError:
        pass
"""

PLAIN = """
import torch


def fold(module):
    torch.nn.utils.remove_weight_norm(module)
"""

#: A removal behind a check of the legacy hook: after a migration the check fails and nothing is removed.
CHECKED = """
from torch.nn.utils import remove_weight_norm


def fold(module):
    if hasattr(module, "weight_g"):
        remove_weight_norm(module)
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (root / "voc").mkdir(parents=True)
    (root / "voc" / "__init__.py").write_text("")
    for name, text in files.items():
        (root / "voc" / name).write_text(textwrap.dedent(text).lstrip())
    return root


def _folded(root: Path) -> bool:
    """Build the project's model, run its removal method, and say whether no weight norm is left."""
    sys.path.insert(0, str(root))
    try:
        for name in [n for n in sys.modules if n == "voc" or n.startswith("voc.")]:
            del sys.modules[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = importlib.import_module("voc.model").Generator()
            model.remove_weight_norm()
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "voc" or n.startswith("voc.")]:
            del sys.modules[name]
    return not any(
        hasattr(m, "parametrizations") or any("WeightNorm" in type(h).__name__ for h in m._forward_pre_hooks.values())
        for m in model.modules()
    )


def _fix(root: Path, files: list[Path]) -> list:
    result = lint_files(files, RunOptions(fix=True, unsafe_fixes=True))
    assert result.errors == []
    return result.findings


@pytest.mark.parametrize("helper", [SWALLOWING, PLAIN], ids=["swallowing", "plain"])
def test_a_migration_takes_along_a_helper_in_another_module(tmp_path: Path, helper: str):
    root = _project(tmp_path, {"model.py": MODEL, "utils.py": helper})
    assert _folded(root)  # it worked before
    _fix(root, sorted(root.rglob("*.py")))
    assert "parametrizations.weight_norm" in (root / "voc" / "model.py").read_text()  # migrated
    assert "_remove_weight_norm_any_spelling(module)" in (root / "voc" / "utils.py").read_text()
    assert _folded(root)  # and still works


def test_a_helper_the_serving_code_hands_the_model_to_is_taken_along(tmp_path: Path):
    """The model is built and folded by code that calls a helper walking its modules."""
    model = MODEL.replace("from .utils import fold\n", "").replace(
        "    def remove_weight_norm(self):\n        fold(self.conv)\n        fold(self.post)\n",
        "    def remove_weight_norm(self):\n        strip(self)\n",
    ).replace("import torch.nn as nn\n", "import torch.nn as nn\n\nfrom .strip import strip\n")
    strip = """
        from torch.nn.utils import remove_weight_norm


        def strip(model):
            for m in model.modules():
                try:
                    remove_weight_norm(m)
                except ValueError:
                    pass
        """
    root = _project(tmp_path, {"model.py": model, "strip.py": strip})
    assert _folded(root)
    _fix(root, sorted(root.rglob("*.py")))
    assert "parametrizations.weight_norm" in (root / "voc" / "model.py").read_text()
    assert _folded(root)


def test_a_migration_whose_removal_is_outside_the_run_is_not_offered(tmp_path: Path):
    """Linting ``model.py`` alone: the helper cannot be migrated with it, so the finding comes without a fix."""
    root = _project(tmp_path, {"model.py": MODEL, "utils.py": SWALLOWING})
    before = (root / "voc" / "model.py").read_text()
    findings = _fix(root, [root / "voc" / "model.py"])
    assert (root / "voc" / "model.py").read_text() == before
    assert [f.code for f in findings] == ["WN103", "WN103"]
    assert all(not f.fixable and "remove_weight_norm at `utils.py:6` may receive the migrated module" in f.message for f in findings)
    assert _folded(root)


def test_a_removal_behind_a_check_of_the_legacy_hook_makes_the_migration_unsafe(tmp_path: Path):
    root = _project(tmp_path, {"model.py": MODEL, "utils.py": CHECKED})
    before = {p: p.read_text() for p in root.rglob("*.py")}
    findings = _fix(root, sorted(root.rglob("*.py")))
    assert {p: p.read_text() for p in root.rglob("*.py")} == before
    assert all(not f.fixable and "check of the module's legacy hook" in f.message for f in findings if f.code == "WN103")
    assert _folded(root)


def test_a_helper_already_folding_both_spellings_is_left_as_it_is(tmp_path: Path):
    dual = """
        import torch


        def fold(module):
            try:
                torch.nn.utils.remove_weight_norm(module)
            except ValueError:
                torch.nn.utils.parametrize.remove_parametrizations(module, "weight")
        """
    root = _project(tmp_path, {"model.py": MODEL, "utils.py": dual})
    helper = (root / "voc" / "utils.py").read_text()
    _fix(root, sorted(root.rglob("*.py")))
    assert (root / "voc" / "utils.py").read_text() == helper
    assert "parametrizations.weight_norm" in (root / "voc" / "model.py").read_text()
    assert _folded(root)


def test_the_migration_is_reported_as_fixable_only_when_it_is_safe(tmp_path: Path):
    """A run that fixes nothing lists the same fixability ``--fix`` acts on."""
    root = _project(tmp_path, {"model.py": MODEL, "utils.py": SWALLOWING})
    every = lint_files(sorted(root.rglob("*.py")), RunOptions(unsafe_fixes=True)).findings
    alone = lint_files([root / "voc" / "model.py"], RunOptions(unsafe_fixes=True)).findings
    assert [f.fixable for f in every if f.code == "WN103"] == [True, True]
    assert [f.fixable for f in alone if f.code == "WN103"] == [False, False]
    assert torch.nn.utils.parametrizations.weight_norm  # the modern spelling this torch has
