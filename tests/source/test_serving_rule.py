"""WN110 across files: the class that applies weight norm, the code that serves it, the fold on the way."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from source_helpers import GENERATOR
from tests.source.test_serving_in_workers import _parsed_by_the_index
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files, lint_source

MODEL = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class ResBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(weight_norm(nn.Conv1d(4, 4, 3, padding=1)) for _ in range(2))

    def forward(self, x):
        for conv in self.convs:
            x = x + conv(x)
        return x

    def remove_weight_norm(self):
        for conv in self.convs:
            remove_parametrizations(conv, "weight")


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Conv1d(80, 4, 7, padding=3)
        self.blocks = nn.ModuleList(ResBlock() for _ in range(2))

    def forward(self, mel):
        x = self.pre(mel)
        for block in self.blocks:
            x = block(x)
        return x

    def remove_weight_norm(self):
        for block in self.blocks:
            block.remove_weight_norm()
"""

SERVE_UNFOLDED = """
import torch

from .model import Generator


def load():
    model = Generator()
    model.eval()
    model.load_state_dict(torch.load("vocoder.pt", weights_only=True))
    return model


def synthesize(mel):
    model = load()
    with torch.inference_mode():
        return model(mel)
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def _files(paths: list[Path]) -> list[Path]:
    """The source files under ``paths``, as the CLI's walk finds them."""
    return [f for p in paths for f in (sorted(p.rglob("*.py")) if p.is_dir() else [p])]


def _wn110(paths: list[Path]) -> list[tuple[str, int, str]]:
    result = lint_files(_files(paths), RunOptions())
    assert result.errors == []
    return [(Path(f.path).name, f.line, f.message) for f in result.findings if f.code == "WN110"]


@pytest.fixture
def voc(tmp_path: Path) -> Path:
    return _project(tmp_path, {"voc/__init__.py": "", "voc/model.py": MODEL, "voc/serve.py": SERVE_UNFOLDED})


def test_never_called_removal_in_a_contained_block_is_reported_at_the_application(voc: Path):
    """The seed's bug: the removal methods exist, nothing on the serving path calls them."""
    found = _wn110([voc / "voc" / "model.py"])
    assert [(name, line) for name, line, _ in found] == [("model.py", 9)]
    message = found[0][2]
    assert "`voc/serve.py:8` (`model.eval()`)" in message
    assert "`ResBlock.remove_weight_norm()` exists but nothing calls it" in message or (
        "`Generator.remove_weight_norm()` exists but nothing calls it" in message
    )
    assert message.endswith("fold once after loading with a local fold, `_fold_weight_norm_for_inference(model)` (torch only)")


def test_the_model_file_alone_gives_the_whole_tree_answer(voc: Path):
    """pre-commit passes only the staged model file: the serving code is read from the project anyway."""
    model = voc / "voc" / "model.py"
    alone = _wn110([model])
    assert alone == _wn110([voc])
    assert alone == [
        (Path(f.path).name, f.line, f.message) for f in lint_source(model.read_text(), str(model)) if f.code == "WN110"
    ]
    assert _wn110([voc / "voc" / "serve.py"]) == []  # findings only for the files asked about


def test_a_removal_method_the_serving_path_calls_is_a_fold(voc: Path):
    (voc / "voc" / "serve.py").write_text(SERVE_UNFOLDED.replace("    model.eval()\n", "    model.remove_weight_norm()\n    model.eval()\n"))
    assert _wn110([voc / "voc" / "model.py"]) == []


def test_a_removal_method_called_on_every_submodule_is_a_fold(voc: Path):
    """``for m in model.modules(): m.remove_weight_norm()``: the receiver is no known model, the call still folds."""
    (voc / "voc" / "serve.py").write_text(SERVE_UNFOLDED.replace(
        "    model.eval()\n",
        "    for module in model.modules():\n        if hasattr(module, 'remove_weight_norm'):\n"
        "            module.remove_weight_norm()\n    model.eval()\n",
    ))
    assert _wn110([voc / "voc" / "model.py"]) == []


