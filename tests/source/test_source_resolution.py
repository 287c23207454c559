"""Resolution as real model code writes it: aliases, import-time choices, helpers, packages."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files, lint_source
from source_helpers import write_package

MODERN_APPLY = "from torch.nn.utils.parametrizations import weight_norm\nconv = weight_norm(nn.Conv1d(2, 2, 3))\n"


def codes(source: str) -> list[str]:
    return [f.code for f in lint_source(textwrap.dedent(source), "model.py")]


@pytest.mark.parametrize(
    "imports, call",
    [
        ("from torch.nn.utils import remove_weight_norm as rwn", "rwn(conv)"),
        ("import torch.nn.utils as U", "U.remove_weight_norm(conv)"),
        ("", "nn.utils.remove_weight_norm(conv)"),
        ("from torch.nn import utils", "utils.remove_weight_norm(conv)"),
        ("import torch", "torch.nn.utils.remove_weight_norm(conv)"),
        ("from torch.nn.utils.weight_norm import remove_weight_norm", "remove_weight_norm(conv)"),
        ("from torch.nn.utils import *", "remove_weight_norm(conv)"),
        ("import torch.nn.utils.weight_norm as legacy", "legacy.remove_weight_norm(conv)"),
    ],
)
def test_every_import_spelling_of_the_legacy_remover(imports, call):
    source = f"import torch.nn as nn\n{imports}\n{MODERN_APPLY}{call}\n"
    assert codes(source) == ["WN101"]


@pytest.mark.parametrize(
    "choice",
    [
        # try/except ImportError, either order
        "try:\n    from torch.nn.utils.parametrizations import weight_norm\nexcept ImportError:\n    from torch.nn.utils import weight_norm\n",
        "from torch.nn.utils import weight_norm\ntry:\n    from torch.nn.utils.parametrizations import weight_norm\nexcept ImportError:\n    pass\n",
        # hasattr
        "weight_norm = nn.utils.weight_norm\nif hasattr(nn.utils.parametrizations, 'weight_norm'):\n    weight_norm = nn.utils.parametrizations.weight_norm\n",
        # getattr with default
        "weight_norm = getattr(nn.utils.parametrizations, 'weight_norm', nn.utils.weight_norm)\n",
        # conditional expression
        "weight_norm = nn.utils.parametrizations.weight_norm if hasattr(nn.utils, 'parametrizations') else nn.utils.weight_norm\n",
        # torch version check
        "import torch\nif tuple(int(p) for p in torch.__version__.split('.')[:2]) >= (2, 1):\n    from torch.nn.utils.parametrizations import weight_norm\nelse:\n    from torch.nn.utils import weight_norm\n",
        # functools.partial
        "import functools\nweight_norm = functools.partial(nn.utils.parametrizations.weight_norm, dim=None)\n",
    ],
)
def test_spelling_chosen_at_import_time(choice):
    source = f"import torch.nn as nn\n{choice}conv = weight_norm(nn.Conv1d(2, 2, 3))\nnn.utils.remove_weight_norm(conv)\n"
    assert codes(source) == ["WN101"]


def test_function_local_choice_and_method_wrappers_like_transformers():
    source = """
    import torch.nn as nn

    class HifiGan(nn.Module):
        def apply_weight_norm(self):
            weight_norm = nn.utils.weight_norm
            if hasattr(nn.utils.parametrizations, "weight_norm"):
                weight_norm = nn.utils.parametrizations.weight_norm
            for layer in self.upsampler:
                weight_norm(layer)

        def remove_weight_norm(self):
            for layer in self.upsampler:
                nn.utils.remove_weight_norm(layer)
    """
    assert codes(source) == ["WN101"]


def test_helper_function_applies_modern_weight_norm():
    source = """
    import torch.nn as nn
    from torch.nn.utils import remove_weight_norm
    from torch.nn.utils.parametrizations import weight_norm as wn

    def WNConv1d(*args, **kwargs):
        return wn(nn.Conv1d(*args, **kwargs))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = WNConv1d(2, 2, 3)

        def remove_weight_norm(self):
            remove_weight_norm(self.conv)
    """
    assert codes(source) == ["WN101"]


@pytest.mark.parametrize(
    "source",
    [
        # legacy only: correct
        "import torch.nn as nn\nfrom torch.nn.utils import weight_norm, remove_weight_norm\n"
        "def build():\n    return weight_norm(nn.Conv1d(2, 2, 3))  # noqa: WN103\n"
        "def strip(m):\n    remove_weight_norm(m)\n",
        # dual-spelling remover (the xcodec shape)
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
        "def strip(model):\n    for m in model.modules():\n        try:\n            torch.nn.utils.remove_weight_norm(m, name='weight')\n"
        "        except (ValueError, AttributeError):\n            pass\n"
        "        if hasattr(m, 'parametrizations') and 'weight' in m.parametrizations:\n"
        "            torch.nn.utils.parametrize.remove_parametrizations(m, 'weight', leave_parametrized=True)\n",
        # spelling check before the legacy call
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
        "def strip(m):\n    if hasattr(m, 'parametrizations'):\n        torch.nn.utils.parametrize.remove_parametrizations(m, 'weight')\n"
        "    else:\n        torch.nn.utils.remove_weight_norm(m)\n",
        # a local function that shadows the API name
        "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(nn.Conv1d(2, 2, 3))\n"
        "def remove_weight_norm(m):\n    nn.utils.parametrize.remove_parametrizations(m, 'weight')\nremove_weight_norm(c)\n",
        # a parameter named like the API
        "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(nn.Conv1d(2, 2, 3))\n"
        "def strip(m, remove_weight_norm):\n    remove_weight_norm(m)\n",
        # no weight norm applied anywhere we can see
        "import torch.nn as nn\ndef strip(m):\n    nn.utils.remove_weight_norm(m)\n",
        # spectral norm modern, weight norm removal legacy on a legacy-normed module
        "import torch.nn as nn\nfrom torch.nn.utils import weight_norm\nfrom torch.nn.utils.parametrizations import spectral_norm\n"
        "a = weight_norm(nn.Conv1d(2, 2, 3))  # noqa: WN103\nb = spectral_norm(nn.Conv1d(2, 2, 3))\nnn.utils.remove_weight_norm(a)\n",
    ],
    ids=["legacy-only", "dual-remover", "spelling-check", "shadowing-def", "parameter", "unknown", "other-kind"],
)
def test_precision_cases_are_not_flagged(source):
    assert codes(source) == []


def test_classes_in_one_file_are_told_apart():
    source = """
    import torch.nn as nn
    from torch.nn.utils import weight_norm as legacy_wn, remove_weight_norm
    from torch.nn.utils.parametrizations import weight_norm

    class Old(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = legacy_wn(nn.Conv1d(2, 2, 3))  # noqa: WN103

        def remove_weight_norm(self):
            remove_weight_norm(self.conv)

    class New(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = weight_norm(nn.Conv1d(2, 2, 3))

        def remove_weight_norm(self):
            remove_weight_norm(self.conv)
    """
    found = lint_source(textwrap.dedent(source), "model.py")
    assert [(f.code, f.line) for f in found] == [("WN101", 20)]


def _write_package(root: Path, name: str = "vocoders") -> None:
    write_package(
        root,
        name,
        {
            "layers.py": "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
            "class Generator(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = weight_norm(nn.Conv1d(2, 2, 3))\n",
            "export.py": f"from torch.nn.utils import remove_weight_norm\nfrom {name}.layers import Generator\n\n"
            "class Exported(Generator):\n    def fold(self):\n        remove_weight_norm(self.conv)\n",
            "tools.py": "import torch.nn as nn\nfrom .layers import Generator\n\n"
            "def strip(model: Generator):\n    nn.utils.remove_weight_norm(model.conv)\n",
        },
    )


@pytest.mark.parametrize("name", ["vocoders", "torchvoc"])  # a user package whose name starts like torch's
def test_cross_file_package_resolves_through_imports(tmp_path, name):
    _write_package(tmp_path, name)
    files = sorted((tmp_path / name).glob("*.py"))
    result = lint_files(files, RunOptions())
    assert [(Path(f.path).name, f.code) for f in result.findings] == [("export.py", "WN101"), ("tools.py", "WN101")]
    # Linted alone, each removal file still reads the module it imports: the same answer.
    for alone in ("export.py", "tools.py"):
        found = lint_files([tmp_path / name / alone], RunOptions()).findings
        assert [(Path(f.path).name, f.code) for f in found] == [(alone, "WN101")]


def test_cross_file_fix_runs(tmp_path, monkeypatch):
    _write_package(tmp_path)
    files = sorted((tmp_path / "vocoders").glob("*.py"))
    result = lint_files(files, RunOptions(fix=True))
    assert len(result.fixed) == 2 and result.findings == []
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    export = importlib.import_module("vocoders.export")
    tools = importlib.import_module("vocoders.tools")
    model = export.Exported()
    model.fold()
    assert not hasattr(model.conv, "parametrizations")
    other = importlib.import_module("vocoders.layers").Generator()
    tools.strip(other)
    assert not hasattr(other.conv, "parametrizations")


@pytest.mark.parametrize(
    "test, flagged",
    [
        ("hasattr(m, 'weight_g')", False),
        ("torch.nn.utils.parametrize.is_parametrized(m)", False),
        ("any(isinstance(h, WeightNorm) for h in m._forward_pre_hooks.values())", False),
        ("self.use_g", True),
        ("m is not None", True),
    ],
)
def test_only_spelling_checks_guard_a_legacy_removal(test, flagged):
    source = (
        "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
        f"def strip(self, m):\n    if {test}:\n        torch.nn.utils.remove_weight_norm(m)\n"
    )
    assert codes(source) == (["WN101"] if flagged else [])
