"""Bad input never crashes; fixes keep encoding, BOM, line endings and tabs."""

from __future__ import annotations

from pathlib import Path

from wnaudit.cli.command import run
from wnaudit.common.options import RunOptions
from wnaudit.source import fix_source, lint_files, lint_source

BUGGY = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_weight_norm(conv)  # fold\n"
)


def _lint(*paths: Path, **options):
    return lint_files(list(paths), RunOptions(**options))


def test_bad_files_are_errors_and_others_are_still_linted(tmp_path):
    bad = {
        "syntax.py": b"def f(:\n    weight_norm\n",
        "syntax_plain.py": b"def f(:\n",
        "latin1.py": b"x = '\xe9'  # weight_norm\n",
        "binary.py": bytes(range(256)) * 4,
        "badcookie.py": b"# -*- coding: klingon -*-\nweight_norm = 1\n",
    }
    for name, data in bad.items():
        (tmp_path / name).write_bytes(data)
    good = tmp_path / "good.py"
    good.write_text(BUGGY)
    empty = tmp_path / "empty.py"
    empty.write_bytes(b"")
    result = _lint(*sorted(tmp_path.iterdir()))
    errors = {Path(e.path).name: e.message for e in result.errors}
    # Every file read is parsed: a syntax error is reported even where no API is named (issue 14).
    assert set(errors) == {"syntax.py", "syntax_plain.py", "latin1.py", "binary.py", "badcookie.py"}
    assert all("\n" not in m for m in errors.values())
    assert "syntax error at line 1" in errors["syntax.py"]
    assert "syntax error at line 1" in errors["syntax_plain.py"]
    assert [Path(f.path).name for f in result.findings] == ["good.py"]


def test_cli_exit_2_with_other_files_still_reported(tmp_path, capsys):
    (tmp_path / "broken.py").write_bytes(b"weight_norm(\n")
    (tmp_path / "good.py").write_text(BUGGY)
    assert run([str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "WN101" in captured.out and "broken.py" in captured.err


def test_fix_keeps_crlf_bom_cookie_and_tabs(tmp_path):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(BUGGY.replace("\n", "\r\n").encode())
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + BUGGY.encode())
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + BUGGY).encode("latin-1"))
    tabs = tmp_path / "tabs.py"
    tabs.write_bytes(
        b"import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
        b"try:\n\tfrom torch.nn.utils.parametrizations import weight_norm\nexcept ImportError:\n\tfrom torch.nn.utils import weight_norm\n"
        b"def strip(conv):\n\ttorch.nn.utils.remove_weight_norm(conv)\nstrip(weight_norm(torch.nn.Conv1d(2, 2, 3)))\n"
    )
    result = _lint(crlf, bom, latin, tabs, fix=True)
    assert result.errors == [] and result.findings == [] and len(result.fixed) == 4
    data = crlf.read_bytes()
    assert b"remove_parametrizations" in data and data.count(b"\r\n") == data.count(b"\n")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf") and bom.read_bytes().count(b"\xef\xbb\xbf") == 1
    latin_data = latin.read_bytes()
    assert b"caf\xe9" in latin_data and latin_data.startswith(b"# -*- coding: latin-1 -*-")
    tab_text = tabs.read_text()
    assert "\n\ttry:\n\t\treturn torch.nn.utils.remove_weight_norm" in tab_text
    for path in (crlf, bom, latin, tabs):
        compile(path.read_bytes(), str(path), "exec")


def test_diff_writes_nothing(tmp_path):
    target = tmp_path / "model.py"
    target.write_text(BUGGY)
    before = target.read_bytes()
    result = _lint(target, diff=True)
    assert target.read_bytes() == before
    assert len(result.diffs) == 1 and "+torch.nn.utils.parametrize.remove_parametrizations(conv" in result.diffs[0]
    assert [f.code for f in result.findings] == ["WN101"]


def test_fix_source_keeps_type():
    new_text, fixed = fix_source(BUGGY, "m.py")
    assert isinstance(new_text, str) and [f.code for f in fixed] == ["WN101"]
    new_bytes, _ = fix_source(BUGGY.encode(), "m.py")
    assert isinstance(new_bytes, bytes) and new_bytes.decode() == new_text
    assert "# fold" in new_text


def test_anything_cpython_compiles_is_analysed_and_fixed_however_deep():
    calls = "+".join(["torch.nn.utils.remove_weight_norm(c)"] * 600)
    source = "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(m)\nx = " + calls + "\n"
    compile(source, "deep.py", "exec")
    assert len(lint_source(source, "deep.py")) == 600
    fixed, done = fix_source(source, "deep.py")
    assert len(done) == 600 and lint_source(fixed, "deep.py") == []


def test_too_deep_for_cpython_is_one_error_line(tmp_path):
    target = tmp_path / "deep.py"
    target.write_text("weight_norm = 1\nx = " + "+".join(["1"] * 20000) + "\n")
    result = _lint(target)
    assert len(result.errors) == 1 and "\n" not in result.errors[0].message
