"""WN110's fix adds no dependency: the model's own removal method, wnaudit's fold where the project uses it, else a local fold.

The local fold is checked by running it: on real modules of both spellings, in
every grad mode, it leaves what ``wnaudit.fold_weight_norm`` leaves, bit for bit.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

import wnaudit
from wnaudit.common.config import ConfigError, load_config
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.rewrite.support import FOLD_HELPER, fold_source
from wnaudit.source.rules.base import LOCAL_FOLD_TEXT

HEADER = "import torch\nimport torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"


def _local_fold() -> Callable[[Any], Any]:
    namespace: dict[str, Any] = {"torch": torch}
    exec(compile(fold_source(), "local fold", "exec"), namespace)  # noqa: S102 - the text the fix writes
    return namespace[FOLD_HELPER]


def test_the_rule_examples_state_the_text_the_fix_writes():
    assert fold_source() == LOCAL_FOLD_TEXT


def _model(legacy: bool, frozen: bool) -> nn.Module:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        wn = torch.nn.utils.weight_norm if legacy else weight_norm
        model = nn.Sequential(
            wn(nn.Conv1d(4, 6, 3, padding=1)),
            wn(nn.ConvTranspose1d(6, 4, 4, stride=2, padding=1), dim=1),
            spectral_norm(nn.Conv1d(4, 4, 1)),
        )
    return model.requires_grad_(not frozen).eval()


MODES = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("frozen", [False, True], ids=["trainable", "frozen"])
@pytest.mark.parametrize("legacy", [False, True], ids=["modern", "legacy"])
def test_local_fold_equals_wnaudit_fold_bit_for_bit(legacy: bool, frozen: bool, mode: str):
    ours, theirs = _model(legacy, frozen), _model(legacy, frozen)
    x = torch.randn(2, 4, 9)
    with torch.no_grad():
        before = ours(x)
    with MODES[mode]():
        _local_fold()(ours)
        wnaudit.fold_weight_norm(theirs)
    with torch.no_grad():
        after, reference = ours(x), theirs(x)
    assert torch.equal(before, after) and torch.equal(after, reference)
    for mine, other in zip(ours[:2], theirs[:2]):
        assert not torch.nn.utils.parametrize.is_parametrized(mine)
        assert not any(type(h).__name__ == "WeightNorm" for h in mine._forward_pre_hooks.values())
        assert type(mine.weight) is nn.Parameter and not mine.weight.is_inference()
        assert mine.weight.requires_grad is other.weight.requires_grad is (not frozen)
        assert torch.equal(mine.weight, other.weight)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert torch.nn.utils.parametrize.is_parametrized(ours[2], "weight")  # spectral norm is left alone
    assert _local_fold()(ours) is ours and list(ours.state_dict()) == list(theirs.state_dict())  # a second fold: nothing


def test_local_fold_leaves_weight_norm_stacked_with_another_parametrization():
    conv = weight_norm(nn.Conv1d(2, 2, 3))
    torch.nn.utils.parametrize.register_parametrization(conv, "weight", nn.Identity())
    _local_fold()(conv)
    assert len(conv.parametrizations.weight) == 2


def _project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip() if name.endswith(".toml") else text)
    if not (root / "pyproject.toml").exists():
        (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    return root


def _fix(root: Path, *files: str) -> tuple[list[str], list[str]]:
    """--fix --unsafe-fixes on ``files``: the messages of the WN110 findings fixed, and what lint finds after."""
    options = RunOptions(config=load_config([root / files[0]]), fix=True, unsafe_fixes=True)
    result = lint_files([root / f for f in files], options)
    assert result.errors == []
    return [f.message for f in result.fixed if f.code == "WN110"], [f.code for f in result.findings]


CONV = "        self.conv = weight_norm(nn.Conv1d(80, 1, 7, padding=3))\n"
SERVE = "\n\ndef serve(mel):\n    model = Generator()\n    model.eval()\n    with torch.inference_mode():\n        return model(mel)\n"


def _generator(init: str, removal: str, header: str = HEADER) -> str:
    return (
        header + "class Generator(nn.Module):\n    def __init__(self):\n        super().__init__()\n" + init
        + "\n    def forward(self, x):\n        return self.conv(x)\n\n    def remove_weight_norm(self):\n" + removal + SERVE
    )


REMOVE_CONV = "        torch.nn.utils.parametrize.remove_parametrizations(self.conv, \"weight\")\n"
METHOD_CASES = {
    "folds all": (_generator(CONV, REMOVE_CONV), True),
    "legacy applied, legacy remover": (
        _generator(CONV.replace("weight_norm(", "torch.nn.utils.weight_norm("), "        torch.nn.utils.remove_weight_norm(self.conv)\n"),
        True,
    ),
    "one of two layers": (
        _generator(CONV + "        self.post = weight_norm(nn.Conv1d(1, 1, 1))\n", REMOVE_CONV), False,
    ),
    "legacy remover on modern weight norm (WN101)": (
        _generator(CONV, "        torch.nn.utils.remove_weight_norm(self.conv)\n"), False,
    ),
    "failure swallowed": (
        _generator(CONV, "        try:\n    " + REMOVE_CONV + "        except ValueError:\n            pass\n"), False,
    ),
    "a method taking an argument": (
        _generator(CONV, REMOVE_CONV).replace("def remove_weight_norm(self):", "def remove_weight_norm(self, strict=True):"),
        False,
    ),
    "modern remover on legacy weight norm": (
        _generator(CONV.replace("weight_norm(", "torch.nn.utils.weight_norm("), REMOVE_CONV), False,
    ),
    "a layer built by a project function": (
        _generator(
            "        self.conv = make()\n", REMOVE_CONV,
            HEADER + "def make():\n    return weight_norm(nn.Conv1d(80, 1, 7, padding=3))\n\n\n",
        ),
        False,
    ),
    "a block of the project beside the layer": (
        _generator(
            CONV + "        self.block = Block()\n", REMOVE_CONV,
            HEADER + "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = weight_norm(nn.Conv1d(1, 1, 1))\n\n    def forward(self, x):\n        return self.conv(x)\n\n\n",
        ),
        False,
    ),
    "two layers on one line": (
        _generator(CONV.rstrip("\n") + "; self.post = weight_norm(nn.Conv1d(1, 1, 1))\n", REMOVE_CONV), False,
    ),
}


@pytest.mark.parametrize("case", list(METHOD_CASES))
def test_own_removal_method_only_where_it_folds_all_the_model_holds(tmp_path: Path, case: str):
    source, own = METHOD_CASES[case]
    root = _project(tmp_path, {"serve.py": source})
    messages, after = _fix(root, "serve.py")
    fixed = (root / "serve.py").read_text()
    assert messages and "WN110" not in after
    if own:
        assert all(m.endswith("fold once after loading with `model.remove_weight_norm()`") for m in messages)
        assert "    model.eval()\n    model.remove_weight_norm()\n" in fixed and FOLD_HELPER not in fixed
    else:
        assert all(m.endswith(f"a local fold, `{FOLD_HELPER}(model)` (torch only)") for m in messages)
        assert fixed.count(f"def {FOLD_HELPER}(model):") == 1 and "model.remove_weight_norm()\n" not in fixed


def test_local_fold_is_added_once_per_file_with_import_torch_and_a_second_fix_changes_nothing(tmp_path: Path):
    layer = "(nn.Module):\n    def __init__(self):\n        super().__init__()\n" + CONV + "\n    def forward(self, x):\n        return self.conv(x)\n"
    model = HEADER.replace("import torch\n", "") + "class A" + layer + "\n\nclass B" + layer
    serve = "\n\ndef one(x):\n    a = A()\n    a.eval()\n    return a(x)\n\n\ndef two(x):\n    b = B()\n    b.eval()\n    return b(x)\n"
    root = _project(tmp_path, {"serve.py": model + serve})
    messages, after = _fix(root, "serve.py")
    fixed = (root / "serve.py").read_text()
    assert messages and after == []
    assert fixed.startswith("import torch\nimport torch.nn as nn\n")
    assert fixed.count(f"def {FOLD_HELPER}(model):") == 1
    assert "    a.eval()\n    _fold_weight_norm_for_inference(a)\n" in fixed
    assert "    b.eval()\n    _fold_weight_norm_for_inference(b)\n" in fixed
    assert _fix(root, "serve.py") == ([], [])
    assert (root / "serve.py").read_text() == fixed


UNFOLDED = _generator(CONV, "        pass\n")


def test_a_later_fix_reuses_the_local_fold_the_file_has(tmp_path: Path):
    """Idempotent per file: a model added after an earlier fix gets a call, not a second definition."""
    root = _project(tmp_path, {"serve.py": UNFOLDED})
    _fix(root, "serve.py")
    fixed = (root / "serve.py").read_text()
    other = UNFOLDED[len(HEADER):].replace("Generator", "Other").replace("def serve(", "def serve_other(")
    later = fixed + "\n\n" + other
    (root / "serve.py").write_text(later)
    messages, after = _fix(root, "serve.py")
    again = (root / "serve.py").read_text()
    assert messages and after == []
    assert again.count(f"def {FOLD_HELPER}(model):") == 1 and again.count(f"    {FOLD_HELPER}(model)\n") == 2


@pytest.mark.parametrize(
    "files, fold",
    [
        ({}, "local"),
        ({"voc/check.py": "import wnaudit\n"}, "wnaudit"),
        ({"voc/check.py": "from wnaudit import assert_folded\n"}, "wnaudit"),
        ({"tests/test_model.py": "import wnaudit\n"}, "local"),  # a test-only use is no dependency of the code
        ({"voc/notes.py": "# wnaudit --fix\nNAME = 'wnaudit'\n"}, "local"),  # mentioned, not imported
        ({"pyproject.toml": "[tool.wnaudit]\nfix-fold = 'wnaudit'\n"}, "wnaudit"),
        ({"pyproject.toml": "[tool.wnaudit]\nfix-fold = 'local'\n", "voc/check.py": "import wnaudit\n"}, "local"),
        ({"pyproject.toml": "[tool.wnaudit]\nfix-fold = 'auto'\n", "voc/check.py": "import wnaudit\n"}, "wnaudit"),
    ],
    ids=["no-use", "imported", "from-import", "tests-only", "mentioned", "config-wnaudit", "config-local", "config-auto"],
)
def test_wnaudit_fold_only_where_the_project_uses_wnaudit_or_the_config_asks(tmp_path: Path, files: dict[str, str], fold: str):
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/serve.py": UNFOLDED, **files})
    messages, after = _fix(root, "voc/serve.py")
    fixed = (root / "voc" / "serve.py").read_text()
    assert messages and after == []
    if fold == "wnaudit":
        assert messages[0].endswith("fold once after loading with `wnaudit.fold_weight_norm(model)`")
        assert "import wnaudit\n" in fixed and "    wnaudit.fold_weight_norm(model)\n" in fixed and FOLD_HELPER not in fixed
    else:
        assert "import wnaudit" not in fixed and f"    {FOLD_HELPER}(model)\n" in fixed


@pytest.mark.parametrize("value", ["'pip'", "true", "['local']"])
def test_fix_fold_config_is_checked(tmp_path: Path, value: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.wnaudit]\nfix-fold = {value}\n")
    with pytest.raises(ConfigError, match=r"\[tool.wnaudit\] fix-fold: expected one of 'auto', 'wnaudit', 'local'"):
        load_config([tmp_path])


def test_a_kept_verdict_follows_a_file_that_starts_importing_wnaudit(tmp_path: Path):
    """WN110's verdicts are kept between runs: one that chose the local fold is not reused once the project uses wnaudit."""
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/serve.py": UNFOLDED, "voc/check.py": "import torch\n"})
    options = RunOptions(config=load_config([root / "voc" / "serve.py"]))
    [finding] = [f for f in lint_files([root / "voc" / "serve.py"], options).findings if f.code == "WN110"]
    assert finding.message.endswith(f"`{FOLD_HELPER}(model)` (torch only)")
    (root / "voc" / "check.py").write_text("import torch\nimport wnaudit\n")
    messages, after = _fix(root, "voc/serve.py")
    assert messages[0].endswith("`wnaudit.fold_weight_norm(model)`") and after == []