def test_a_fold_in_another_module_reached_through_imports(voc: Path):
    (voc / "voc" / "utils.py").write_text("import wnaudit\n\n\ndef prepare(model):\n    wnaudit.fold_weight_norm(model)\n    return model\n")
    (voc / "voc" / "serve.py").write_text(
        SERVE_UNFOLDED.replace("from .model import Generator\n", "from .model import Generator\nfrom .utils import prepare\n")
        .replace("    model.eval()\n", "    prepare(model)\n    model.eval()\n")
    )
    assert _wn110([voc / "voc" / "model.py"]) == []


def test_model_apply_of_a_remover_is_a_fold(voc: Path):
    (voc / "voc" / "serve.py").write_text(
        "import torch\nfrom torch.nn.utils.parametrize import remove_parametrizations\n\nfrom .model import Generator\n\n\n"
        "def fold(module):\n    if hasattr(module, 'parametrizations'):\n        remove_parametrizations(module, 'weight')\n\n\n"
        "def load():\n    model = Generator()\n    model.apply(fold)\n    return model.eval()\n"
    )
    assert _wn110([voc / "voc" / "model.py"]) == []


def test_training_only_use_is_not_reported(voc: Path):
    (voc / "voc" / "serve.py").unlink()
    (voc / "train.py").write_text(
        "import torch\n\nfrom voc.model import Generator\n\n\n"
        "def main(batches):\n    model = Generator()\n    optimizer = torch.optim.Adam(model.parameters())\n"
        "    for mel, audio in batches:\n        loss = (model(mel) - audio).pow(2).mean()\n"
        "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
        "    model.eval()  # validation\n"
    )
    assert _wn110([voc / "voc" / "model.py"]) == []


@pytest.mark.parametrize("where", ["tests/test_model.py", "test_model.py", "voc/model_test.py", "conftest.py"])
def test_tests_are_not_a_serving_path(voc: Path, where: str):
    (voc / "voc" / "serve.py").unlink()
    (voc / where).parent.mkdir(exist_ok=True)
    (voc / where).write_text(
        "import torch\n\nfrom voc.model import Generator\n\n\ndef test_runs():\n    model = Generator().eval()\n"
        "    with torch.no_grad():\n        model(torch.randn(1, 80, 8))\n"
    )
    assert _wn110([voc / "voc" / "model.py"]) == []
    assert _wn110([voc / "voc" / "model.py", voc / where]) == []  # named on the command line too


def test_from_pretrained_eval_in_a_base_class_of_another_module(tmp_path: Path):
    root = _project(tmp_path, {
        "lib/__init__.py": "",
        "lib/base.py": """
            import torch
            import torch.nn as nn


            class PretrainedModel(nn.Module):
                @classmethod
                def from_pretrained(cls, path):
                    model = cls()
                    model.load_state_dict(torch.load(path, weights_only=True))
                    model.eval()
                    return model
            """,
        "lib/codec.py": """
            import torch.nn as nn
            from torch.nn.utils import parametrizations

            from .base import PretrainedModel


            def WNConv1d(*args, **kwargs):
                return parametrizations.weight_norm(nn.Conv1d(*args, **kwargs))


            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = WNConv1d(1, 4, 7)


            class CodecModel(PretrainedModel):
                def __init__(self):
                    super().__init__()
                    self.encoder = Encoder()
            """,
    })
    found = _wn110([root / "lib" / "codec.py"])
    assert [(name, line) for name, line, _ in found] == [("codec.py", 8)]  # the helper's application, once
    assert "`lib/base.py:10` (`model.eval()` in `PretrainedModel.from_pretrained()`)" in found[0][2]


def test_a_loader_function_in_another_file_links_the_serving_code(tmp_path: Path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/model.py": MODEL,
        "pkg/loading.py": "from .model import Generator\n\n\ndef load_generator():\n    return Generator()\n",
        "serve.py": "import torch\n\nfrom pkg.loading import load_generator\n\nvocoder = load_generator()\nvocoder = torch.compile(vocoder)\n",
    })
    found = _wn110([root / "pkg" / "model.py"])
    assert len(found) == 1 and "`serve.py:6` (`torch.compile(vocoder)`)" in found[0][2]


