"""Issue 14 (5): notebooks are linted (walked and named), findings name the cell and
line, --fix/--diff rewrite only the cell sources and keep valid nbformat, and
IPython-only lines (magics, shell escapes, help) are skipped safely."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from wnaudit.cli.command import run
from wnaudit.report.codes import code_registry

WN101_TITLE = code_registry()["WN101"].title


def _code(source: str | list[str], **extra: object) -> dict:
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["keep"]},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}], "source": source}
    cell.update(extra)
    return cell


def _notebook(*cells: dict) -> dict:
    return {"cells": list(cells), "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
            "nbformat": 4, "nbformat_minor": 5}


PORT = _notebook(
    {"cell_type": "markdown", "metadata": {}, "source": ["# Porting the vocoder\n", "%pip is not code here\n"]},
    _code(["%pip install torch\n", "!ls -l \\\n", "   checkpoints/\n", "import torch\n",
           "from torch.nn.utils.parametrizations import weight_norm"]),
    _code(["conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n", "files = !ls\n", "conv?\n", "\n",
           "def fold(m):\n", "    torch.nn.utils.remove_weight_norm(m)\n", "    %time m(x)\n", "    return m"]),
    _code("%%time\ntorch.nn.utils.remove_weight_norm(conv)\n"),
    _code("torch.nn.utils.remove_weight_norm(conv)  # noqa: WN101\n"),
)


def _write(path: Path, notebook: dict, **dump: object) -> Path:
    options = {"indent": 1, "ensure_ascii": False, **dump}
    path.write_text(json.dumps(notebook, **options) + "\n", encoding="utf-8")
    return path


def _cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    status = run([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _assert_valid_nbformat(notebook: dict) -> None:
    """The nbformat 4 keys every cell type must carry (as the schema requires)."""
    assert {"cells", "metadata", "nbformat", "nbformat_minor"} <= set(notebook) and notebook["nbformat"] == 4
    for cell in notebook["cells"]:
        required = {"code": {"execution_count", "metadata", "outputs", "source"}}.get(cell["cell_type"], {"metadata", "source"})
        assert required <= set(cell)
        assert isinstance(cell["source"], (str, list))


@pytest.fixture
def port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return _write(tmp_path / "port.ipynb", PORT)


def test_findings_name_the_cell_and_the_line_in_it(capsys, port: Path):
    status, out, err = _cli(capsys, "port.ipynb")
    assert (status, err) == (1, "")
    lines = out.splitlines()
    # cell 3 is the third cell of the file (markdown counts); the removal is its 6th line, column 5.
    assert lines[0] == f"port.ipynb:cell 3:6:5: WN101 [*] {WN101_TITLE}"
    assert sum(" WN101 " in line for line in lines) == 1, "the %%time cell is skipped; noqa honoured"


def test_directory_walks_find_notebooks(capsys, port: Path):
    status, out, _ = _cli(capsys, "--output-format", "json", ".")
    payload = json.loads(out)
    assert status == 1
    assert [(f["path"], f["cell"], f["line"], f["column"]) for f in payload["findings"]] == [("port.ipynb", 3, 6, 5)]


def test_fix_rewrites_only_the_cell_source(capsys, port: Path):
    before = json.loads(port.read_text(encoding="utf-8"))
    status, out, _ = _cli(capsys, "--fix", "port.ipynb")
    assert status == 0, out
    after = json.loads(port.read_text(encoding="utf-8"))
    _assert_valid_nbformat(after)
    assert after["cells"][2]["source"] == [
        "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n", "files = !ls\n", "conv?\n", "\n",
        "def fold(m):\n", '    torch.nn.utils.parametrize.remove_parametrizations(m, "weight")\n', "    %time m(x)\n", "    return m",
    ]
    expected = copy.deepcopy(before)
    expected["cells"][2]["source"] = after["cells"][2]["source"]
    assert after == expected, "outputs, metadata, magics and every other cell are untouched"
    # The file keeps the notebook's own layout: same serialisation as before, apart from the one line.
    assert port.read_text(encoding="utf-8") == json.dumps(expected, indent=1, ensure_ascii=False) + "\n"
    assert _cli(capsys, "port.ipynb")[0] == 0


@pytest.mark.parametrize("dump", [{"indent": 2}, {"indent": 1, "sort_keys": True}, {"indent": 4, "ensure_ascii": True}])
def test_fix_keeps_the_json_layout(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dump: dict):
    monkeypatch.chdir(tmp_path)
    notebook = copy.deepcopy(PORT)
    notebook["cells"][0]["source"].append("Ünïcode stays as it was\n")
    path = _write(tmp_path / "port.ipynb", notebook, **dump)
    assert _cli(capsys, "--fix", path)[0] == 0
    fixed = json.loads(path.read_text(encoding="utf-8"))
    options = {"ensure_ascii": False, **dump}
    assert path.read_text(encoding="utf-8") == json.dumps(fixed, **options) + "\n"


def test_diff_applies_with_git_and_equals_fix(capsys, port: Path, tmp_path: Path):
    status, patch, _ = _cli(capsys, "--diff", "port.ipynb")
    assert status == 1 and patch.startswith("--- a/port.ipynb\n+++ b/port.ipynb\n")
    original = port.read_bytes()
    fixed_copy = tmp_path / "fixed"
    fixed_copy.mkdir()
    shutil.copyfile(port, fixed_copy / "port.ipynb")
    _cli(capsys, "--fix", fixed_copy / "port.ipynb")
    assert port.read_bytes() == original, "--diff writes nothing"
    (tmp_path / "p.diff").write_text(patch, encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert port.read_bytes() == (fixed_copy / "port.ipynb").read_bytes()


def test_valid_python_is_never_treated_as_a_magic(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    source = ("import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
              "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\nx = (10\n     % 3)\n"
              "torch.nn.utils.remove_weight_norm(conv)\n")
    path = _write(tmp_path / "mod.ipynb", _notebook(_code(source)))
    status, out, _ = _cli(capsys, "--fix", path)
    assert status == 0, out
    fixed = json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]
    assert "x = (10\n     % 3)\n" in fixed


def test_bad_notebooks_are_one_line_errors_and_others_still_linted(capsys, port: Path, tmp_path: Path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    (tmp_path / "nocells.ipynb").write_text('{"metadata": {}}', encoding="utf-8")
    _write(tmp_path / "syntax.ipynb", _notebook(_code("x = 1\n"), _code("def f(:\n    pass\n")))
    status, out, err = _cli(capsys, ".")
    assert status == 2
    errors = sorted(line for line in err.splitlines() if line.startswith("wnaudit: error:"))
    assert errors == [
        "wnaudit: error: broken.ipynb: notebook is not valid JSON: Expecting value at line 1",
        "wnaudit: error: nocells.ipynb: not an nbformat 4 notebook: no list of cells",
        "wnaudit: error: syntax.ipynb: cell 2: syntax error at line 1, column 7: invalid syntax",
    ]
    assert "port.ipynb:cell 3:6:5: WN101" in out


def test_unsafe_fix_in_a_notebook_needs_the_flag(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    legacy = _notebook(_code("import torch\nfrom torch.nn.utils import weight_norm\n"), _code("conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"))
    path = _write(tmp_path / "legacy.ipynb", legacy)
    status, out, _ = _cli(capsys, "--fix", path)
    assert status == 1 and "legacy.ipynb:cell 2:1:8: WN103 [-]" in out
    assert json.loads(path.read_text(encoding="utf-8")) == legacy
    assert _cli(capsys, "--fix", "--unsafe-fixes", path)[0] == 0
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert cells[1]["source"] == "conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))\n"


def test_comments_ending_in_a_question_mark_are_python(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Only IPython lines become placeholders: a comment at any indentation stays a comment."""
    monkeypatch.chdir(tmp_path)
    source = ("!nvidia-smi\nimport torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
              "def fold(m):\n    x = weight_norm(m)\n# is this right?\n    torch.nn.utils.remove_weight_norm(x)\n")
    _write(tmp_path / "q.ipynb", _notebook(_code(source)))
    status, out, err = _cli(capsys, "q.ipynb")
    assert (status, err) == (1, ""), err
    assert f"q.ipynb:cell 1:7:5: WN101 [*] {WN101_TITLE}" in out.splitlines()