TWO_MODELS = HEADER.replace("import torch\n", "") + (
    "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.conv = nn.Conv1d(1, 4, 3, padding=1)\n\n    def forward(self, x):\n        return self.conv(x)\n\n\n"
    "class Vocoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.conv = weight_norm(nn.Conv1d(4, 1, 3, padding=1))\n\n    def forward(self, x):\n        return self.conv(x)\n"
)
#: chatterbox-tts's shape: a loader classmethod evaluates several models; only the second carries weight norm.
TWO_MODELS_LOADER = """import torch

from .models import Encoder, Vocoder


class TTS:
    def __init__(self, ve, voc):
        self.ve = ve
        self.voc = voc

    @classmethod
    def from_local(cls, device):
        ve = Encoder()
        ve.to(device).eval()
        voc = Vocoder()
        voc.to(device).eval()
        return cls(ve, voc)

    def generate(self, x):
        with torch.no_grad():
            return self.voc(self.ve(x))
"""
#: The same loader evaluating what it builds of both (``cls(ve, voc)``) after the first model alone.
WHOLE_MODEL_LOADER = """import torch
import torch.nn as nn

from .models import Encoder, Vocoder


class TTS(nn.Module):
    def __init__(self, ve, voc):
        super().__init__()
        self.ve = ve
        self.voc = voc

    @classmethod
    def from_local(cls, device):
        ve = Encoder()
        ve.eval()
        voc = Vocoder()
        model = cls(ve, voc)
        model.eval()
        return model

    def generate(self, x):
        with torch.no_grad():
            return self.voc(self.ve(x))
"""