def test_parametrize_cached_around_inference_is_a_fold(voc: Path):
    (voc / "voc" / "serve.py").write_text(
        "import torch\nfrom torch.nn.utils import parametrize\n\nfrom .model import Generator\n\n\n"
        "def synthesize(mel):\n    model = Generator().eval()\n    with parametrize.cached():\n        return model(mel)\n"
    )
    assert _wn110([voc / "voc" / "model.py"]) == []


def test_spectral_norm_is_not_this_rule(tmp_path: Path):
    root = _project(tmp_path, {
        "d.py": "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import spectral_norm\n\n\n"
        "class D(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = spectral_norm(nn.Conv1d(1, 1, 3))\n\n\nd = D().eval()\n",
    })
    assert _wn110([root / "d.py"]) == []


def test_same_named_modules_of_another_project_do_not_count(tmp_path: Path):
    """An unrelated project's ``voc/serve.py`` (with its own ``Generator``) never serves this one's."""
    mine = _project(tmp_path / "mine", {"voc/__init__.py": "", "voc/model.py": MODEL})
    _project(tmp_path / "other", {
        "voc/__init__.py": "", "voc/model.py": MODEL, "voc/serve.py": SERVE_UNFOLDED,
    })
    assert _wn110([mine / "voc" / "model.py"]) == []
    theirs = _wn110([tmp_path / "other"])
    assert [(name, line) for name, line, _ in theirs] == [("model.py", 9)]
    assert _wn110([mine / "voc" / "model.py", tmp_path / "other"]) == theirs  # mine still silent beside it


