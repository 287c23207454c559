"""WN109 on the removal targets of issue 22 (e): what torch does with each example, and what the rule says.

The examples live in ``wnaudit/source/rules/_removal_target_examples.py`` and
end with the call that runs the removal.  Here they are executed under torch:
the reported ones raise ``ValueError``, their fixes and the valid counterparts
fold.  Where the code does not decide (a norm string from a config, a flag
passed through a parameter) the rule stays silent, whatever torch would do.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from wnaudit.common.options import RunOptions
from wnaudit.source import fix_source, lint_files, lint_source
from wnaudit.source.rules import _removal_target_examples as examples
from wnaudit.source.rules.missing_norm import RemovalFromModuleWithoutNorm

#: Issue 22 (e)'s shapes, and issue 35 (8)'s: a class chosen by a flag, a list of resblocks, a wrapper normed by "none",
#: a norm a constructor flag never applies.
_SHAPES = ("self.cond_layer", "self.conv_pre", "self.source_downs", "conv1d_type", "self.resblocks", "use_weight_norm")
ISSUE_22_VALID = [e for e in RemovalFromModuleWithoutNorm.VALID if any(shape in e.source for shape in _SHAPES)]
ISSUE_22_INVALID = [e for e in RemovalFromModuleWithoutNorm.INVALID if any(shape in e.source for shape in _SHAPES)]
MODERN_WRAPPER = 'remove_parametrizations(self.cond_layer, "weight")'


def _run(source: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "example", "exec"), {"__name__": "example"})


def _wn109(source: str, path: str = "example.py") -> list:
    return [f for f in lint_source(source, path) if f.code == "WN109"]


@pytest.mark.parametrize("example", ISSUE_22_INVALID, ids=range(len(ISSUE_22_INVALID)))
def test_every_reported_shape_raises_under_torch_and_its_fix_folds(example):
    assert len(ISSUE_22_INVALID) == 11 and len(ISSUE_22_VALID) == 14
    with pytest.raises(ValueError):
        _run(example.source)
    if example.expected_replacement is not None:
        _run(example.expected_replacement)


@pytest.mark.parametrize("example", ISSUE_22_VALID, ids=range(len(ISSUE_22_VALID)))
def test_every_valid_counterpart_folds_under_torch(example):
    _run(example.source)


@pytest.mark.parametrize("legacy", [False, True], ids=["modern", "legacy"])
def test_wrapper_message_names_where_the_norm_sits(legacy):
    removal = "remove_weight_norm(self.cond_layer)" if legacy else MODERN_WRAPPER
    source = examples.wrapper(removal, legacy=legacy)
    (finding,) = _wn109(source)
    assert "`self.cond_layer` is a SConv1d (built at line" in finding.message
    assert "norm='weight_norm'" in finding.message
    line = source.splitlines().index("        return weight_norm(module)" + ("  # noqa: WN103" if legacy else "")) + 1
    assert f"descendant `.conv.conv` (applied at example.py:{line} through `apply_parametrization_norm`)" in finding.message
    assert "`self.cond_layer.conv.conv`" in finding.message


def test_flag_message_names_the_construction_and_the_first_removal():
    source = examples.flag('remove_parametrizations(self.conv_pre, "weight")', "conv_pre_weight_norm=False")
    lines = source.splitlines()
    (finding,) = _wn109(source)
    built = next(n for n, text in enumerate(lines, 1) if "HifiganGenerator(4" in text)
    first = next(n for n, text in enumerate(lines, 1) if "remove_parametrizations(self.conv_pre" in text)
    assert finding.line > first
    assert f"the HifiganGenerator built at line {built} with conv_pre_weight_norm=False" in finding.message
    assert f"`__init__` already removes it at line {first}" in finding.message


def test_never_normed_elements_message_names_their_construction():
    source = examples.never_normed("remove_weight_norm(down)", examples.APPENDED_DOWNS, legacy=True)
    (finding,) = _wn109(source)
    assert "the elements of `self.source_downs` hold no norm: each is built as Conv1d (lines" in finding.message


@pytest.mark.parametrize(
    "source",
    [
        examples.wrapper(MODERN_WRAPPER, norm="CONFIG['norm']", extra="\n\nCONFIG = {'norm': 'weight_norm'}\n"),
        examples.wrapper(MODERN_WRAPPER, norm="norm").replace("gin_channels=2):", "gin_channels=2, norm='weight_norm'):"),
        examples.wrapper(MODERN_WRAPPER).replace('if norm == "weight_norm":', "if norm.startswith('weight'):"),
        examples.flag('remove_parametrizations(self.conv_pre, "weight")', "conv_pre_weight_norm=CONFIG"),
        examples.never_normed('remove_parametrizations(down, "weight")', examples.LISTED_DOWNS,
                              extra="        for down in self.source_downs:\n            init_norm(down)\n"),
        examples.never_normed('remove_parametrizations(down, "weight")', examples.LISTED_DOWNS,
                              extra="        self.source_downs[0] = weight_norm(nn.Conv1d(18, 8, 16, 8))\n"),
        examples.never_normed('remove_parametrizations(down, "weight")', examples.LISTED_DOWNS,
                              extra="        self.source_downs.extend(CONFIG)\n"),
        examples.never_normed('remove_parametrizations(down, "weight")', "        self.source_downs = nn.ModuleList()\n"),
    ],
    ids=["norm-from-config", "norm-from-parameter", "unreadable-test", "flag-from-config", "elements-handed",
         "element-replaced", "elements-extended", "empty-container"],
)
def test_no_finding_where_the_code_does_not_decide(source):
    assert _wn109(source) == []


def test_a_helper_that_norms_an_existing_module_leaves_constructions_undecided():
    source = examples.wrapper(MODERN_WRAPPER).replace(
        "        self.conv = apply_parametrization_norm(nn.Conv1d(*args, **kwargs), norm)\n",
        "        self.conv = nn.Conv1d(*args, **kwargs)\n        apply_parametrization_norm(self.conv, norm)\n",
    )
    assert _wn109(source) == []


def test_wrapper_in_an_imported_file_same_answer_whatever_files_are_linted(tmp_path: Path):
    layers, model = examples.wrapper(MODERN_WRAPPER).split("\n\n\nclass WN(nn.Module):")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (tmp_path / "layers.py").write_text(layers + "\n")
    user = tmp_path / "wavenet.py"
    user.write_text(
        examples.MODERN_IMPORTS + "from layers import SConv1d\n\n\nclass WN(nn.Module):" + model
    )
    alone = [(Path(f.path).name, f.line, f.message) for f in lint_files([user], RunOptions()).findings if f.code == "WN109"]
    both = [(Path(f.path).name, f.line, f.message)
            for f in lint_files([tmp_path / "layers.py", user], RunOptions()).findings if f.code == "WN109"]
    assert alone == both and len(alone) == 1
    assert "(applied at layers.py:" in alone[0][2] and "`.conv.conv`" in alone[0][2]


def test_the_fixed_wrapper_is_clean_and_folds():
    source = examples.wrapper(MODERN_WRAPPER)
    fixed, done = fix_source(source, "example.py")
    assert [f.code for f in done] == ["WN109"] and lint_source(fixed, "example.py") == []
    _run(fixed)


def _flag_project(tmp_path: Path, built_with: str, call: str = "self.waveform_decoder.remove_weight_norm()") -> Path:
    """XTTS's shape: the generator in one file, the decoder that builds it with a constant flag in another."""
    generator, _ = examples.flag('remove_parametrizations(self.conv_pre, "weight")', "").split("\n\n\nclass HifiDecoder")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (tmp_path / "generator.py").write_text(generator + "\n")
    decoder = tmp_path / "decoder.py"
    decoder.write_text(
        "import torch.nn as nn\nfrom generator import HifiganGenerator\n\n\n"
        "class HifiDecoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.waveform_decoder = HifiganGenerator(4, {built_with})\n\n"
        f"    def load_checkpoint(self, eval=False):\n        if eval:\n            {call}\n\n\n"
        "HifiDecoder().load_checkpoint(eval=True)\n"
    )
    return decoder


