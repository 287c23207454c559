"""WN103 through a flag-selected callable (issue 16, deliverable 5): bound in another file, or shared with a suppressed call.

``norm_f = weight_norm if not USE_SN else spectral_norm`` written in
``voc/norms.py`` and called in ``voc/model.py``: the call is reported in
``model.py`` alone as in the whole tree, the message names ``norms.py:LINE``,
and the fix rewrites the binding only in a run that lints ``norms.py``.  A
binding shared by several calls is never rewritten when one of them is
suppressed: the fix would change the suppressed call too.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch

from wnaudit.common.config import Config
from wnaudit.common.options import RunOptions
from wnaudit.source import fix_source, lint_files, lint_source

NORMS = """\
from torch.nn.utils import spectral_norm, weight_norm

USE_SN = False
norm_f = weight_norm if not USE_SN else spectral_norm
"""
BINDING = "norm_f = weight_norm if not USE_SN else spectral_norm"
FIXED_BINDING = "norm_f = torch.nn.utils.parametrizations.weight_norm if not USE_SN else spectral_norm"

MODEL = """\
import torch.nn as nn
from torch.nn.utils import remove_weight_norm

{import_line}


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = {callee}(nn.Conv1d(1, 4, 5, padding=2))

    def fold(self):
        remove_weight_norm(self.conv)
"""
#: How model.py reaches the binding: import line, callee as written.
SPELLINGS = {
    "relative": ("from .norms import norm_f", "norm_f"),
    "absolute": ("from voc.norms import norm_f", "norm_f"),
    "module attribute": ("from . import norms", "norms.norm_f"),
    "re-exported by a sibling": ("from .layers import norm_f", "norm_f"),
}
LAYERS = "from .norms import norm_f\n"


def _tree(root: Path, spelling: str = "relative", model: str | None = None, **extra: str) -> Path:
    import_line, callee = SPELLINGS[spelling]
    package = root / "voc"
    package.mkdir(parents=True)
    files = {
        "__init__.py": "",
        "norms.py": NORMS,
        "layers.py": LAYERS,
        "model.py": model if model is not None else MODEL.format(import_line=import_line, callee=callee),
        **extra,
    }
    for name, text in files.items():
        (package / name).write_text(text)
    return package


def _run(paths: list[Path], **options: object) -> list[tuple[str, str, int, int, str, bool]]:
    result = lint_files(sorted(paths), RunOptions(cache=False, **options))  # type: ignore[arg-type]
    assert result.errors == []
    return [(Path(f.path).name, f.code, f.line or 0, f.column or 0, f.message, f.fixable) for f in result.findings]


def _without_fixable(found: list[tuple]) -> list[tuple]:
    return [item[:-1] for item in found]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_imported_flag_choice_is_reported_at_the_call_alone_as_in_the_whole_tree(tmp_path: Path, spelling: str):
    package = _tree(tmp_path, spelling)
    model = package / "model.py"
    alone = _run([model])
    callee = SPELLINGS[spelling][1]
    assert _without_fixable(alone) == [
        ("model.py", "WN103", 10, 21,
         f"`{callee}` applies the deprecated torch.nn.utils.weight_norm when its flag selects weight norm "
         "(bound at norms.py:4): bind torch.nn.utils.parametrizations.weight_norm there (the fix, offered when "
         "that file is linted in the same run, also migrates the removals of it)"),
    ]
    whole = [item for item in _run(sorted(package.glob("*.py"))) if item[0] == "model.py"]
    assert _without_fixable(whole) == _without_fixable(alone)
    via_api = [(f.code, f.line, f.column, f.message) for f in lint_source(model.read_text(), str(model))]
    assert via_api == [item[1:5] for item in alone]


def test_imported_flag_choice_with_a_modern_alternative_or_a_second_binding_is_not_reported(tmp_path: Path):
    modern = _tree(tmp_path / "modern")
    (modern / "norms.py").write_text(NORMS.replace(
        "from torch.nn.utils import spectral_norm, weight_norm",
        "from torch.nn.utils import spectral_norm\nfrom torch.nn.utils.parametrizations import weight_norm",
    ))
    rebound = _tree(tmp_path / "rebound")
    (rebound / "norms.py").write_text(NORMS + "if USE_SN:\n    norm_f = None\n")
    for package in (modern, rebound):
        assert "WN103" not in [item[1] for item in _run([package / "model.py"])]


def test_imported_flag_choice_fix_is_offered_only_when_the_binding_file_is_in_the_run(tmp_path: Path):
    """Linted alone, model.py's finding has no fix (norms.py would change outside the run): nothing is written."""
    package = _tree(tmp_path)
    before = {p.name: p.read_text() for p in package.glob("*.py")}
    assert [item[5] for item in _run([package / "model.py"])] == [False]
    result = lint_files([package / "model.py"], RunOptions(cache=False, fix=True, unsafe_fixes=True))
    assert result.fixed == [] and [f.code for f in result.findings] == ["WN103"]
    assert {p.name: p.read_text() for p in package.glob("*.py")} == before
    fixed, done = fix_source(before["model.py"], str(package / "model.py"))
    assert (fixed, done) == (before["model.py"], [])
    # With norms.py in the run, the same finding is fixable.
    assert [item[5] for item in _run([package / "model.py", package / "norms.py"]) if item[1] == "WN103"] == [True]


