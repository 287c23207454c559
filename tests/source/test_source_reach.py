"""Issue 16, deliverable 5: the idioms of real vocoder code the source rules must reach."""

from __future__ import annotations

import warnings

import pytest
import torch

from wnaudit.source import fix_source, lint_source

HIFIGAN_DISCRIMINATORS = '''\
import torch.nn as nn
from torch.nn import Conv1d
from torch.nn.utils import remove_weight_norm, spectral_norm, weight_norm


class DiscriminatorS(nn.Module):
    def __init__(self, use_spectral_norm=False):
        super().__init__()
        norm_f = weight_norm if use_spectral_norm == False else spectral_norm
        self.convs = nn.ModuleList([
            norm_f(Conv1d(1, 4, 15, 1, padding=7)),
            norm_f(Conv1d(4, 4, 41, 4, groups=4, padding=20)),
        ])
        self.conv_post = norm_f(Conv1d(4, 1, 3, 1, padding=1))

    def remove_weight_norm(self):
        for layer in self.convs:
            remove_weight_norm(layer)
        remove_weight_norm(self.conv_post)


class DiscriminatorP(nn.Module):
    def __init__(self, use_spectral_norm=False):
        super().__init__()
        norm_f = spectral_norm if use_spectral_norm else weight_norm
        self.conv = norm_f(Conv1d(1, 4, 5))
'''


def _findings(source: str):
    return [(f.code, f.line) for f in lint_source(source, "discriminator.py")]


def test_flag_selected_legacy_weight_norm_is_reported_at_each_call_in_both_spellings():
    assert _findings(HIFIGAN_DISCRIMINATORS) == [("WN103", 11), ("WN103", 12), ("WN103", 14), ("WN103", 26)]


def test_flag_selected_message_names_the_binding():
    messages = {f.line: f.message for f in lint_source(HIFIGAN_DISCRIMINATORS, "discriminator.py")}
    assert "`norm_f`" in messages[11] and "(bound at line 9)" in messages[11]
    assert "(bound at line 25)" in messages[26]


def test_flag_selected_fix_rewrites_the_binding_and_migrates_the_removals():
    fixed, done = fix_source(HIFIGAN_DISCRIMINATORS, "discriminator.py")
    assert [f.code for f in done].count("WN103") == 4
    assert "norm_f = torch.nn.utils.parametrizations.weight_norm if use_spectral_norm == False else spectral_norm" in fixed
    assert "norm_f = spectral_norm if use_spectral_norm else torch.nn.utils.parametrizations.weight_norm" in fixed
    assert "remove_weight_norm(layer)" not in fixed and 'remove_parametrizations(layer, "weight")' in fixed
    assert lint_source(fixed, "discriminator.py") == []  # no WN107 blamed on the spectral-norm alternative
    namespace: dict = {"__name__": "fixed_discriminator"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the legacy hook warns; the fixed code must not
        exec(compile(fixed, "fixed_discriminator", "exec"), namespace)
        disc = namespace["DiscriminatorS"]()
    x = torch.randn(1, 1, 64)
    before = disc.conv_post(disc.convs[1](disc.convs[0](x)))
    disc.remove_weight_norm()
    assert not any(hasattr(m, "parametrizations") for m in disc.modules())
    torch.testing.assert_close(disc.conv_post(disc.convs[1](disc.convs[0](x))), before)
    # The spectral-norm alternative is untouched: still torch's legacy spectral norm hook.
    spectral = namespace["DiscriminatorP"](use_spectral_norm=True)
    assert hasattr(spectral.conv, "weight_orig") and not hasattr(spectral.conv, "parametrizations")


def test_flag_selected_callable_with_a_modern_or_rebound_alternative_is_not_reported_and_unknown_is_fixed_in_the_binding():
    unknown = (
        "import torch.nn as nn\nfrom torch.nn.utils import weight_norm\n\n"
        "def layer(flag, norm):\n    norm_f = weight_norm if flag else norm\n    return norm_f(nn.Conv1d(2, 2, 3))\n"
    )
    modern = (
        "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm\n"
        "from torch.nn.utils.parametrizations import weight_norm\n\n"
        "def layer(flag):\n    norm_f = spectral_norm if flag else weight_norm\n    return norm_f(nn.Conv1d(2, 2, 3))\n"
    )
    rebound = (
        "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm, weight_norm\n\n"
        "def layer(flag, other):\n    norm_f = weight_norm if flag else spectral_norm\n    if other:\n"
        "        norm_f = other\n    return norm_f(nn.Conv1d(2, 2, 3))\n"
    )
    for source in (modern, rebound):
        assert _findings(source) == [], source
    # A parameter as the other alternative: still the deprecated hook when the flag picks it, and the fix
    # rewrites the alternative, not the call (that would drop the parameter).
    assert _findings(unknown) == [("WN103", 6)]
    fixed, _ = fix_source(unknown, "layer.py")
    assert "norm_f = torch.nn.utils.parametrizations.weight_norm if flag else norm\n    return norm_f(nn.Conv1d" in fixed


def test_flag_selected_fix_keeps_the_spectral_norm_of_other_calls_legacy_in_the_post_fix_view():
    """The migration marks the call's weight norm modern, not its spectral-norm alternative."""
    source = HIFIGAN_DISCRIMINATORS + "\n\ndef strip(d):\n    nn.utils.remove_spectral_norm(d.conv)\n"
    fixed, done = fix_source(source, "discriminator.py")
    assert "    nn.utils.remove_spectral_norm(d.conv)\n" in fixed
    assert "WN102" not in [f.code for f in done]


MODERN_WEIGHT_NORM_BESIDE_LEGACY_SPECTRAL_NORM = '''\
import torch.nn as nn
from torch.nn.utils import spectral_norm
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(2, 2, 3))
        self.critic = spectral_norm(nn.Conv1d(2, 2, 3))

    def fold(self):
        remove_parametrizations(self.conv, "weight")
'''


def test_legacy_spectral_norm_on_another_module_is_not_blamed_for_a_modern_weight_norm_removal():
    """The removal folds the modern weight norm of ``self.conv``; the legacy spectral norm of ``self.critic`` is no reason."""
    assert _findings(MODERN_WEIGHT_NORM_BESIDE_LEGACY_SPECTRAL_NORM) == []
    namespace: dict = {"__name__": "generator"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(MODERN_WEIGHT_NORM_BESIDE_LEGACY_SPECTRAL_NORM, "generator", "exec"), namespace)
    generator = namespace["Generator"]()
    generator.fold()  # really folds: no ValueError
    assert not hasattr(generator.conv, "parametrizations")


def test_wn107_message_names_the_application_that_decided_it():
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.utils.weight_norm(nn.Conv1d(2, 2, 3))  # noqa: WN103\n\n"
        "    def fold(self):\n        torch.nn.utils.parametrize.remove_parametrizations(self.conv, 'weight')\n"
    )
    (finding,) = lint_source(source, "model.py")
    assert finding.code == "WN107"
    assert "weight norm is the legacy forward-pre-hook (applied at model.py:8 via `nn.utils.weight_norm`)" in finding.message


