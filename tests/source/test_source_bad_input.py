"""Bad input never crashes; fixes keep encoding, BOM, line endings and tabs."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

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
    # Files whose bytes could hold a finding are parsed and their errors reported; the others only count
    # as checked (issue 21): syntax_plain.py and binary.py name no weight-norm API.
    assert set(errors) == {"syntax.py", "latin1.py", "badcookie.py"}
    assert all("\n" not in m for m in errors.values())
    assert "syntax error at line 1" in errors["syntax.py"]
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
    assert len(result.diffs) == 1 and b"+torch.nn.utils.parametrize.remove_parametrizations(conv" in result.diffs[0]
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


# --- only regular files of bounded size are read (issue 13) --------------------------------


def _wnaudit_subprocess(*args: str, cwd: Path, memory_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a child process with a timeout: a hang fails the test instead of the suite."""

    def limit_memory() -> None:
        if memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    return subprocess.run(
        [sys.executable, "-c", "import sys; from wnaudit.cli.command import main; sys.exit(main())", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, preexec_fn=limit_memory,
        env=dict(os.environ, NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[2])),
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")
@pytest.mark.parametrize("named", ["walked", "explicit"])
def test_a_fifo_named_like_source_is_refused_with_one_line_never_read(tmp_path, named):
    os.mkfifo(tmp_path / "x.py")
    (tmp_path / "good.py").write_text(BUGGY)
    targets = ["."] if named == "walked" else ["x.py", "good.py"]
    completed = _wnaudit_subprocess(*targets, cwd=tmp_path)
    assert completed.returncode == 2, completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("wnaudit: error:")]
    assert len(errors) == 1 and "x.py: not a regular file (a FIFO)" in errors[0]
    assert "Traceback" not in completed.stderr
    assert "good.py:4:1: WN101" in completed.stdout  # the other input is still linted


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")
@pytest.mark.parametrize("named", ["walked", "explicit"])
def test_a_fifo_or_device_named_like_a_notebook_is_refused_with_one_line_never_read(tmp_path, named):
    """The notebooks' views were read before the scan by ``Path.read_bytes``: a FIFO blocked the run, /dev/zero had no end."""
    os.mkfifo(tmp_path / "x.ipynb")
    (tmp_path / "z.ipynb").symlink_to("/dev/zero")
    (tmp_path / "good.py").write_text(BUGGY)
    targets = ["."] if named == "walked" else ["x.ipynb", "z.ipynb", "good.py"]
    completed = _wnaudit_subprocess(*targets, cwd=tmp_path, memory_limit=1 << 30)
    assert completed.returncode == 2, completed.stderr
    errors = sorted(line for line in completed.stderr.splitlines() if line.startswith("wnaudit: error:"))
    assert "x.ipynb: not a regular file (a FIFO)" in errors[0]
    if named == "explicit":  # a walk leaves a link to a device out
        assert len(errors) == 2 and "z.ipynb: not a regular file (a character device)" in errors[1]
    assert "Traceback" not in completed.stderr
    assert "good.py:4:1: WN101" in completed.stdout  # the other input is still linted


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_symlink_to_dev_zero_is_refused_not_read_until_memory_runs_out(tmp_path):
    (tmp_path / "z.py").symlink_to("/dev/zero")
    completed = _wnaudit_subprocess("z.py", cwd=tmp_path, memory_limit=1 << 30)
    assert completed.returncode == 2
    assert completed.stderr.strip() == "wnaudit: error: z.py: not a regular file (a character device); only regular files are read"


def test_a_source_above_the_size_cap_is_refused_naming_its_size(tmp_path):
    big = tmp_path / "big.py"
    big.write_bytes(b"weight_norm = 1\n" + b"x = 1\n" * 400)
    (tmp_path / "pyproject.toml").write_text("[tool.wnaudit]\nmax-source-bytes = 1000\n")
    (tmp_path / "good.py").write_text(BUGGY)
    completed = _wnaudit_subprocess(".", cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr.strip() == (
        f"wnaudit: error: {Path('.') / 'big.py'}: file is 2.4 KiB ({big.stat().st_size:,} bytes), "
        "above the 1000 bytes limit (raise it with max-source-bytes in [tool.wnaudit])"
    )
    assert "good.py:4:1: WN101" in completed.stdout


def test_the_default_size_cap_is_32_mib(tmp_path):
    from wnaudit.common.config import DEFAULT_MAX_SOURCE_BYTES
    from wnaudit.source.reading import SourceError, read_source_bytes

    assert DEFAULT_MAX_SOURCE_BYTES == 32 << 20
    big = tmp_path / "big.py"
    with open(big, "wb") as handle:
        handle.truncate(DEFAULT_MAX_SOURCE_BYTES + 1)  # sparse: no real 32 MiB written
    with pytest.raises(SourceError, match=r"file is 32.0 MiB \(33,554,433 bytes\), above the 32.0 MiB limit"):
        read_source_bytes(big)


# --- noqa honours prefixes, case-insensitively, as flake8 does (issue 14) -----------------


@pytest.mark.parametrize("comment", ["# noqa: WN1", "# NOQA: WN1", "# noqa:wn10", "# NoQA: WN101", "# noqa", "# noqa: E501, WN1"])
def test_noqa_with_a_code_prefix_suppresses(comment):
    source = BUGGY.replace("# fold", comment)
    assert lint_source(source, "m.py") == []


def test_noqa_with_another_code_or_prefix_does_not_suppress():
    for comment in ("# noqa: WN2", "# noqa: WN102", "# noqa: E501"):
        assert [f.code for f in lint_source(BUGGY.replace("# fold", comment), "m.py")] == ["WN101"]
