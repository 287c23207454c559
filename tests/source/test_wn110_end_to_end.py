"""Issue 35: WN110 tried end to end on a small vocoder project, as a new user would.

The project: a HiFi-GAN-style generator with the modern weight norm and a
legacy ``remove_weight_norm()`` method, a ``load_model()`` that builds, loads
and calls ``.eval()``, a YAML-configured loader (hyperpyyaml ``!new:``), and a
checkpoint-making script.  ``All checks passed!`` after ``--fix --unsafe-fixes``
must mean that every loader, imported and called, serves no live weight norm
(counted with ``wnaudit.audit_module`` on the real modules) with its output
unchanged; where a loader stays live, the lint still reports it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MODEL = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm


class ResBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.convs = nn.ModuleList(
            [weight_norm(nn.Conv1d(channels, channels, 3, padding=d, dilation=d)) for d in (1, 3)]
        )

    def forward(self, x):
        for conv in self.convs:
            x = x + conv(F.leaky_relu(x, 0.1))
        return x

    def remove_weight_norm(self):
        for conv in self.convs:
            torch.nn.utils.remove_weight_norm(conv)


class Generator(nn.Module):
    def __init__(self, mels=8, channels=16):
        super().__init__()
        self.conv_pre = weight_norm(nn.Conv1d(mels, channels, 7, padding=3))
        self.ups = nn.ModuleList([weight_norm(nn.ConvTranspose1d(channels, channels // 2, 4, stride=2, padding=1))])
        self.resblocks = nn.ModuleList([ResBlock(channels // 2)])
        self.conv_post = weight_norm(nn.Conv1d(channels // 2, 1, 7, padding=3))

    def forward(self, mel):
        x = self.conv_pre(mel)
        for up, block in zip(self.ups, self.resblocks):
            x = block(up(F.leaky_relu(x, 0.1)))
        return torch.tanh(self.conv_post(F.leaky_relu(x)))

    def remove_weight_norm(self):
        torch.nn.utils.remove_weight_norm(self.conv_pre)
        for up in self.ups:
            torch.nn.utils.remove_weight_norm(up)
        for block in self.resblocks:
            block.remove_weight_norm()
        torch.nn.utils.remove_weight_norm(self.conv_post)
"""
SERVE = """
import torch

from .model import Generator


def load_model(path):
    model = Generator()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    return model
"""
FROM_YAML = """
import torch
from hyperpyyaml import load_hyperpyyaml


def load_from_hyperpyyaml(hparams_path, path):
    with open(hparams_path) as stream:
        hparams = load_hyperpyyaml(stream)
    generator = hparams["generator"]
    generator.load_state_dict(torch.load(path, weights_only=True))
    generator.eval()
    return generator
"""
HPARAMS = """
generator: !new:vocoder.model.Generator
    mels: 8
    channels: 16
"""
#: Makes the checkpoints: scales the fresh weights under ``no_grad`` and saves them.  Not a serving path.
MAKE_CHECKPOINTS = """
import sys

import torch

from vocoder.model import Generator


def main(path):
    torch.manual_seed(0)
    model = Generator()
    model.eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    torch.save(model.state_dict(), path)


if __name__ == "__main__":
    main(sys.argv[1])
"""
#: hyperpyyaml's ``!new:`` (build the named class with the mapping as keywords), for the run-time check only:
#: the package is not a test dependency.  It sits outside the project, so the lint never reads it.
HYPERPYYAML = """
import importlib

import yaml


def _new(loader, suffix, node):
    module, _, name = suffix.rpartition(".")
    return getattr(importlib.import_module(module), name)(**loader.construct_mapping(node, deep=True))


def load_hyperpyyaml(stream):
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_multi_constructor("!new:", _new)
    return yaml.load(stream, Loader=loader)
"""
#: Imports each loader, calls it, and prints, per loader, the live norms ``audit_module`` counts and whether the
#: output equals that of the unfolded model holding the same checkpoint.
CHECK = """
import torch
import wnaudit
from vocoder.model import Generator
from vocoder.serve import load_model
from vocoder.from_yaml import load_from_hyperpyyaml

reference = Generator()
reference.load_state_dict(torch.load("g.pt", weights_only=True))
reference.eval()
mel = torch.randn(1, 8, 12)
with torch.no_grad():
    expected = reference(mel)
for name, model in (("load_model", load_model("g.pt")), ("yaml", load_from_hyperpyyaml("vocoder/hparams.yaml", "g.pt"))):
    with torch.no_grad():
        same = torch.allclose(model(mel), expected, atol=1e-6)
    print(name, len(wnaudit.audit_module(model)), same)
"""