def test_wn101_message_names_the_application_in_the_imported_file(tmp_path):
    (tmp_path / "layers.py").write_text(
        "import torch.nn as nn\nfrom torch.nn.utils import parametrizations\n\n\n"
        "def block():\n    return parametrizations.weight_norm(nn.Conv1d(2, 2, 3))\n"
    )
    user = tmp_path / "decoder.py"
    user.write_text(
        "from torch.nn.utils import remove_weight_norm\nfrom layers import block\n\n\n"
        "def fold():\n    layer = block()\n    remove_weight_norm(layer)\n"
    )
    (finding,) = lint_source(user.read_text(), str(user))
    assert finding.code == "WN101"
    assert "(applied at layers.py:6 via `parametrizations.weight_norm`)" in finding.message


def _wrapper_source(remover_import: str, removal: str, child_norm: str = "weight_norm") -> str:
    return (
        "import torch.nn as nn\n"
        f"from torch.nn.utils.parametrizations import {child_norm}\n"
        f"{remover_import}\n\n\n"
        "class SConv(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.conv = {child_norm}(nn.Conv1d(4, 4, 3, padding=1))\n\n\n"
        "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.block = SConv()\n        self.plain = nn.Conv1d(4, 4, 3)\n\n"
        f"    def fold(self):\n        {removal}\n"
    )


MODERN_REMOVER = "from torch.nn.utils.parametrize import remove_parametrizations"
LEGACY_REMOVER = "from torch.nn.utils import remove_weight_norm"


def _run_fold(source: str) -> None:
    namespace: dict = {"__name__": "blocks"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "blocks", "exec"), namespace)
    namespace["Block"]().fold()


@pytest.mark.parametrize(
    "remover_import, removal",
    [(MODERN_REMOVER, "remove_parametrizations(self.block, 'weight')"), (LEGACY_REMOVER, "remove_weight_norm(self.block)")],
    ids=["modern", "legacy"],
)
def test_removal_from_a_wrapper_whose_child_holds_the_norm(remover_import, removal):
    source = _wrapper_source(remover_import, removal)
    with pytest.raises(ValueError):
        _run_fold(source)  # what torch does: the wrapper holds no norm
    found = lint_source(source, "blocks.py")
    assert [(f.code, f.line) for f in found if f.code == "WN109"] == [("WN109", 19)]
    (finding,) = [f for f in found if f.code == "WN109"]
    assert "`self.block` is a SConv (built at line 15)" in finding.message
    assert "child `.conv` (applied at blocks.py:9)" in finding.message and "`self.block.conv`" in finding.message
    fixed, done = fix_source(source, "blocks.py")
    assert "WN109" in [f.code for f in done]
    assert "(self.block.conv" in fixed
    assert "WN109" not in [f.code for f in lint_source(fixed, "blocks.py")]


