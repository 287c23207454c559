"""WN109 on the removal targets issue 35 (8) found missed on held-out packages: a wrapper chosen by a flag among the
SEANet/EnCodec ``NormConv1d`` family, ``remove_parametrizations`` on each of a ``ModuleList`` of resblocks that hold
no parametrization themselves, and a wrapper whose constructor, for the string it is given, applies no norm.

The rule examples (``RemovalFromModuleWithoutNorm.VALID``/``INVALID``) are executed under torch by
``test_removal_targets.py``; here: what the messages say, and where the code does not decide, silence.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files, lint_source
from wnaudit.source.rules import _removal_target_examples as examples

MODERN = 'remove_parametrizations(self.conv, "weight")'
EACH = 'remove_parametrizations(l, "weight")'


def _wn109(source: str) -> list[str]:
    return [f.message for f in lint_source(source, "example.py") if f.code == "WN109"]


def test_a_wrapper_chosen_by_a_flag_is_reported_with_where_each_choice_holds_the_norm():
    (message,) = _wn109(examples.chosen_wrapper(MODERN))
    assert message.startswith("`self.conv` is a NormConv1d or SConv1d (chosen at line")
    assert "NormConv1d on `.conv` (applied at example.py:" in message
    assert "SConv1d on `.conv.conv` (applied at example.py:" in message


def test_a_choice_whose_norm_string_is_not_written_is_silent():
    source = examples.chosen_wrapper(MODERN, norm="norm").replace("causal=False):", 'causal=False, norm="weight_norm"):')
    assert _wn109(source) == []


def test_a_choice_one_of_which_holds_the_norm_itself_is_silent():
    """``nn.Conv1d`` normed where it is chosen holds the norm itself: the removal may fold, so nothing is said."""
    source = examples.chosen_wrapper(MODERN).replace(
        "conv1d_type = SConv1d if causal else NormConv1d", "conv1d_type = SConv1d if causal else normed_conv"
    ).replace("class Block(", "def normed_conv(*args, norm=None):\n    return weight_norm(nn.Conv1d(*args))\n\n\nclass Block(")
    assert _wn109(source) == []


def test_resblocks_holding_no_parametrization_themselves_are_reported():
    (message,) = _wn109(examples.resblocks(EACH))
    assert "the elements of `self.resblocks` is a ResBlock1" in message
    assert "descendant `.convs[*]`" in message
    (chosen,) = _wn109(examples.resblocks(EACH, examples.CHOSEN_RESBLOCKS))
    assert "ResBlock1 on `.convs[*]`" in chosen and "ResBlock2 on `.conv`" in chosen


def test_resblocks_whose_inner_list_is_not_shown_are_silent():
    """A block whose convs are appended by code the class does not show: where the norms sit is not decided."""
    source = examples.resblocks(EACH).replace(
        "self.convs = nn.ModuleList([weight_norm(nn.Conv1d(channels, channels, 3, padding=1)) for _ in range(2)])",
        "self.convs = make_convs(channels)",
    )
    assert _wn109(source) == []


def test_a_wrapper_whose_constructor_applies_no_norm_is_reported():
    source = examples.wrapper('remove_parametrizations(self.cond_layer, "weight")', norm='"none"')
    (message,) = _wn109(source)
    assert "`self.cond_layer` is a SConv1d (built at line" in message
    assert "norm='none') that holds no norm anywhere" in message


def test_a_wrapper_in_a_file_that_norms_built_modules_is_not_said_to_hold_none(tmp_path: Path):
    """The layers' file norms a module after building it: what the wrapper holds is not decided there."""
    layers = examples.wrapper("pass", norm='"none"').split("\n\n\nclass WN(")[0] + (
        "\n\n\ndef norm_all(module):\n    for m in module.modules():\n        weight_norm(m)\n"
    )
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (tmp_path / "voc").mkdir()
    (tmp_path / "voc" / "__init__.py").write_text("")
    (tmp_path / "voc" / "layers.py").write_text(layers)
    (tmp_path / "voc" / "block.py").write_text(textwrap.dedent("""
        import torch.nn as nn
        from torch.nn.utils.parametrize import remove_parametrizations

        from .layers import SConv1d


        class WN(nn.Module):
            def __init__(self):
                super().__init__()
                self.cond_layer = SConv1d(2, 8, 1, norm="none")

            def remove_weight_norm(self):
                remove_parametrizations(self.cond_layer, "weight")
        """).lstrip())
    result = lint_files(sorted(tmp_path.rglob("*.py")), RunOptions())
    assert [f for f in result.findings if f.code == "WN109"] == []
    (tmp_path / "voc" / "layers.py").write_text(layers.split("\n\n\ndef norm_all")[0] + "\n")
    result = lint_files(sorted(tmp_path.rglob("*.py")), RunOptions())
    assert [(Path(f.path).name, f.line) for f in result.findings if f.code == "WN109"] == [("block.py", 13)]


def test_a_wrapper_holding_a_list_whose_elements_are_not_shown_is_not_said_to_hold_none():
    """``nn.ModuleList(make_convs())``: the elements may hold norms, so "no norm anywhere" would not be known."""
    source = examples.MODERN_IMPORTS + textwrap.dedent("""

        def make_convs(channels):
            return [weight_norm(nn.Conv1d(channels, channels, 3)) for _ in range(2)]


        class Wrap(nn.Module):
            def __init__(self):
                super().__init__()
                self.convs = nn.ModuleList(make_convs(4))


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.wrap = Wrap()

            def remove_weight_norm(self):
                remove_parametrizations(self.wrap, "weight")
        """)
    assert _wn109(source) == []
    assert len(_wn109(source.replace("nn.ModuleList(make_convs(4))", "nn.ModuleList([nn.Conv1d(4, 4, 3)])"))) == 1


def test_a_norm_the_constructor_flag_never_applies_is_reported_at_the_removal():
    (message,) = _wn109(examples.never_applied("use_weight_norm=False"))
    assert message.startswith("`self.conv_post` holds no norm for the Generator built at line")
    assert "with use_weight_norm=False: its constructor builds it as Conv1d without one" in message


def test_a_flag_the_code_does_not_decide_is_silent():
    source = examples.never_applied("use_weight_norm=flag").replace("def __init__(self):\n        super().__init__()\n        self.generator",
                                                                    "def __init__(self, flag=False):\n        super().__init__()\n        self.generator")
    assert _wn109(source) == []