def _project(root: Path, pyproject: str = "") -> Path:
    files = {
        "vocoder/__init__.py": "", "vocoder/model.py": MODEL, "vocoder/serve.py": SERVE,
        "vocoder/from_yaml.py": FROM_YAML, "vocoder/hparams.yaml": HPARAMS, "scripts/make_checkpoints.py": MAKE_CHECKPOINTS,
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'vocoder'\n" + pyproject)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())
    return root


def _wnaudit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-m", "wnaudit", "--no-cache", *args, "."], cwd=root, capture_output=True, text=True,
        timeout=300, env=env,
    )


def _findings(root: Path, *args: str) -> list[dict[str, object]]:
    done = _wnaudit(root, "--select", "WN110", "--format", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["findings"]  # type: ignore[no-any-return]


def _sites(root: Path) -> set[str]:
    """The inference sites WN110's findings name (``vocoder/serve.py:9``)."""
    return {str(f["message"]).split("stays live at `")[1].split("`")[0] for f in _findings(root)}


def _run(root: Path, code: str, site: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(site), *(p for p in sys.path if p)])}
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "hyperpyyaml.py").write_text(textwrap.dedent(HYPERPYYAML).lstrip())
    return folder


def test_every_loader_is_named_and_the_checkpoint_script_never(tmp_path: Path):
    """Both loaders are inference sites; the script that saves checkpoints is none (issue 35, items 2 and 3)."""
    root = _project(tmp_path / "voc")
    assert _sites(root) == {"vocoder/serve.py:9", "vocoder/from_yaml.py:10"}


def test_an_excluded_file_is_never_the_inference_site(tmp_path: Path):
    """``extend-exclude``: an excluded script is not named, and the loaders still get their fix (item 2)."""
    root = _project(tmp_path / "voc", '[tool.wnaudit]\nextend-exclude = ["scripts"]\n')
    (root / "scripts" / "make_checkpoints.py").write_text(
        textwrap.dedent(MAKE_CHECKPOINTS).lstrip().replace("    torch.save(model.state_dict(), path)\n", "    return model\n")
    )
    assert _sites(root) == {"vocoder/serve.py:9", "vocoder/from_yaml.py:10"}
    assert all(f["fixable"] for f in _findings(root, "--unsafe-fixes"))  # each has its fix


def test_a_fold_in_one_loader_leaves_the_other_reported(tmp_path: Path):
    """Two loaders, one folded by hand: the other still serves every norm live, so it is still reported (item 3)."""
    root = _project(tmp_path / "voc")
    serve = root / "vocoder" / "serve.py"
    serve.write_text("import wnaudit\n" + serve.read_text().replace("    model.eval()\n", "    model.eval()\n    wnaudit.fold_weight_norm(model)\n"))
    assert _sites(root) == {"vocoder/from_yaml.py:10"}


def test_a_legacy_removal_of_the_modern_spelling_is_no_fold(tmp_path: Path):
    """``remove_weight_norm()`` with the legacy remover raises on the modern spelling; caught, it folds nothing (item 4)
    and the fix adds no fold beside it (item 6: a second removal would raise): the finding says so."""
    root = _project(tmp_path / "voc")
    (root / "vocoder" / "from_yaml.py").unlink()
    serve = root / "vocoder" / "serve.py"
    serve.write_text(serve.read_text().replace(
        "    model.eval()\n", "    model.eval()\n    try:\n        model.remove_weight_norm()\n    except ValueError:\n        pass\n",
    ))
    found = _findings(root, "--unsafe-fixes")
    assert found and all("stays live at `vocoder/serve.py:9`" in str(f["message"]) for f in found)
    assert not any(f["fixable"] for f in found)  # no fix: `model.remove_weight_norm()` already runs there
    assert "`model.remove_weight_norm()` already runs there" in str(found[0]["message"])


def test_all_checks_passed_after_the_fix_means_every_loader_serves_folded(tmp_path: Path, site: Path):
    """lint -> ``--fix --unsafe-fixes`` -> clean re-lint, and then each loader, imported and called, serves zero live
    weight norms with its output unchanged (item 7)."""
    root = _project(tmp_path / "voc")
    before = _wnaudit(root)
    assert before.returncode == 1 and "WN110" in before.stdout
    fixed = _wnaudit(root, "--fix", "--unsafe-fixes")
    assert fixed.returncode in (0, 1), fixed.stderr
    script = (root / "scripts" / "make_checkpoints.py").read_text()
    assert script == textwrap.dedent(MAKE_CHECKPOINTS).lstrip()  # the fold never goes into the checkpoint script
    after = _wnaudit(root)
    assert after.returncode == 0 and "All checks passed!" in after.stdout, after.stdout
    _run(root, "import runpy, sys; sys.argv = ['make', 'g.pt']; runpy.run_path('scripts/make_checkpoints.py', run_name='__main__')", site)
    assert _run(root, CHECK, site).split("\n")[:2] == ["load_model 0 True", "yaml 0 True"]