@pytest.mark.parametrize(
    ("loader", "site", "folded"),
    [
        (TWO_MODELS_LOADER, "`voc/tts.py:16` (`voc.to(device).eval()`", "        voc.to(device).eval()\n        _fold_weight_norm_for_inference(voc.to(device))\n"),
        (WHOLE_MODEL_LOADER, "`voc/tts.py:19` (`model.eval()`", "        model.eval()\n        _fold_weight_norm_for_inference(model)\n"),
    ],
    ids=["carrier-evaluated-second", "built-model-evaluated-second"],
)
def test_a_loader_evaluating_several_models_is_fixed_where_the_carrier_is_evaluated(tmp_path: Path, loader: str, site: str, folded: str):
    """The finding names the served carrier's ``eval()``, not the loader's first one (``ve``'s), and its fold folds it."""
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/models.py": TWO_MODELS, "voc/tts.py": loader})
    options = RunOptions(config=load_config([root / "voc" / "models.py"]))
    [finding] = [f for f in lint_files([root / "voc" / "models.py"], options).findings if f.code == "WN110"]
    assert site in finding.message
    messages, after = _fix(root, "voc/models.py", "voc/tts.py")
    fixed = (root / "voc" / "tts.py").read_text()
    assert messages and after == []
    assert folded in fixed
    assert f"{FOLD_HELPER}(ve" not in fixed
