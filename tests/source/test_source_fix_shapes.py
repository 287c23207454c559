"""Fixes keep each call's own formatting and work for every argument shape."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from wnaudit.common.options import RunOptions
from wnaudit.source import fix_source, lint_files, lint_source
from source_helpers import write_package

HEAD = "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"


@pytest.mark.parametrize(
    "call, expected",
    [
        ("x = (torch.nn.utils.remove_weight_norm(c))", 'x = (torch.nn.utils.parametrize.remove_parametrizations(c, "weight"))'),
        ("torch.nn.utils.remove_weight_norm(c, 'weight')", "torch.nn.utils.parametrize.remove_parametrizations(c, 'weight')"),
        ("torch.nn.utils.remove_weight_norm(module=c)", 'torch.nn.utils.parametrize.remove_parametrizations(module=c, tensor_name="weight")'),
        (
            "torch.nn.utils.remove_weight_norm(\n    c,  # the conv\n    name='weight',\n)",
            "torch.nn.utils.parametrize.remove_parametrizations(\n    c,  # the conv\n    tensor_name='weight',\n)",
        ),
        (
            "torch.nn.utils.remove_weight_norm(\n    c,  # the conv\n)",
            'torch.nn.utils.parametrize.remove_parametrizations(\n    c,  # the conv\n    "weight",\n)',
        ),
        ("torch.nn.utils.remove_weight_norm(*[c])", "_remove_weight_norm_any_spelling(*[c])"),
        ("torch.nn.utils.parametrize.remove_parametrizations(c,)", 'torch.nn.utils.parametrize.remove_parametrizations(c, "weight")'),
        ("torch.nn.utils.parametrize.remove_parametrizations(module=c)", 'torch.nn.utils.parametrize.remove_parametrizations(module=c, tensor_name="weight")'),
        ("torch.nn.utils.parametrize.remove_parametrizations(c, 'weight', False)", "torch.nn.utils.parametrize.remove_parametrizations(c, 'weight', True)"),
    ],
)
def test_call_shapes_are_fixed_and_run(call, expected):
    source = HEAD + call + "\n"
    assert lint_source(source, "m.py")
    fixed, done = fix_source(source, "m.py")
    assert done and lint_source(fixed, "m.py") == []
    assert expected in fixed
    namespace: dict = {}
    exec(compile(fixed, "m.py", "exec"), namespace)
    assert not hasattr(namespace["c"], "parametrizations")


def test_wn103_fix_migrates_removals_in_other_files_of_the_run(tmp_path, monkeypatch):
    package = write_package(
        tmp_path,
        "legacy_pkg",
        {
            "layers.py": "import torch.nn as nn\nfrom torch.nn.utils import weight_norm\n\n"
            "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = weight_norm(nn.Conv1d(2, 2, 3))\n",
            "fold.py": "from torch.nn.utils import remove_weight_norm\nfrom .layers import Block\n\n"
            "def fold(block: Block):\n    remove_weight_norm(block.conv)\n    return block\n",
        },
    )
    files = sorted(package.glob("*.py"))
    before = lint_files(files, RunOptions())
    assert [(Path(f.path).name, f.code) for f in before.findings] == [("layers.py", "WN103")]
    result = lint_files(files, RunOptions(fix=True, unsafe_fixes=True))  # WN103 needs review
    assert [f.code for f in result.fixed] == ["WN103"]
    assert result.findings == [] and lint_files(files, RunOptions()).findings == []
    assert "remove_parametrizations" in (package / "fold.py").read_text()
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    layers = importlib.import_module("legacy_pkg.layers")
    fold = importlib.import_module("legacy_pkg.fold")
    block = fold.fold(layers.Block())
    assert not hasattr(block.conv, "parametrizations") and isinstance(block.conv.weight, torch.nn.Parameter)


def test_wn103_fix_migrates_removals_even_when_wn101_is_ignored(tmp_path):
    from wnaudit.common.config import Config

    target = tmp_path / "m.py"
    target.write_text(
        "import torch\nfrom torch.nn.utils import weight_norm, remove_weight_norm\n"
        "c = weight_norm(torch.nn.Conv1d(2, 2, 3))\nremove_weight_norm(c)\n"
    )
    lint_files([target], RunOptions(config=Config(ignore=("WN101",)), fix=True))
    namespace: dict = {}
    exec(compile(target.read_text(), str(target), "exec"), namespace)
    assert not hasattr(namespace["c"], "parametrizations")