def test_cross_file_fix_folds_in_the_serving_file_and_the_model_then_serves(voc: Path):
    """--fix --unsafe-fixes on the package: the fold goes into serve.py; lint is clean; the model runs folded."""
    result = lint_files(_files([voc / "voc"]), RunOptions(fix=True, unsafe_fixes=True))
    assert [f.code for f in result.fixed] == ["WN110"]
    serve = (voc / "voc" / "serve.py").read_text()
    assert "wnaudit" not in serve.replace("(added by wnaudit --fix)", "")  # the project does not use wnaudit: no dependency
    assert serve.count("def _fold_weight_norm_for_inference(model):") == 1
    load_then_fold = '    model.load_state_dict(torch.load("vocoder.pt", weights_only=True))\n    _fold_weight_norm_for_inference(model)\n'
    assert "    model.eval()\n" + load_then_fold + "    return model\n" in serve  # after the weights are in
    assert _wn110([voc]) == []
    saved = "import torch\nfrom voc.model import Generator\ntorch.save(Generator().state_dict(), 'vocoder.pt')\n"
    done = subprocess.run([sys.executable, "-c", saved], cwd=voc, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr  # the unfixed model's checkpoint, which the fixed code must still load
    script = (
        "import torch\nfrom voc.serve import load, synthesize\n"
        "m = load()\nassert not any(hasattr(x, 'parametrizations') for x in m.modules())\n"
        "assert type(m.blocks[0].convs[0].weight) is torch.nn.Parameter\n"
        "print(tuple(synthesize(torch.randn(1, 80, 8)).shape))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=voc, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 4, 8)"


def test_without_unsafe_fixes_nothing_is_written(voc: Path):
    before = (voc / "voc" / "serve.py").read_text()
    result = lint_files(_files([voc / "voc"]), RunOptions(fix=True))
    assert result.fixed == [] and (voc / "voc" / "serve.py").read_text() == before
    assert [f.code for f in result.findings] == ["WN110"]


APPLY_ON_DEMAND = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class Codec(nn.Module):
    def __init__(self, normed=False):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 7)
        if normed:
            self.apply_weight_norm()

    def apply_weight_norm(self):
        self.conv = weight_norm(self.conv)

    @classmethod
    def from_pretrained(cls, path):
        model = cls()
        return model.eval()
"""


def test_weight_norm_in_a_method_construction_never_runs_is_not_reported(tmp_path: Path):
    """transformers' ``apply_weight_norm()``: the model as built and served holds no weight norm from it."""
    root = _project(tmp_path, {"codec.py": APPLY_ON_DEMAND.replace("        if normed:\n            self.apply_weight_norm()\n", "")})
    assert _wn110([root / "codec.py"]) == []


def test_weight_norm_in_a_method_the_constructor_calls_is_reported(tmp_path: Path):
    root = _project(tmp_path, {"codec.py": APPLY_ON_DEMAND})
    found = _wn110([root / "codec.py"])
    assert [(name, line) for name, line, _ in found] == [("codec.py", 13)]
    assert "`model.eval()` in `Codec.from_pretrained()`" in found[0][2]


def test_a_model_that_freezes_itself_in_its_constructor_is_served(tmp_path: Path):
    """speechbrain's BEATs: ``self.eval()`` in ``__init__`` (a frozen feature extractor)."""
    root = _project(tmp_path, {"beats.py": """
        import torch.nn as nn
        from torch.nn.utils import weight_norm


        class Beats(nn.Module):
            def __init__(self, freeze=True):
                super().__init__()
                self.pos = weight_norm(nn.Conv1d(8, 8, 3), dim=2)  # noqa: WN103
                if freeze:
                    self.eval()
        """})
    found = _wn110([root / "beats.py"])
    assert len(found) == 1 and "(`self.eval()` in `Beats.__init__()`)" in found[0][2]


def test_calling_another_models_removal_method_does_not_fold_this_one(tmp_path: Path):
    """piper: ``model.dec.remove_weight_norm()`` folds the decoder, not the flow's WaveNet with a method of that name."""
    root = _project(tmp_path, {
        "net/__init__.py": "",
        "net/modules.py": MODEL.replace("class Generator", "class Decoder") + """

class WaveNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

    def remove_weight_norm(self):
        remove_parametrizations(self.conv, "weight")


class Synth(nn.Module):
    def __init__(self):
        super().__init__()
        self.dec = Decoder()
        self.flow = WaveNet()
""",
        "infer.py": "from net.modules import Synth\n\n\ndef load():\n    model = Synth()\n    model.dec.remove_weight_norm()\n"
        "    model.eval()\n    return model\n",
    })
    found = _wn110([root / "net" / "modules.py"])
    assert [line for _, line, _ in found] == [41]  # the WaveNet's conv, not the decoder's blocks
    assert "`WaveNet.remove_weight_norm()` exists but nothing calls it" in found[0][2]


def test_the_summary_cache_keeps_serving_facts_and_changes_no_answer(voc: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    files = _files([voc / "voc"])
    cold = lint_files(files, RunOptions(cache=False)).findings
    first = lint_files(files, RunOptions()).findings
    parsed = _parsed_by_the_index(monkeypatch)
    warm = lint_files(files, RunOptions()).findings
    assert cold == first == warm and [f.code for f in warm] == ["WN110"]
    assert parsed == []  # every file's serving facts came from the cache


def test_a_deeply_nested_serving_file_is_still_read(voc: Path):
    """Nesting CPython parses (thousands of unary operators) is walked as the analysis walks it, not skipped."""
    serve = voc / "voc" / "serve.py"
    serve.write_text(serve.read_text() + "\nDEPTH = " + "-" * 3000 + "1\n")
    assert [(name, line) for name, line, _ in _wn110([voc / "voc" / "model.py"])] == [("model.py", 9)]


def test_a_project_file_too_big_to_lint_is_not_read_for_the_serving_path(voc: Path, monkeypatch):
    from wnaudit.source.serving import walk

    monkeypatch.setattr(walk, "DEFAULT_MAX_SOURCE_BYTES", 100)  # serve.py is bigger than that
    assert _wn110([voc / "voc" / "model.py"]) == []



def test_a_subclass_found_while_preparing_is_resolved_whatever_else_is_linted(tmp_path: Path):
    """The invariance property's example: ``C3(C1)`` is met as a carrier of ``C1`` before it is known to be one.

    The instances of ``C3()`` were decided while ``C3`` was not yet a carrier
    name and kept: linted alone, ``m1.py`` missed the fold of a ``C3`` in
    ``m3.py`` and reported a WN110 the whole package does not.
    """
    from tests.source.test_source_invariance import _write_tree

    files = _write_tree(tmp_path, [
        ("choice", 0, "legacy", 0, False, "fold", 0, False),
        ("choice", 0, "legacy", 0, False, "fold", 0, False),
        ("choice", 0, "legacy", 0, False, "method", 1, False),
        ("choice", 1, "legacy", 0, False, "fold", -1, False),
    ])
    def wn110(paths: list[Path]) -> list[tuple[str, int]]:  # no kept answers: each run decides afresh
        found = lint_files(_files(paths), RunOptions(cache=False)).findings
        return [(Path(f.path).name, f.line) for f in found if f.code == "WN110" and Path(f.path).name == "m1.py"]

    assert wn110([files[1]]) == wn110([files[0].parent])


def test_files_bigger_than_a_parse_piece_keep_their_line_numbers(tmp_path: Path):
    """Serving facts are read piece by piece: lines after the first piece still name the right line."""
    padding = "".join(f"def pad{i}(x):\n    return x + {i}\n\n\n" for i in range(1200))  # well past one piece
    model = padding + (
        "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
        "class Generator(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = weight_norm(nn.Conv1d(80, 1, 7))\n"
    )
    serve = "from .model import Generator\n\n\n" + padding + "def load():\n    model = Generator()\n    return model.eval()\n"
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/model.py": model, "voc/serve.py": serve})
    applied = model.splitlines().index("        self.conv = weight_norm(nn.Conv1d(80, 1, 7))") + 1
    evaluated = serve.splitlines().index("    return model.eval()") + 1
    found = _wn110([root / "voc" / "model.py"])
    assert [(name, line) for name, line, _ in found] == [("model.py", applied)]
    assert f"`voc/serve.py:{evaluated}` (`model.eval()`)" in found[0][2]


def test_the_serving_walk_lets_each_statement_go_before_the_facts_are_linked(monkeypatch):
    """The walker keeps decorators, ``with`` contexts and bases, never the definitions and blocks holding them.

    A kept ``def``, ``class`` or ``with`` would keep its whole body, and so the
    file's tree, alive until the facts are linked (63 bytes of memory per
    source byte on a 4.8 MB model file, against 43).
    """
    import ast
    import gc
    import weakref

    from wnaudit.source.serving import linker, reader

    source = textwrap.dedent(
        """
        import torch
        from torch.nn.utils import weight_norm


        class Block(torch.nn.Module):
            @staticmethod
            def build():
                with torch.no_grad():
                    return weight_norm(torch.nn.Conv1d(2, 2, 3))


        @torch.inference_mode()
        def serve():
            model = Block()
            with torch.inference_mode():
                for _ in range(2):
                    model(1)
        """
    )
    statements: list[weakref.ref] = []

    def pieces():
        tree = ast.parse(source)
        statements.extend(weakref.ref(node) for node in ast.walk(tree) if isinstance(node, ast.stmt))
        yield 0, tree

    alive: list[str] = []
    link = linker.Linker.run

    def checked_link(self):
        gc.collect()
        alive.extend(type(node).__name__ for node in (ref() for ref in statements) if node is not None)
        return link(self)

    monkeypatch.setattr(linker.Linker, "run", checked_link)
    found = reader.serving_facts(pieces(), "pkg.model", False)
    assert len(statements) > 8
    assert alive == []
    assert found.classes["pkg.model.Block"].bases == ("torch.nn.Module",)
    assert [use.what for use in found.inference] == ["`model(...)` under `torch.inference_mode()`"]


# -- issue 22: folds through helpers (a), call chains (b), parts an inference entry never runs (c) ------------

HELPERS = """
from torch.nn.utils.parametrize import remove_parametrizations
from torch.nn.utils.weight_norm import WeightNorm


def remove_weight_norm_recursively(model):
    for m in model.modules():
        try:
            remove_parametrizations(m, "weight")
        except ValueError:
            pass


def remove_weight_norm_if_exists(module, name="weight"):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module


def fold(net):
    _fold_again(net, 2)


def _fold_again(net, times):
    if times:
        fold(net)  # a cycle in the call graph: no fold of its own
    remove_weight_norm_recursively(net)
"""


@pytest.mark.parametrize("fold", [
    "    remove_weight_norm_recursively(model)\n",
    "    for m in model.modules():\n        remove_weight_norm_if_exists(m)\n",
    "    for _, m in model.named_modules():\n        remove_weight_norm_if_exists(m)\n",
    "    fold(model)\n",
    "    model.apply(remove_weight_norm_if_exists)\n",
    "    remove_weight_norm_recursively(model=model)\n",
    "    for i, m in enumerate(list(model.modules())):\n        remove_weight_norm_if_exists(m)\n",
])
def test_a_fold_through_a_project_helper_in_another_module_folds(voc: Path, fold: str):
    """Shape a: the helper's summary says it folds the parameter the model is handed as, through loops and cycles."""
    (voc / "voc" / "utils.py").write_text(HELPERS)
    (voc / "voc" / "serve.py").write_text(
        "from .utils import fold, remove_weight_norm_if_exists, remove_weight_norm_recursively\n"
        + SERVE_UNFOLDED.replace("    model.eval()\n", "    model.eval()\n" + fold)
    )
    assert _wn110([voc / "voc" / "model.py"]) == []


def test_a_helper_that_folds_something_else_is_no_fold(voc: Path):
    """The helper folds its first parameter; the model is its second."""
    (voc / "voc" / "utils.py").write_text(HELPERS + "\n\ndef log_and_fold(other, model):\n    fold(other)\n")
    (voc / "voc" / "serve.py").write_text(
        "from .utils import log_and_fold\n"
        + SERVE_UNFOLDED.replace("    model.eval()\n", "    model.eval()\n    log_and_fold(None, model)\n")
    )
    assert [(name, line) for name, line, _ in _wn110([voc / "voc" / "model.py"])] == [("model.py", 9)]


GAN = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(80, 1, 7, padding=3))

    def forward(self, mel):
        return self.conv(mel)

    def remove_weight_norm(self):
        remove_parametrizations(self.conv, "weight")


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(1, 1, 3, padding=1))

    def forward(self, audio):
        return self.conv(audio)


class GanModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.model_g = Generator()
        self.model_d = Discriminator()

    def forward(self, mel):
        return self.model_g(mel)

    def training_step(self, mel, audio):
        return self.model_d(self(mel)) - self.model_d(audio)
"""

INFER = """
import torch

from .gan import GanModule


def main(path, mel):
    model = GanModule()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    model.model_g.remove_weight_norm()
    with torch.no_grad():
        return model(mel)
"""


def test_discriminators_the_inference_entry_never_runs_are_not_served(tmp_path: Path):
    """Shape c: contained in the eval()'d module, but ``forward`` reads only ``model_g``."""
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/gan.py": GAN, "voc/infer.py": INFER})
    assert _wn110([root / "voc" / "gan.py"]) == []


def test_discriminators_the_inference_entry_runs_are_served(tmp_path: Path):
    """Shape c's other side: a ``forward`` that runs the discriminator executes its weight norm."""
    gan = GAN.replace("        return self.model_g(mel)\n", "        return self.model_d(self.model_g(mel))\n", 1)
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/gan.py": gan, "voc/infer.py": INFER})
    found = _wn110([root / "voc" / "gan.py"])
    assert [(name, line) for name, line, _ in found] == [("gan.py", 21)]
    assert "`voc/infer.py:9` (`model.eval()`)" in found[0][2]


