"""WN110's fold comes after the weights are in: the fixed server loads the original checkpoint strictly, same outputs.

A fold renames the state-dict keys (``conv.parametrizations.weight.original0``
becomes ``conv.weight``), so one placed before the load breaks a strict load
and makes a ``strict=False`` load (chatterbox-tts) load nothing.  Each case
runs real modules: the checkpoint is saved from the unfixed model, the fixed
file is imported and must load it strictly and give the unfixed outputs bit for bit.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest
import torch

from wnaudit.common.config import load_config
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.rewrite.support import FOLD_HELPER

HEADER = (
    "import torch\nimport torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
    "class Generator(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.conv = weight_norm(nn.Conv1d(8, 2, 3, padding=1))\n\n"
    "    def forward(self, x):\n        return self.conv(x)\n\n\n"
)
SERVER_CALL = "\n    @torch.no_grad()\n    def __call__(self, mel):\n        return self.vocoder(mel)\n"

#: name -> (the serving code after the Generator class, how a test gets the served model from the module and a path).
CASES: dict[str, tuple[str, Callable[[ModuleType, str], torch.nn.Module]]] = {
    "init-eval-then-load": (
        "class Server:\n    def __init__(self, path):\n        self.vocoder = Generator()\n        self.vocoder.eval()\n"
        "        self.vocoder.load_state_dict(torch.load(path, weights_only=True))\n" + SERVER_CALL,
        lambda m, p: m.Server(p).vocoder,
    ),
    "function-eval-then-load": (
        "def load(path):\n    model = Generator()\n    model.eval()\n"
        "    model.load_state_dict(torch.load(path, weights_only=True))\n    return model\n",
        lambda m, p: m.load(p),
    ),
    "load-not-strict": (
        "def load(path):\n    model = Generator()\n    model.eval()\n"
        "    model.load_state_dict(torch.load(path, weights_only=True), strict=False)\n    return model\n",
        lambda m, p: m.load(p),
    ),
    "load-in-an-if": (
        "def load(path):\n    model = Generator()\n    model.eval()\n    if path:\n"
        "        model.load_state_dict(torch.load(path, weights_only=True))\n    n = 1\n    return model\n",
        lambda m, p: m.load(p),
    ),
    "loader-given-the-model": (
        "def load_checkpoint(module, path):\n    module.load_state_dict(torch.load(path, weights_only=True))\n\n\n"
        "def load(path):\n    model = Generator()\n    model.eval()\n    load_checkpoint(model, path)\n    return model\n",
        lambda m, p: m.load(p),
    ),
    "holder-loads-in-init": (
        "class Server(nn.Module):\n    def __init__(self, path):\n        super().__init__()\n        self.vocoder = Generator()\n"
        "        with open(path, \"rb\") as f:\n            self.load_state_dict({\n"
        "                \"vocoder.\" + k: v for k, v in torch.load(f, weights_only=True).items()\n            })\n"
        "        self.n = 1\n\n    @torch.no_grad()\n    def forward(self, mel):\n        return self.vocoder(mel)\n",
        lambda m, p: m.Server(p).vocoder,
    ),
    "eval-in-an-if-load-after-it": (
        "def load(path, serving=True):\n    model = Generator()\n    if serving:\n        model.eval()\n"
        "    model.load_state_dict(torch.load(path, weights_only=True))\n    return model\n",
        lambda m, p: m.load(p),
    ),
    "init-assigned-in-an-if-load-after-it": (
        "class Server:\n    def __init__(self, path, device=\"cpu\"):\n        if device:\n"
        "            self.vocoder = Generator().to(device)\n        else:\n            self.vocoder = Generator()\n"
        "        self.vocoder.load_state_dict(torch.load(path, weights_only=True))\n" + SERVER_CALL,
        lambda m, p: m.Server(p).vocoder,
    ),
    "two-loads-fold-after-the-last": (
        "def load(path):\n    model = Generator()\n    model.eval()\n"
        "    model.load_state_dict(torch.load(path, weights_only=True))\n    x = 1\n"
        "    model.load_state_dict(torch.load(path, weights_only=True))\n    return model\n",
        lambda m, p: m.load(p),
    ),
}
_names = itertools.count()


def _import(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"wn110_fold_point_{next(_names)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fix(root: Path) -> tuple[list[str], list[str]]:
    options = RunOptions(config=load_config([root / "serve.py"]), fix=True, unsafe_fixes=True)
    result = lint_files([root / "serve.py"], options)
    assert result.errors == []
    return [f.message for f in result.fixed if f.code == "WN110"], [f.code for f in result.findings]


def _project(root: Path, serving: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (root / "serve.py").write_text(HEADER + serving)
    return root


@pytest.mark.parametrize("case", list(CASES))
def test_the_fixed_model_loads_the_original_checkpoint_strictly_with_the_same_outputs(tmp_path: Path, case: str):
    serving, served = CASES[case]
    root = _project(tmp_path / "proj", serving)
    unfixed = _import(root / "serve.py")
    torch.manual_seed(0)
    checkpoint = tmp_path / "generator.pt"
    torch.save(unfixed.Generator().state_dict(), checkpoint)
    mel = torch.randn(1, 8, 11)
    reference = served(unfixed, str(checkpoint))
    with torch.no_grad():
        expected = reference(mel)

    messages, after = _fix(root)
    fixed_text = (root / "serve.py").read_text()
    assert messages and after == [] and f"{FOLD_HELPER}(" in fixed_text
    fixed = _import(root / "serve.py")
    torch.manual_seed(1)  # other random weights: only the load can give the expected outputs
    model = served(fixed, str(checkpoint))
    assert not torch.nn.utils.parametrize.is_parametrized(model.conv)
    with torch.no_grad():
        assert torch.equal(model(mel), expected)
    # the fold came after the load: the checkpoint was loaded strictly into the unfolded keys
    folded = fixed.Generator()
    folded.load_state_dict(torch.load(checkpoint, weights_only=True), strict=True)
    assert _fix(root) == ([], [])


LOADED_ELSEWHERE = (
    "class Server:\n    def __init__(self):\n        self.vocoder = Generator().to(\"cpu\")\n" + SERVER_CALL
    + "\n\ndef main(path, mel):\n    server = Server()\n    server.vocoder.load_state_dict(torch.load(path, weights_only=True))\n"
    "    return server(mel)\n"
)


@pytest.mark.parametrize(
    "serving",
    [LOADED_ELSEWHERE, LOADED_ELSEWHERE.replace("Generator().to(\"cpu\")", "Generator()")],
    ids=["moved", "bare"],
)
def test_a_model_init_builds_bare_and_loads_elsewhere_is_reported_with_no_fix(tmp_path: Path, serving: str):
    root = _project(tmp_path, serving)
    options = RunOptions(config=load_config([root / "serve.py"]))
    [finding] = [f for f in lint_files([root / "serve.py"], options).findings if f.code == "WN110"]
    assert not finding.fixable and finding.applicability is None
    assert "fold once after loading with" in finding.message and "no fix offered" in finding.message
    assert _fix(root) == ([], ["WN110"])
    assert (root / "serve.py").read_text() == HEADER + serving


@pytest.mark.parametrize(
    "value", ["Generator.from_pretrained(path)", "load_model(path)", "load_model(path).to(\"cpu\")"]
)
def test_an_init_assignment_that_may_load_keeps_the_fix(tmp_path: Path, value: str):
    serving = (
        "def load_model(path):\n    model = Generator()\n    model.load_state_dict(torch.load(path, weights_only=True))\n"
        "    return model\n\n\n"
        f"class Server:\n    def __init__(self, path):\n        self.vocoder = {value}\n" + SERVER_CALL
    )
    root = _project(tmp_path, serving)
    messages, after = _fix(root)
    assert messages and after == []
    assert f"        self.vocoder = {value}\n        {FOLD_HELPER}(self.vocoder)\n" in (root / "serve.py").read_text()


def test_a_serving_file_too_deep_for_the_parser_gives_no_fold_point_question_an_error():
    """The fold point is looked for in the serving file's text: one nested past the parser's limits is no crash,
    and no answer (None: this process could not tell; the fact store never keeps it on disk)."""
    from wnaudit.source.serving.fold_point import no_fold_point

    deep = b"class Server:\n    def __init__(self):\n        self.vocoder = " + b"-" * 200_000 + b"1\n"
    assert no_fold_point("serve.py", deep, 3, "self.vocoder") is None
    nested = b"class Server:\n    def __init__(self):\n        self.vocoder = Gen()\n        x = " + b"-" * 2_000 + b"1\n"
    assert no_fold_point("serve.py", nested, 3, "self.vocoder") != None  # as deep as the analysis parses: an answer


RETURNED_BARE = (
    "def build():\n    model = Generator()\n    model.eval()\n    return model\n\n\n"
    "def serve(path, mel):\n    model = build()\n    model.load_state_dict(torch.load(path, weights_only=True))\n"
    "    with torch.no_grad():\n        return model(mel)\n"
)


@pytest.mark.parametrize(
    "serving", [RETURNED_BARE, RETURNED_BARE.replace("    model.eval()\n    return model\n", "    return model.eval()\n")],
    ids=["eval-then-return", "return-eval"],
)
def test_a_builder_returning_the_model_bare_for_its_caller_to_load_is_reported_with_no_fix(tmp_path: Path, serving: str):
    """A fold in ``build()`` would come before ``serve()``'s load: the fixed code could not load its checkpoint."""
    root = _project(tmp_path, serving)
    options = RunOptions(config=load_config([root / "serve.py"]))
    [finding] = [f for f in lint_files([root / "serve.py"], options).findings if f.code == "WN110"]
    assert not finding.fixable
    assert "no fix offered: `build()` builds `model` without its weights and returns it for its caller to load" in finding.message
    assert _fix(root) == ([], ["WN110"])
    assert (root / "serve.py").read_text() == HEADER + serving


def test_a_builder_that_loads_before_returning_keeps_the_fix(tmp_path: Path):
    serving = RETURNED_BARE.replace("    model.eval()\n", "    model.load_state_dict(torch.load('g.pt', weights_only=True))\n    model.eval()\n")
    root = _project(tmp_path, serving)
    messages, after = _fix(root)
    assert messages and after == []
    assert f"    model.eval()\n    {FOLD_HELPER}(model)\n    return model\n" in (root / "serve.py").read_text()
