"""The project model (issue 22): the questions it answers, and WN109 and WN110 answering from it alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.context import Context
from wnaudit.source.holdings import Held, built_value
from wnaudit.source.pipeline.link import new_workspace
from wnaudit.source.project_model import ProjectModel

from source_helpers import write_package

_LAYERS = (
    "import torch.nn as nn\n"
    "from torch.nn.utils.parametrizations import weight_norm\n"
    "from torch.nn.utils.parametrize import remove_parametrizations\n\n\n"
    'def apply_norm(module, norm="none"):\n'
    '    if norm == "weight_norm":\n'
    "        return weight_norm(module)\n"
    "    return module\n\n\n"
    "class NormConv(nn.Module):\n"
    '    def __init__(self, norm="none"):\n'
    "        super().__init__()\n"
    "        self.conv = apply_norm(nn.Conv1d(2, 2, 3), norm)\n\n\n"
    "class Wrapper(nn.Module):\n"
    '    def __init__(self, norm="none"):\n'
    "        super().__init__()\n"
    "        self.inner = NormConv(norm=norm)\n\n\n"
    "class Vocoder(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.pre = weight_norm(nn.Conv1d(2, 2, 3))\n"
    '        self.block = Wrapper(norm="weight_norm")\n\n'
    "    def forward(self, x):\n"
    "        return self.block.inner.conv(self.pre(x))\n\n"
    "    def remove_weight_norm(self):\n"
    '        remove_parametrizations(self.pre, "weight")\n'
    '        remove_parametrizations(self.block, "weight")\n\n\n'
    "class Plain(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.pre = weight_norm(nn.Conv1d(2, 2, 3))\n\n"
    "    def remove_weight_norm(self):\n"
    '        remove_parametrizations(self.pre, "weight")\n'
)
_SERVE = (
    "import torch\n"
    "from .layers import Vocoder\n\n\n"
    "def load(path):\n"
    "    model = Vocoder()\n"
    "    model.load_state_dict(torch.load(path))\n"
    "    model.eval()\n"
    "    return model\n"
)
_PRE_LINE = _LAYERS.splitlines().index("        self.pre = weight_norm(nn.Conv1d(2, 2, 3))") + 1
_EVAL_LINE = _SERVE.splitlines().index("    model.eval()") + 1


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_package(tmp_path, "pkg", {"layers.py": _LAYERS, "serve.py": _SERVE})


def _model() -> ProjectModel:
    return Context([], workspace=new_workspace()).model()


def test_what_sits_at_an_attribute_built_with_constants(project: Path):
    model = _model()
    layers = str(project / "layers.py")
    summary = model.summary_at(layers)
    assert summary is not None
    held = model.value(summary, built_value(summary.plain_classes["pkg.layers.Vocoder"]["block"]))
    assert isinstance(held, Held) and held.state == "instance"
    assert held.cls == (layers, "pkg.layers.Wrapper") and held.env == {"norm": "'weight_norm'"}
    paths, undecided = model.norms_inside(held)
    assert [(path, norm.via) for path, norm in paths] == [(("inner", "conv"), ("apply_norm",))]
    assert not undecided


def test_what_a_removal_method_does_to_self(project: Path):
    model = _model()
    layers = project / "layers.py"
    assert model.folds_all((layers, "pkg.layers.Plain"), "remove_weight_norm")
    # Vocoder's method removes from the wrapper, not from where the wrapper's norm sits.
    assert model.folds_all((layers, "pkg.layers.Vocoder"), "remove_weight_norm")  # its own application only
    assert not model.folds_all((layers, "pkg.layers.Plain"), "forward")


def test_who_serves_an_application_unfolded(project: Path):
    verdict = _model().verdict(project / "layers.py", "pkg.layers.Vocoder", _PRE_LINE)
    assert verdict is not None
    assert (Path(verdict.file).name, verdict.line, verdict.kind) == ("serve.py", _EVAL_LINE, "mode")
    assert verdict.uncalled == "Vocoder.remove_weight_norm()"
    # It builds a project class whose norm the method does not reach: the fix may not call that method.
    assert verdict.method == ""


def _codes(project: Path) -> list[tuple[str, int]]:
    found = lint_files([project / "layers.py", project / "serve.py"], RunOptions(cache=False))
    return sorted((f.code, f.line) for f in found.findings if f.code in ("WN109", "WN110"))


def test_wn110_answers_from_the_model(project: Path, monkeypatch: pytest.MonkeyPatch):
    assert ("WN110", _PRE_LINE) in _codes(project)
    monkeypatch.setattr(ProjectModel, "verdict", lambda self, file, unit, line: None)
    assert [c for c in _codes(project) if c[0] == "WN110"] == []


def test_wn109_answers_from_the_model(project: Path, monkeypatch: pytest.MonkeyPatch):
    removal = _LAYERS.splitlines().index('        remove_parametrizations(self.block, "weight")') + 1
    assert ("WN109", removal) in _codes(project)
    monkeypatch.setattr(ProjectModel, "norms_inside", lambda self, held: ([], True))
    assert [c for c in _codes(project) if c[0] == "WN109"] == []


def test_one_model_per_run_shared_by_both_rules(project: Path, monkeypatch: pytest.MonkeyPatch):
    built: list[ProjectModel] = []
    original = ProjectModel.__init__

    def counting(self: ProjectModel, *args) -> None:  # type: ignore[no-untyped-def]
        built.append(self)
        original(self, *args)

    monkeypatch.setattr(ProjectModel, "__init__", counting)
    assert {code for code, _ in _codes(project)} == {"WN109", "WN110"}
    assert len(built) == 1


_HELPERS = (
    "from torch.nn.utils.parametrize import remove_parametrizations\n\n\n"
    "def strip(model):\n"
    "    for m in model.modules():\n"
    "        try:\n"
    '            remove_parametrizations(m, "weight")\n'
    "        except ValueError:\n"
    "            pass\n\n\n"
    "def prepare(net):\n"
    "    net.eval()\n"
    "    strip(net)\n\n\n"
    "def ping(net):\n"
    "    return pong(net)\n\n\n"
    "def pong(net):\n"
    "    return ping(net)\n"
)
_GAN = (
    "import torch.nn as nn\n"
    "from .layers import Plain, Vocoder\n\n\n"
    "class Trainer(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.generator = Vocoder()\n"
    "        self.discriminator = Plain()\n\n"
    "    def forward(self, x):\n"
    "        return self.generator(x)\n\n"
    "    def train_step(self, x):\n"
    "        return self.discriminator(self.generator(x))\n"
)


def test_what_a_function_does_to_the_model_it_is_given(project: Path):
    (project / "helpers.py").write_text(_HELPERS)
    model = _model()
    helpers = project / "helpers.py"
    assert model.folds_argument((helpers, "pkg.helpers.strip"), 0)
    assert model.folds_argument((helpers, "pkg.helpers.prepare"), 0)  # through ``strip``
    assert not model.folds_argument((helpers, "pkg.helpers.ping"), 0)  # a cycle with no fold folds nothing


def test_what_an_inference_entry_executes(project: Path):
    (project / "gan.py").write_text(_GAN)
    model = _model()
    trainer = (project / "gan.py", "pkg.gan.Trainer")
    assert model.executed(trainer, ("()",)) == {"generator"}
    assert model.executed(trainer, ("train_step()",)) == {"discriminator", "generator"}
    assert model.executed(trainer, ("unknown_method()",)) is None


def test_no_rule_walks_code_or_reads_the_project_itself():
    """Rules read their file's facts and ask the model: none parses (``ast``) or reaches the serving index,
    the workspace or the file system on its own."""
    import ast
    from importlib.util import resolve_name

    rules = Path(__file__).resolve().parents[2] / "wnaudit" / "source" / "rules"
    forbidden = {"ast", "os", "serving", "workspace", "project", "reading", "resolve"}
    for path in sorted(rules.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):  # every spelling: ``from ..x import y``, ``from .. import x``
                base = resolve_name("." * node.level + (node.module or ""), "wnaudit.source.rules") if node.level else node.module or ""
                modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            # a top-level module (``import os``), or a module of the source package (``wnaudit.source.serving``)
            names = {m.split(".")[0] for m in modules} | {m.split(".")[2] for m in modules if m.startswith("wnaudit.source.")}
            assert not names & forbidden, f"{path.name} imports {sorted(names & forbidden)}"