@pytest.fixture
def clean_imports():
    saved = list(sys.path)
    yield
    sys.path[:] = saved
    for name in [n for n in sys.modules if n == "voc" or n.startswith("voc.")]:
        del sys.modules[name]


def test_imported_flag_choice_fix_rewrites_the_binding_and_migrates_the_removal_then_runs(tmp_path: Path, clean_imports):
    package = _tree(tmp_path)
    result = lint_files(sorted(package.glob("*.py")), RunOptions(cache=False, fix=True, unsafe_fixes=True))
    assert [(Path(f.path).name, f.code, f.line) for f in result.fixed] == [("model.py", "WN103", 10)]
    assert result.findings == [] and result.errors == []
    norms = (package / "norms.py").read_text()
    assert FIXED_BINDING in norms and "import torch\n" in norms
    assert "from torch.nn.utils import spectral_norm\n" in norms  # the unused legacy import is dropped
    model = (package / "model.py").read_text()
    assert 'torch.nn.utils.parametrize.remove_parametrizations(self.conv, "weight")' in model
    assert "norm_f(nn.Conv1d(1, 4, 5, padding=2))" in model  # the call stays as written
    assert _run(sorted(package.glob("*.py"))) == []
    sys.path.insert(0, str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the legacy hook warns; the fixed code must not
        disc = importlib.import_module("voc.model").Disc()
    x = torch.randn(1, 1, 16)
    before = disc.conv(x)
    disc.fold()  # a legacy remover here would raise ValueError on the modern weight norm
    assert not hasattr(disc.conv, "parametrizations")
    torch.testing.assert_close(disc.conv(x), before)


def test_imported_flag_choice_diff_edits_both_files(tmp_path: Path):
    package = _tree(tmp_path)
    before = {p.name: p.read_text() for p in package.glob("*.py")}
    result = lint_files(sorted(package.glob("*.py")), RunOptions(cache=False, diff=True, unsafe_fixes=True))
    patch = b"".join(d if isinstance(d, bytes) else d.encode() for d in result.diffs).decode()
    assert f"-{BINDING}\n+{FIXED_BINDING}\n" in patch and "norms.py" in patch and "model.py" in patch
    assert {p.name: p.read_text() for p in package.glob("*.py")} == before


# -- a binding shared with a suppressed call ------------------------------------------------------------------

SHARED = """\
import torch.nn as nn
from torch.nn.utils import spectral_norm, weight_norm


def layers(flag=False):
    norm_f = weight_norm if flag else spectral_norm
    first = norm_f(nn.Conv1d(2, 2, 3)){first}
    second = norm_f(nn.Conv1d(2, 2, 3))
    return first, second
"""


@pytest.mark.parametrize("suppression", ["  # noqa: WN103", "  # noqa", "  # NOQA:WN1"])
def test_a_binding_shared_with_a_suppressed_call_is_not_rewritten(suppression: str):
    source = SHARED.format(first=suppression)
    found = lint_source(source, "layers.py")
    assert [(f.code, f.line, f.fixable) for f in found] == [("WN103", 8, False)]
    fixed, done = fix_source(source, "layers.py")
    assert (fixed, done) == (source, [])


def test_a_suppression_of_another_code_does_not_withhold_the_binding_fix():
    source = SHARED.format(first="  # noqa: WN101")
    assert [(f.code, f.line, f.fixable) for f in lint_source(source, "layers.py")] == [("WN103", 7, True), ("WN103", 8, True)]
    fixed, done = fix_source(source, "layers.py")
    assert "norm_f = torch.nn.utils.parametrizations.weight_norm if flag else spectral_norm" in fixed and len(done) == 2


def test_a_noqa_on_the_binding_line_protects_the_binding():
    source = SHARED.format(first="").replace("else spectral_norm\n", "else spectral_norm  # noqa: WN103\n")
    assert [(f.code, f.line, f.fixable) for f in lint_source(source, "layers.py")] == [("WN103", 7, False), ("WN103", 8, False)]
    assert fix_source(source, "layers.py") == (source, [])


def test_a_suppressed_call_in_another_file_of_the_run_protects_the_imported_binding(tmp_path: Path):
    quiet = MODEL.format(import_line="from .norms import norm_f", callee="norm_f").replace(
        "padding=2))\n", "padding=2))  # noqa: WN103\n",
    )
    loud = MODEL.format(import_line="from .norms import norm_f", callee="norm_f")
    package = _tree(tmp_path, model=quiet, **{"other.py": loud})
    before = {p.name: p.read_text() for p in package.glob("*.py")}
    files = sorted(package.glob("*.py"))
    assert [(item[0], item[1], item[5]) for item in _run(files)] == [("other.py", "WN103", False)]
    result = lint_files(files, RunOptions(cache=False, fix=True, unsafe_fixes=True))
    assert result.fixed == [] and {p.name: p.read_text() for p in package.glob("*.py")} == before


def test_a_call_whose_code_is_ignored_for_its_file_protects_the_binding(tmp_path: Path):
    package = _tree(tmp_path, **{"other.py": MODEL.format(import_line="from .norms import norm_f", callee="norm_f")})
    config = Config(root=str(tmp_path), per_file_ignores=(("voc/model.py", ("WN103",)),))
    files = sorted(package.glob("*.py"))
    found = lint_files(files, RunOptions(cache=False, config=config)).findings
    assert [(Path(f.path).name, f.code, f.fixable) for f in found] == [("other.py", "WN103", False)]


def test_the_page_states_why_a_shared_binding_is_not_fixed():
    page = (Path(__file__).resolve().parents[2] / "rules" / "WN103.md").read_text()
    safety = textwrap.dedent(page.split("## Fix safety", 1)[1])
    assert "suppressed" in safety and "another file" in safety


def test_a_binding_that_cannot_be_rewritten_leaves_the_calls_files_unchanged(tmp_path: Path, monkeypatch):
    """The binding's file fails to fix (libcst cannot take it, a write error): the removals elsewhere are not migrated."""
    from wnaudit.source.fixer import FixError
    from wnaudit.source.pipeline import apply

    real = apply.apply_fixes

    def failing(data, summary, fixes, keep=frozenset()):
        if Path(summary.path).name == "norms.py":
            raise FixError("libcst cannot parse the file")
        return real(data, summary, fixes, keep)

    monkeypatch.setattr(apply, "apply_fixes", failing)
    package = _tree(tmp_path)
    before = {p.name: p.read_text() for p in package.glob("*.py")}
    for options in (RunOptions(cache=False, fix=True, unsafe_fixes=True), RunOptions(cache=False, diff=True, unsafe_fixes=True)):
        result = lint_files(sorted(package.glob("*.py")), options)
        assert result.fixed == [] and result.diffs == []
        assert [(Path(e.path).name, "fix not applied" in e.message) for e in result.errors] == [("norms.py", True)]
        assert [f.code for f in result.findings] == ["WN103"]
        assert {p.name: p.read_text() for p in package.glob("*.py")} == before
