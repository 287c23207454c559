"""The fix drops the imports it leaves unused (and only those), and puts ``import torch`` where isort would."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from wnaudit.common.options import RunOptions
from wnaudit.source import fix_source, lint_files
from source_helpers import write_package

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _imported(source: str) -> set[str]:
    """Names the module's top-level imports bind."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
    return names


def _unused_imports(source: str) -> set[str]:
    """Top-level imported names never loaded anywhere (a small F401)."""
    tree = ast.parse(source)
    compile(tree, "fixed.py", "exec")
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return _imported(source) - loaded


def _fix(source: str) -> str:
    fixed, done = fix_source(source, "example.py")
    assert done, "expected a fix"
    again, nothing = fix_source(fixed, "example.py")
    assert again == fixed and nothing == [], "the fix is not idempotent"
    return fixed


def test_legacy_vocoder_fixed_has_no_unused_imports(tmp_path):
    target = tmp_path / "legacy_vocoder.py"
    target.write_bytes((EXAMPLES / "legacy_vocoder.py").read_bytes())
    result = lint_files([target], RunOptions(fix=True, unsafe_fixes=True))  # WN103 needs review
    assert result.fixed and result.findings == [] and result.errors == []
    fixed = target.read_text()
    assert _unused_imports(fixed) == set()
    assert "remove_weight_norm, weight_norm" not in fixed
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "F401", str(target)], capture_output=True, text=True,
    )
    assert flake8.returncode == 0, flake8.stdout + flake8.stderr
    # isort's place: before the first torch import, not after the block.
    lines = fixed.splitlines()
    assert lines.index("import torch") < lines.index("import torch.nn as nn")
    again = lint_files([target], RunOptions(fix=True, unsafe_fixes=True))  # WN103 needs review
    assert not again.fixed and target.read_text() == fixed


def test_names_unused_before_the_fix_are_kept():
    fixed = _fix(
        '"""Doc."""\n'
        "from __future__ import annotations\n\n"
        "import os\n"
        "import torch.nn as nn\n"
        "from torch.nn.utils import clip_grad_norm_, weight_norm\n\n"
        "conv = weight_norm(nn.Conv1d(2, 2, 3))\n"
    )
    assert "from torch.nn.utils import clip_grad_norm_\n" in fixed
    assert "import os\n" in fixed
    assert _unused_imports(fixed) == {"os", "clip_grad_norm_", "annotations"}
    # import torch: after the docstring, __future__ and stdlib, before the torch imports.
    assert '"""Doc."""\nfrom __future__ import annotations\n\nimport os\nimport torch\nimport torch.nn as nn\n' in fixed


def test_names_still_used_are_kept():
    fixed = _fix(
        "import torch.nn as nn\n"
        "from torch.nn.utils import clip_grad_norm_, remove_weight_norm, weight_norm\n\n"
        "conv = weight_norm(nn.Conv1d(2, 2, 3))\n"
        "remove_weight_norm(conv)\n"
        "clip_grad_norm_(conv.parameters(), 1.0)\n"
    )
    assert "from torch.nn.utils import clip_grad_norm_\n" in fixed
    assert _unused_imports(fixed) == set()


def test_all_reexports_are_kept():
    fixed = _fix(
        "import torch.nn as nn\n"
        "from torch.nn.utils import remove_weight_norm, weight_norm\n\n"
        '__all__ = ["weight_norm", "conv"]\n'
        "conv = weight_norm(nn.Conv1d(2, 2, 3))\n"
        "remove_weight_norm(conv)\n"
    )
    assert "from torch.nn.utils import weight_norm\n" in fixed
    assert "remove_weight_norm" not in fixed


def test_string_annotations_keep_their_names():
    fixed = _fix(
        "import torch.nn as nn\n"
        "from torch.nn.utils import weight_norm\n\n"
        'def wrap(fn: "weight_norm") -> None:\n'
        "    return None\n\n"
        "conv = weight_norm(nn.Conv1d(2, 2, 3))\n"
    )
    assert "from torch.nn.utils import weight_norm\n" in fixed


def test_comments_and_parenthesised_imports_survive():
    fixed = _fix(
        "import os\n"
        "from torch.nn.utils import (  # torch utilities\n"
        "    clip_grad_norm_,\n"
        "    weight_norm,\n"
        ")\n"
        "# the legacy remover\n"
        "from torch.nn.utils import remove_weight_norm\n"
        "import torch.nn as nn\n\n"
        "conv = weight_norm(nn.Conv1d(2, 2, 3))\n"
        "remove_weight_norm(conv)\n"
        "clip_grad_norm_(conv.parameters(), 1.0)\n"
        "print(os.sep)\n"
    )
    assert "from torch.nn.utils import (  # torch utilities\n    clip_grad_norm_,\n)\n" in fixed
    assert "# the legacy remover\nimport torch.nn as nn\n" in fixed
    assert _unused_imports(fixed) == set()


def test_other_files_imports_are_kept(tmp_path):
    package = write_package(
        tmp_path,
        "pkg",
        {
            "layers.py": "import torch.nn as nn\nfrom torch.nn.utils import remove_weight_norm, weight_norm\n\n"
            "conv = weight_norm(nn.Conv1d(2, 2, 3))\nremove_weight_norm(conv)\n",
            "model.py": "import torch\nfrom .layers import weight_norm\n\nlayer = weight_norm(torch.nn.Linear(2, 2))\n",
        },
    )
    result = lint_files([package / "layers.py", package / "model.py"], RunOptions(fix=True, unsafe_fixes=True))  # WN103 needs review
    assert result.fixed and result.errors == []
    fixed = (package / "layers.py").read_text()
    assert "from torch.nn.utils import weight_norm\n" in fixed