def _run_project(decoder: Path) -> None:
    import sys

    sys.path.insert(0, str(decoder.parent))
    try:
        sys.modules.pop("generator", None)
        _run(decoder.read_text())
    finally:
        sys.path.remove(str(decoder.parent))
        sys.modules.pop("generator", None)


def test_flag_built_in_another_file_is_reported_at_the_removal_method_call(tmp_path: Path):
    decoder = _flag_project(tmp_path, "conv_pre_weight_norm=False")
    with pytest.raises(ValueError):
        _run_project(decoder)
    alone = [(f.line, f.message) for f in lint_files([decoder], RunOptions()).findings if f.code == "WN109"]
    both = [(f.line, f.message) for f in lint_files([tmp_path / "generator.py", decoder], RunOptions()).findings
            if f.code == "WN109"]
    assert alone == both and [line for line, _ in alone] == [12]
    assert "`self.waveform_decoder` is a HifiganGenerator built at line 8 with conv_pre_weight_norm=False" in alone[0][1]
    assert "its `__init__` already removes the norm of `.conv_pre` (generator.py:12; the norm applied at generator.py:9)" in alone[0][1]
    assert "`remove_weight_norm()` removes it again (generator.py:15)" in alone[0][1]


@pytest.mark.parametrize(
    "built_with, call",
    [
        ("conv_pre_weight_norm=True", "self.waveform_decoder.remove_weight_norm()"),
        ("", "self.waveform_decoder.remove_weight_norm()"),
        ("conv_pre_weight_norm=False", "try:\n                self.waveform_decoder.remove_weight_norm()\n"
                                       "            except ValueError:\n                pass"),
    ],
    ids=["flag-keeps-the-norm", "default-keeps-it", "guarded"],
)
def test_flag_built_in_another_file_valid_counterparts(tmp_path: Path, built_with: str, call: str):
    decoder = _flag_project(tmp_path, built_with, call)
    _run_project(decoder)
    assert [f for f in lint_files([decoder], RunOptions()).findings if f.code == "WN109"] == []