_LINES = st.sampled_from([
    "import torch", "x = 1", "%pip install torch", "!ls", "files = !ls", "obj?", "    # comment?",
    "def f():", "    return 1", "", "%%time", "print('%d' % 3)", "y = (2\n     % 3)",
])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["code", "markdown"]), st.lists(_LINES, max_size=6), st.booleans()), max_size=6),
       st.sampled_from([1, 2]))
def test_notebook_view_round_trips_unchanged(cells, indent):
    """Writing back an unfixed view gives the same bytes; every line of every code cell is located."""
    from wnaudit.source.notebook import notebook_view, rewrite_notebook
    from wnaudit.source.reading import SourceError

    nb = _notebook(*[
        (_code(lines_joined) if kind == "code" else {"cell_type": "markdown", "metadata": {}, "source": lines_joined})
        for kind, lines, as_list in cells
        for lines_joined in [("\n".join(lines).splitlines(keepends=True) if as_list else "\n".join(lines))]
    ])
    data = (json.dumps(nb, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        view = notebook_view(data)
    except SourceError as error:
        assert str(error).startswith("cell ") and "\n" not in str(error)
        return
    assert rewrite_notebook(data, view, view.text) == data
    for cell in view.cells:
        for offset in range(cell.line_count):
            assert view.locate(cell.first_line + offset) == (cell.number, offset + 1)


COMPAT = (
    "try:\n    from torch.nn.utils.parametrizations import weight_norm\n"
    "except ImportError:\n    from torch.nn.utils import weight_norm\n"
)
THROUGH_COMPAT = _notebook(_code([
    "import torch.nn as nn\n", "from torch.nn.utils import remove_weight_norm\n", "from compat import weight_norm\n",
    "conv = weight_norm(nn.Conv1d(2, 2, 3))\n", "remove_weight_norm(conv)\n",
]))


def test_a_notebook_reads_what_its_imports_bind_as_a_script_does(tmp_path: Path, capsys):
    """The spelling chosen in an imported module (compat.py) reaches the notebook's removal, as it reaches a .py file."""
    (tmp_path / "compat.py").write_text(COMPAT)
    notebook = _write(tmp_path / "port.ipynb", THROUGH_COMPAT)
    script = tmp_path / "port.py"
    script.write_text("".join(THROUGH_COMPAT["cells"][0]["source"]))
    status, out, _ = _cli(capsys, "--no-cache", "--output-format", "json", notebook, script)
    found = sorted((Path(f["path"]).name, f["code"], f.get("cell"), f["line"]) for f in json.loads(out)["findings"])
    assert status == 1
    assert found == [("port.ipynb", "WN101", 1, 5), ("port.py", "WN101", None, 5)]
    status, out, _ = _cli(capsys, "--no-cache", "--fix", notebook)
    assert status == 0, out
    fixed = "".join(json.loads(notebook.read_text())["cells"][0]["source"])
    assert "_remove_weight_norm_any_spelling(conv)" in fixed and "\nremove_weight_norm(conv)" not in fixed
