"""A notebook that loads a project's model and runs it is an inference path for WN110, and its fix goes into the cell."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.source.source_helpers import GENERATOR
from wnaudit.common.config import load_config
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

MODEL = GENERATOR

IMPORTS = ["%pip install torch\n", "import torch\n", "from voc.model import Generator\n"]
SERVE = ["model = Generator()\n", "model.eval()\n", "with torch.inference_mode():\n", "    audio = model(torch.randn(1, 80, 16))"]


def _cell(kind: str, source: list[str]) -> dict:
    cell = {"cell_type": kind, "metadata": {"tags": [kind]}, "source": source}
    if kind == "code":
        cell.update(execution_count=3, outputs=[{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}])
    return cell


def _project(root: Path, cells: list[dict], name: str = "listen.ipynb") -> Path:
    (root / "voc").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (root / "voc" / "__init__.py").write_text("")
    (root / "voc" / "model.py").write_text(MODEL)
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    (root / name).write_text(json.dumps(notebook, indent=1) + "\n")
    return root


def _run(root: Path, *names: str, fix: bool = False) -> tuple[list[str], list[str]]:
    """(messages of the WN110 findings reported, or fixed with ``fix``), and the codes left."""
    options = RunOptions(config=load_config([root / "voc" / "model.py"]), fix=fix, unsafe_fixes=fix)
    result = lint_files([root / n for n in names], options)
    assert result.errors == []
    found = result.fixed if fix else result.findings
    return [f.message for f in found if f.code == "WN110"], [f.code for f in result.findings]


@pytest.fixture
def served(tmp_path: Path) -> Path:
    return _project(tmp_path, [_cell("markdown", ["# Listen\n"]), _cell("code", IMPORTS), _cell("code", SERVE)])


def test_a_notebook_serving_the_model_is_its_inference_path(served: Path):
    messages, _ = _run(served, "voc/model.py")
    assert len(messages) == 1
    assert messages[0].startswith("weight norm applied here stays live at `listen.ipynb:cell 3:2` (`model.eval()`)")


def test_the_fix_goes_into_the_notebook_cells_and_the_model_then_runs_folded(served: Path, monkeypatch: pytest.MonkeyPatch):
    before = json.loads((served / "listen.ipynb").read_text())
    messages, left = _run(served, "voc/model.py", "listen.ipynb", fix=True)
    assert len(messages) == 1 and left == []
    after = json.loads((served / "listen.ipynb").read_text())
    assert [c["metadata"] for c in after["cells"]] == [c["metadata"] for c in before["cells"]]
    assert [c.get("outputs") for c in after["cells"]] == [c.get("outputs") for c in before["cells"]]
    imports, serve = ("".join(c["source"]) for c in after["cells"][1:])
    assert imports.startswith("".join(IMPORTS) + "\n\ndef _fold_weight_norm_for_inference(model):\n")
    assert imports.count("import torch\n") == 1
    assert serve == "".join(SERVE[:2]) + "_fold_weight_norm_for_inference(model)\n" + "".join(SERVE[2:])
    assert _run(served, "voc/model.py", "listen.ipynb", fix=True) == ([], [])
    assert json.loads((served / "listen.ipynb").read_text()) == after
    monkeypatch.syspath_prepend(str(served))
    namespace: dict = {}
    code = imports.replace("%pip install torch\n", "") + serve
    exec(compile(code, "listen.ipynb", "exec"), namespace)  # noqa: S102 - the fixed notebook's cells
    import torch

    assert not torch.nn.utils.parametrize.is_parametrized(namespace["model"].conv)
    assert type(namespace["model"].conv.weight) is torch.nn.Parameter
    sys.modules.pop("voc.model", None)
    sys.modules.pop("voc", None)


@pytest.mark.parametrize(
    "fold", ["import wnaudit\nwnaudit.fold_weight_norm(model)\n", "torch.nn.utils.parametrize.remove_parametrizations(model.conv, 'weight')\n"]
)
def test_a_notebook_that_folds_is_no_finding(tmp_path: Path, fold: str):
    root = _project(tmp_path, [_cell("code", IMPORTS), _cell("code", SERVE[:2] + [fold] + SERVE[2:])])
    assert _run(root, "voc/model.py") == ([], [])


def test_a_broken_notebook_beside_changes_nothing(served: Path):
    (served / "scratch.ipynb").write_text("{not json")
    (served / "notes.ipynb").write_text(json.dumps({"cells": [_cell("code", ["def broken(:\n"])], "metadata": {}, "nbformat": 4}))
    messages, _ = _run(served, "voc/model.py")
    assert len(messages) == 1 and "`listen.ipynb:cell 3:2`" in messages[0]


def test_test_notebooks_are_not_serving_paths(tmp_path: Path):
    root = _project(tmp_path, [_cell("code", IMPORTS), _cell("code", SERVE)], name="test_listen.ipynb")
    assert _run(root, "voc/model.py") == ([], [])


def test_kept_answers_hold_with_a_notebook_in_the_project_and_follow_its_edits(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
):
    """A warm run reuses WN110's verdicts (the notebook is recorded as its view); an edit to the notebook is seen."""
    from wnaudit.source.serving.index import ServingIndex

    root = _project(tmp_path / "proj", [_cell("code", IMPORTS), _cell("code", SERVE)])
    cold = _run(root, "voc/model.py")
    assert len(cold[0]) == 1
    prepared: list[object] = []
    real = ServingIndex.prepare
    monkeypatch.setattr(ServingIndex, "prepare", lambda self, starts: prepared.append(1) or real(self, starts))
    assert _run(root, "voc/model.py") == cold and prepared == []
    notebook = root / "listen.ipynb"
    folded = '"model.eval()\\n",\n    "import wnaudit\\n",\n    "wnaudit.fold_weight_norm(model)\\n",'
    notebook.write_text(notebook.read_text().replace('"model.eval()\\n",', folded))
    assert _run(root, "voc/model.py") == ([], []) and prepared


def test_a_notebook_class_that_builds_the_model_bare_and_loads_nothing_gets_no_fix(tmp_path: Path):
    """The fold-point check reads a notebook's code cells as the run does (its view), not its JSON."""
    holder = [
        "class Server:\n", "    def __init__(self):\n", "        self.vocoder = Generator()\n",
        "        self.vocoder.eval()\n",
    ]
    root = _project(tmp_path, [_cell("code", IMPORTS), _cell("code", holder)])
    messages, _ = _run(root, "voc/model.py")
    assert len(messages) == 1
    assert "no fix offered: `__init__` builds `self.vocoder` without its weights and loads none" in messages[0]