def test_wrapper_fix_folds_under_torch():
    source = _wrapper_source(MODERN_REMOVER, "remove_parametrizations(self.block, 'weight')")
    fixed, _ = fix_source(source, "blocks.py")
    assert lint_source(fixed, "blocks.py") == []
    _run_fold(fixed)  # no ValueError: the child is folded


@pytest.mark.parametrize(
    "remover_import, removal",
    [(MODERN_REMOVER, "remove_parametrizations(self.plain, 'weight')"), (LEGACY_REMOVER, "remove_weight_norm(self.plain)")],
    ids=["modern", "legacy"],
)
def test_removal_from_an_attribute_built_without_any_norm(remover_import, removal):
    source = _wrapper_source(remover_import, removal)
    with pytest.raises(ValueError):
        _run_fold(source)
    found = [f for f in lint_source(source, "blocks.py") if f.code == "WN109"]
    assert [(f.code, f.line) for f in found] == [("WN109", 19)]
    assert "`self.plain` holds no norm: it is built as torch.nn.Conv1d at line 16 and never normed" in found[0].message
    fixed, done = fix_source(source, "blocks.py")
    assert "WN109" not in [f.code for f in done]  # no fix: delete the removal, or add the missing norm


def test_wrapper_in_another_file_is_followed(tmp_path):
    (tmp_path / "layers.py").write_text(
        "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
        "class SConv(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = weight_norm(nn.Conv1d(4, 4, 3))\n"
    )
    user = tmp_path / "model.py"
    user.write_text(
        "import torch.nn as nn\nfrom torch.nn.utils.parametrize import remove_parametrizations\nfrom layers import SConv\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = SConv()\n\n"
        "    def fold(self):\n        remove_parametrizations(self.block, 'weight')\n"
    )
    found = [f for f in lint_source(user.read_text(), str(user)) if f.code == "WN109"]
    assert len(found) == 1 and "(applied at layers.py:8)" in found[0].message


@pytest.mark.parametrize(
    "change",
    [
        ("        self.plain = nn.Conv1d(4, 4, 3)\n", "        self.plain = nn.Conv1d(4, 4, 3)\n        weight_norm(self.plain)\n"),
        ("        self.plain = nn.Conv1d(4, 4, 3)\n", "        self.plain = nn.Conv1d(4, 4, 3)\n        self.plain = weight_norm(self.plain)\n"),
        ("        self.plain = nn.Conv1d(4, 4, 3)\n", "        self.plain = nn.Conv1d(4, 4, 3)\n        init_norms(self.plain)\n"),
        ("        self.plain = nn.Conv1d(4, 4, 3)\n", "        self.plain = nn.Conv1d(4, 4, 3)\n        self.apply(init_norms)\n"),
        ("        self.plain = nn.Conv1d(4, 4, 3)\n", "        self.plain = nn.Conv1d(4, 4, 3)\n        init_norms(self)\n"),
        ("class Block(nn.Module):", "class Block(Base):"),
        ("    def fold(self):", "    def fold(self):\n        pass\n\n\nclass Sub(Block):\n    def fold(self):"),
        ("        remove_parametrizations(self.plain, 'weight')", "        try:\n            remove_parametrizations(self.plain, 'weight')\n        except ValueError:\n            pass"),
    ],
    ids=["in-place", "re-assigned", "handed", "self.apply", "self-handed", "project-base", "subclassed", "guarded"],
)
def test_no_wn109_where_the_construction_does_not_tell(change):
    source = _wrapper_source(MODERN_REMOVER, "remove_parametrizations(self.plain, 'weight')")
    assert "WN109" in [f.code for f in lint_source(source, "blocks.py")]
    changed = source.replace(*change)
    assert changed != source
    assert "WN109" not in [f.code for f in lint_source(changed, "blocks.py")]


def test_wn109_page_example_raises_under_torch_and_its_fix_folds():
    from wnaudit.report.rule_pages import page_sections

    blocks = {name: text.split("```python\n", 1)[1].split("```", 1)[0] for name, text in page_sections("WN109").items()
              if name in ("Example", "Use instead")}
    with warnings.catch_warnings(), pytest.raises(ValueError):
        warnings.simplefilter("ignore")
        exec(compile(blocks["Example"], "WN109-example", "exec"), {"__name__": "page_example"})
    fixed, done = fix_source(blocks["Example"], "example.py")
    assert [f.code for f in done] == ["WN109"] and fixed == blocks["Use instead"]