def test_a_model_handed_away_counts_whole(tmp_path: Path):
    """Where the code does not show what runs (the model is returned), everything it holds is served."""
    infer = INFER.replace("    with torch.no_grad():\n        return model(mel)\n", "    return model\n")
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/gan.py": GAN, "voc/infer.py": infer})
    assert [(name, line) for name, line, _ in _wn110([root / "voc" / "gan.py"])] == [("gan.py", 21)]


CHAIN = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class AMPBlock1(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

    def forward(self, x):
        return self.conv(x)

    def remove_weight_norm(self):
        remove_parametrizations(self.conv, "weight")


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = AMPBlock1()

    def forward(self, x):
        return self.block(x)

    def remove_weight_norm(self):
        self.block.remove_weight_norm()


class Other(nn.Module):
    def remove_weight_norm(self):
        pass
"""


def test_a_removal_chain_the_loader_calls_folds(tmp_path: Path):
    """Shape b: ``model.remove_weight_norm()`` calls the block's; every block is folded."""
    serve = "from .model import Model\n\n\ndef load():\n    model = Model()\n    model.remove_weight_norm()\n    return model.eval()\n"
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/model.py": CHAIN, "voc/serve.py": serve})
    assert _wn110([root / "voc" / "model.py"]) == []


def test_a_removal_chain_nothing_calls_is_reported_with_why(tmp_path: Path):
    """Shape b: the block's removal is called only from ``Model.remove_weight_norm()``; another class's method
    of the same name being called credits nothing."""
    serve = (
        "from .model import Model, Other\n\n\ndef load():\n    model = Model()\n    return model.eval()\n\n\n"
        "def other():\n    Other().remove_weight_norm()\n"
    )
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/model.py": CHAIN, "voc/serve.py": serve})
    found = _wn110([root / "voc" / "model.py"])
    assert [(name, line) for name, line, _ in found] == [("model.py", 9)]
    assert "`Model.remove_weight_norm()` calls `.remove_weight_norm()` on it, but nothing calls `Model.remove_weight_norm()`" in found[0][2]


@pytest.mark.parametrize("call", ["inference(model=enhancer, mel=mel)", "inference(enhancer, mel)"])
def test_an_inference_function_that_folds_the_model_it_is_given_folds(voc: Path, call: str):
    """Shape a one step up: the fold sits in a function that receives the loaded model as a parameter."""
    (voc / "voc" / "utils.py").write_text(HELPERS)
    (voc / "voc" / "serve.py").write_text(
        "from .model import Generator\nfrom .utils import remove_weight_norm_recursively\n\n\n"
        "def load_enhancer():\n    enhancer = Generator()\n    enhancer.eval()\n    return enhancer\n\n\n"
        "def inference(model, mel):\n    remove_weight_norm_recursively(model)\n    return model(mel)\n\n\n"
        f"def enhance(mel):\n    enhancer = load_enhancer()\n    return {call}\n"
    )
    assert _wn110([voc / "voc" / "model.py"]) == []


EVAL_OVERRIDE = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class UnivNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

    def forward(self, x):
        return self.conv(x)

    def eval(self, inference=False):
        super().eval()
        if inference:  # not while validating in the training loop
            self.remove_weight_norm()
        return self

    def remove_weight_norm(self):
        remove_parametrizations(self.conv, "weight")
"""


@pytest.mark.parametrize("call, expected", [("vocoder.eval()", [("model.py", 9)]), ("vocoder.eval(inference=True)", [])])
def test_an_eval_override_folds_only_when_its_flag_is_passed(tmp_path: Path, call: str, expected: list):
    """Shape b: ``eval(inference=False)`` folds only under its flag; a plain ``eval()`` leaves the norm live."""
    serve = f"from .model import UnivNet\n\n\ndef load():\n    vocoder = UnivNet()\n    {call}\n    return vocoder\n"
    root = _project(tmp_path, {"voc/__init__.py": "", "voc/model.py": EVAL_OVERRIDE, "voc/serve.py": serve})
    found = _wn110([root / "voc" / "model.py"])
    assert [(name, line) for name, line, _ in found] == expected
    for _, _, message in found:
        assert "`UnivNet.eval()` calls `.remove_weight_norm()` only under `if inference:`, and no call passes `inference=True`" in message


# -- a module's own ``__main__`` smoke test (issue 22, "other") ---------------------------------------------
SMOKE_MODEL = """
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(80, 1, 7, padding=3))

    def forward(self, mel):
        return self.conv(mel)