APP = """
from .serve import load_model


def load_vocoder(path):
    vocoder = load_model(path)
    return vocoder
"""


def test_a_declared_entry_is_checked_and_takes_the_fold(tmp_path: Path, site: Path):
    """``serving = ["vocoder.app:load_vocoder"]``: the model it returns unfolded is reported there, the fix folds it
    before the return (not in the loader it calls), and inferred sites elsewhere are still reported (item 1)."""
    root = _project(tmp_path / "voc", '[tool.wnaudit]\nserving = ["vocoder.app:load_vocoder"]\n')
    (root / "vocoder" / "app.py").write_text(textwrap.dedent(APP).lstrip())
    assert _sites(root) == {"vocoder/app.py:6", "vocoder/from_yaml.py:10"}
    _wnaudit(root, "--fix", "--unsafe-fixes")
    assert "    _fold_weight_norm_for_inference(vocoder)\n    return vocoder\n" in (root / "vocoder" / "app.py").read_text()
    assert "_fold" not in (root / "vocoder" / "serve.py").read_text()
    assert "All checks passed!" in _wnaudit(root).stdout
    _run(root, "import runpy, sys; sys.argv = ['make', 'g.pt']; runpy.run_path('scripts/make_checkpoints.py', run_name='__main__')", site)
    assert _run(root, "import wnaudit\nfrom vocoder.app import load_vocoder\nprint(len(wnaudit.audit_module(load_vocoder('g.pt'))))", site) == "0\n"


def test_a_declared_entry_the_project_does_not_define_is_a_config_error(tmp_path: Path):
    """One line per entry naming pyproject.toml and the problem, exit 2; the lint still runs (and imports nothing)."""
    root = _project(tmp_path / "voc", '[tool.wnaudit]\nserving = ["vocoder.serve:load_vocoder", "nowhere:load"]\n')
    done = _wnaudit(root, "--select", "WN110")
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if "pyproject.toml" in line]
    assert len(errors) == 2
    assert "vocoder.serve defines no function 'load_vocoder'" in errors[0] and "no module 'nowhere'" in errors[1]
    assert "WN110" in done.stdout


@pytest.mark.parametrize("loop", [
    "    for name, child in model.named_children():\n        if name != \"conv_post\":\n            wnaudit.fold_weight_norm(child)\n",
    "    for name, child in model.named_children():\n        if name == \"conv_post\":\n            continue\n        wnaudit.fold_weight_norm(child)\n",
], ids=["guarded", "continue"])
def test_a_loop_that_skips_some_parts_is_a_partial_fold(tmp_path: Path, loop: str):
    """The CosyVoice3 shape: every child folded but one, which nothing folds later: reported, with what it leaves
    (item 4)."""
    root = _project(tmp_path / "voc")
    (root / "vocoder" / "from_yaml.py").unlink()
    serve = root / "vocoder" / "serve.py"
    serve.write_text("import wnaudit\n" + serve.read_text().replace("    model.eval()\n", "    model.eval()\n" + loop))
    found = _findings(root)
    assert found and all("stays live at `vocoder/serve.py:10`" in str(f["message"]) for f in found)
    assert "runs only where `" in str(found[0]["message"]) and "the other parts stay live" in str(found[0]["message"])


#: A weight-normed part of the synthesizer (the flow and the decoder are two of them).
_PART = """

class {name}(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

    def forward(self, x):
        return self.conv(x)

"""
SYNTH = (
    "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
    + _PART.format(name="Flow") + _PART.format(name="Decoder") + """
class Synthesizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.flow = Flow()
        self.dec = Decoder()

    def forward(self, x):
        return self.dec(self.flow(x))
"""
)
SYNTH_SERVE = """
import torch
import wnaudit

from .synth import Synthesizer


def load(path):
    model = Synthesizer()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    wnaudit.fold_weight_norm(model.dec)
    return model
"""


def test_a_fold_of_one_part_leaves_the_siblings_the_forward_runs_reported(tmp_path: Path):
    """``fold(model.dec)`` folds the decoder; the flow the served forward also runs stays live (item 4)."""
    root = tmp_path / "voc"
    (root / "voc").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (root / "voc" / "__init__.py").write_text("")
    (root / "voc" / "synth.py").write_text(textwrap.dedent(SYNTH).lstrip())
    (root / "voc" / "serve.py").write_text(textwrap.dedent(SYNTH_SERVE).lstrip())
    found = _findings(root)
    assert [(f["path"], f["line"]) for f in found] == [("voc/synth.py", 9)]  # Flow's weight norm
    assert "nothing folds `Flow`" in str(found[0]["message"])