def main():
    model = Vocoder().to("cpu")
    model.eval()
    with torch.no_grad():
        print(model(torch.randn(1, 80, 10)).shape)


if __name__ == "__main__":
    main()
"""


def test_a_modules_own_main_smoke_test_is_not_an_inference_path(tmp_path: Path):
    root = _project(tmp_path / "voc", {"voc/__init__.py": "", "voc/model.py": SMOKE_MODEL})
    assert _wn110([root]) == []


def test_code_directly_in_the_main_block_of_the_models_module_is_a_smoke_test(tmp_path: Path):
    model = SMOKE_MODEL.replace("def main():\n", "def unused():\n    pass\n\n\nif __name__ == \"__main__\":\n")
    model = model[: model.rindex("\n\nif __name__")] + "\n"
    assert "def main" not in model and model.count("__main__") == 1
    root = _project(tmp_path / "voc", {"voc/__init__.py": "", "voc/model.py": model})
    assert _wn110([root]) == []


def test_a_script_evaluating_an_imported_model_under_main_is_an_inference_path(tmp_path: Path):
    script = """
    import torch

    from voc.model import Vocoder

    if __name__ == "__main__":
        model = Vocoder()
        model.eval()
        with torch.no_grad():
            print(model(torch.randn(1, 80, 10)).shape)
    """
    root = _project(tmp_path / "voc", {"voc/__init__.py": "", "voc/model.py": SMOKE_MODEL, "infer.py": script})
    assert [(name, line) for name, line, _ in _wn110([root])] == [("model.py", 9)]


def test_a_smoke_function_another_module_imports_is_an_inference_path(tmp_path: Path):
    cli = """
    from voc.model import main

    main()
    """
    root = _project(tmp_path / "voc", {"voc/__init__.py": "", "voc/model.py": SMOKE_MODEL, "voc/cli.py": cli})
    assert [(name, line) for name, line, _ in _wn110([root])] == [("model.py", 9)]


def test_a_fold_only_in_training_code_does_not_count_and_the_message_names_it():
    """Issue 22, messages: a candidate fold that does not count says why ("runs only in `fit()`, which trains")."""
    from wnaudit.source.rules.never_folded import NeverFoldedWeightNorm

    source = next(e.source for e in NeverFoldedWeightNorm.INVALID if "def fit(batches)" in e.source)
    [finding] = [f for f in lint_source(source, "train_and_serve.py") if f.code == "WN110"]
    assert "`torch.nn.utils.parametrize.remove_parametrizations(model.conv, 'weight')` runs only in `fit()`, which trains" in finding.message
    assert "folds the training copy, not the model served" in finding.message


def test_a_helper_given_the_model_in_training_code_is_named_only_when_it_folds():
    """A training function handing the model to a project function that folds nothing is no candidate fold."""
    source = "import torch\n" + GENERATOR + textwrap.dedent('''


        def describe(model):
            return sum(p.numel() for p in model.parameters())


        def fit(batches):
            model = Generator()
            optimizer = torch.optim.AdamW(model.parameters())
            for mel, audio in batches:
                (model(mel) - audio).abs().mean().backward()
                optimizer.step()
            describe(model)


        def serve(path):
            model = Generator()
            model.load_state_dict(torch.load(path, weights_only=True))
            model.eval()
            return model
        ''')
    [finding] = [f for f in lint_source(source, "fit_and_serve.py") if f.code == "WN110"]
    assert "describe" not in finding.message and "which trains" not in finding.message
    assert "nothing folds `Generator` on the way" in finding.message


def test_a_site_in_the_projects_code_is_named_before_an_inherited_library_loader():
    """``PreTrainedModel``'s ``from_pretrained`` evaluates the model, but the package's own inference site is named."""
    source = textwrap.dedent('''
        import torch
        import torch.nn as nn
        from torch.nn.utils.parametrizations import weight_norm
        from transformers import PreTrainedModel


        class Codec(PreTrainedModel):
            def __init__(self, config):
                super().__init__(config)
                self.conv = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

            def forward(self, x):
                return self.conv(x)


        def decode(model, codes):
            with torch.no_grad():
                return model(codes)


        def load(config, path):
            model = Codec(config)
            model.load_state_dict(torch.load(path, weights_only=True))
            model.eval()
            return model
        ''')
    [finding] = [f for f in lint_source(source, "codec.py") if f.code == "WN110"]
    assert "`model.eval()`" in finding.message and "inherited" not in finding.message
