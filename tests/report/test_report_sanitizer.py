"""Issue 13: one sanitiser for every human-readable renderer.

Names from the whole control range, lone surrogates and file names that are not
valid UTF-8 (``os.fsdecode`` of raw bytes) reach every renderer; each finding
and each error stays exactly one line, nothing raw reaches the terminal, JSON
stays JSON and SARIF stays schema-valid.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

from wnaudit.common.findings import Applicability, Finding, InputError, RunResult, Severity
from wnaudit.report import FORMATS, TEXT_FORMATS, renderer
from wnaudit.report.sanitize import is_safe_line, sanitize

SCHEMA = Path(__file__).resolve().parents[1] / "ecosystem" / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"

#: Every C0 control, DEL, every C1 control, the separators and bidi overrides.
CONTROLS = "".join(map(chr, range(0x00, 0x20))) + "".join(map(chr, range(0x7F, 0xA0))) + "\u2028\u2029\u202e\u2066"
SURROGATES = "\udfff\udc00\ud800x\udbff"  # no high-low pair: JSON would join it into one character
#: What os.fsdecode makes of a file name that is not valid UTF-8.
UNDECODABLE = os.fsdecode(b"voc\xff\xfe\x80oder.py")
HOSTILE_NAMES = [
    "a" + CONTROLS + "b",
    "k" + SURROGATES,
    UNDECODABLE,
    "\x1b]0;pwned\x07\x1b[2J",
    "x.py\nAll checks passed!\r",
    "\x9b31m",  # one-byte CSI
]


def _result(name: str) -> RunResult:
    return RunResult(
        findings=[
            Finding(name, "WN101", f"message about {name}", True, Severity.ERROR, line=3, column=5),
            Finding(name, "WN302", f"stored {name}", True, Severity.WARNING, object=f"gen.{name}.weight"),
            Finding(name, "WN103", "needs review", True, Severity.WARNING, line=1, column=1,
                    applicability=Applicability.UNSAFE),
        ],
        errors=[InputError(name, f"cannot read {name}")],
    )


def _render(fmt: str, result: RunResult, **flags: bool) -> str:
    stream = io.StringIO()
    renderer(fmt)(result, stream, color=False, quiet=False, statistics=flags.get("statistics", False))
    return stream.getvalue()


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    raw = SCHEMA.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256
    return jsonschema.Draft4Validator(json.loads(raw))


def test_sanitize_escapes_every_control_and_surrogate():
    text = sanitize(CONTROLS + SURROGATES + UNDECODABLE)
    assert is_safe_line(text)
    assert text.isascii() or all(ord(c) >= 0xA0 for c in text if not c.isascii())
    assert "\\x1b" in text and "\\n" in text and "\\r" in text and "\\x9b" in text
    assert "\\udcff" in text and "\\ud800" in text
    text.encode("utf-8")  # never raises
    assert sanitize("plain/path.py") == "plain/path.py"


@pytest.mark.parametrize("fmt", sorted(TEXT_FORMATS | {"github"}))
@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_human_formats_print_one_safe_line_per_finding(fmt: str, name: str):
    out = _render(fmt, _result(name))
    out.encode("utf-8")
    lines = out.splitlines()
    assert all(is_safe_line(line) for line in lines), [line for line in lines if not is_safe_line(line)]
    # str.splitlines also splits on \x1c-\x1e, \x85, \u2028: none may remain raw.
    assert out.split("\n")[:-1] == lines
    assert not any(line.startswith("All checks passed!") for line in lines)
    mentions = [line for line in lines if "WN101 [*]" in line or "title=WN101" in line]
    assert len(mentions) == 1 and sanitize(name) in out


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_statistics_and_summary_are_safe_too(name: str):
    for fmt in sorted(TEXT_FORMATS | {"github"}):
        out = _render(fmt, _result(name), statistics=True)
        # The statistics columns are tab-separated by design; nothing else is raw.
        assert all(is_safe_line(line.replace("\t", " ")) for line in out.splitlines()), out
        assert out.count("\t") == 2 * out.count("\tWN")


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_json_stays_valid_json_with_the_names_intact(name: str):
    payload = json.loads(_render("json", _result(name)))
    assert {f["path"] for f in payload["findings"]} == {name}
    assert payload["errors"] == [{"path": name, "message": f"cannot read {name}"}]


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_sarif_stays_schema_valid(name: str, sarif_validator: jsonschema.Draft4Validator):
    out = _render("sarif", _result(name))
    out.encode("utf-8")
    log = json.loads(out)
    errors = list(sarif_validator.iter_errors(log))
    assert not errors, errors[0].message
    run = log["runs"][0]
    for result in run["results"]:
        assert is_safe_line(result["message"]["text"])
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.isascii() and uri.isprintable()
    assert is_safe_line(run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"])


def test_every_format_is_covered():
    assert set(FORMATS) == TEXT_FORMATS | {"json", "github", "sarif"}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run(
        [sys.executable, "-c", "import sys; from wnaudit.cli import main; sys.exit(main())", *args],
        cwd=cwd, env=env, capture_output=True, timeout=120,
    )


def test_error_line_names_the_real_file_when_stderr_is_not_a_tty(tmp_path: Path):
    """click.echo stripped the escape sequence, naming a file that does not exist."""
    name = "bad\x1b[2Jname.pt"
    proc = _cli(name, cwd=tmp_path)
    assert proc.returncode == 2
    [line] = proc.stderr.decode().splitlines()
    assert line == "wnaudit: error: bad\\x1b[2Jname.pt: no such file or directory"


def test_forged_lines_in_file_names_stay_inside_one_line(tmp_path: Path):
    """A real file whose name holds CR/LF and escapes, and one that is not valid UTF-8."""
    source = "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\nc = weight_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_weight_norm(c)\n"
    forged = tmp_path / "v\nAll checks passed!\r\x1b[2J.py"
    forged.write_text(source, encoding="utf-8")
    raw = os.path.join(os.fsencode(tmp_path), b"w\xff.py")
    with open(raw, "wb") as handle:
        handle.write(source.encode())
    broken = os.path.join(os.fsencode(tmp_path), b"\x1b]0;t\x07\xfe.py")
    with open(broken, "wb") as handle:
        handle.write(b"def f(:  # weight_norm\n")  # names an API: parsed, so its syntax error is reported (issue 21)
    for fmt in ("concise", "full", "grouped", "github"):
        proc = _cli("--output-format", fmt, ".", cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        out = proc.stdout.decode("utf-8")  # strict: nothing undecodable was written
        err = proc.stderr.decode("utf-8")
        assert not any(line.startswith("All checks passed!") for line in out.splitlines())
        for line in out.splitlines() + err.splitlines():
            assert is_safe_line(line), line
        assert sum("WN101 [*]" in line or "title=WN101" in line for line in out.splitlines()) == 2
        if fmt != "github":
            assert "\\x1b]0;t\\x07\\udcfe.py: syntax error" in err
    for fmt in ("json", "sarif"):
        proc = _cli("--output-format", fmt, ".", cwd=tmp_path)
        json.loads(proc.stdout.decode("utf-8"))


def _safetensors_with_keys(path: Path, prefixes: list[str]) -> None:
    """A safetensors file written by hand: its header is JSON, so a key may hold any escape."""
    import struct

    header: dict[str, object] = {}
    offset = 0
    for prefix in prefixes:
        for suffix, shape in (("weight_g", [2, 1, 1]), ("weight_v", [2, 2, 3])):
            size = 4 * shape[0] * shape[1] * shape[2]
            header[f"{prefix}.{suffix}"] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + size]}
            offset += size
    raw = json.dumps(header).encode("ascii")  # ensure_ascii: lone surrogates become \\udXXX escapes
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + struct.pack("<f", 1.0) * (offset // 4))


@pytest.mark.parametrize("fmt", ["concise", "full", "grouped", "github", "sarif", "json"])
def test_hostile_tensor_keys_in_a_checkpoint(tmp_path: Path, fmt: str):
    """Issue 13: a lone surrogate key crashed the text, github and sarif renderers; an OSC/CSI key reached the terminal."""
    prefixes = ["gen\ud800", "gen\x1b]0;pwned\x07", "gen\x1b[2J\nAll checks passed!"]
    _safetensors_with_keys(tmp_path / "model.safetensors", prefixes)
    proc = _cli("--output-format", fmt, "model.safetensors", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode("utf-8")
    if fmt in ("json", "sarif"):
        json.loads(out)
        return
    lines = out.splitlines()
    assert all(is_safe_line(line.replace("\t", " ")) for line in lines), lines
    assert not any(line.startswith("All checks passed!") for line in lines)
    if fmt in ("concise", "grouped"):  # one line for the file's WN302 tensors (issue 37), names escaped
        assert sum(" WN302 [*] " in line and "(3 tensors: " in line for line in lines) == 1
        assert "gen\\x1b[2J\\nAll checks passed!.weight" in out
        return
    assert sum(("WN302" in line and "title=" in line) or " WN302 [*] " in line for line in lines) == 3
    assert "gen\\ud800.weight" in out and "gen\\x1b]0;pwned\\x07.weight" in out


def test_log_lines_are_sanitised_but_tracebacks_keep_their_lines():
    import logging

    from wnaudit.cli.logs import _SanitizingFormatter

    formatter = _SanitizingFormatter("wnaudit: %(levelname)s: %(message)s")
    record = logging.LogRecord("wnaudit.x", logging.WARNING, __file__, 1, "%s: fix not applied", ("a\x1b[2J\nb.py",), None)
    assert formatter.format(record) == "wnaudit: WARNING: a\\x1b[2J\\nb.py: fix not applied"
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord("wnaudit.x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    assert formatter.format(record).count("\n") >= 2



@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())))
def test_sanitize_property_one_safe_line(text: str):
    shown = sanitize(text)
    assert is_safe_line(shown)
    assert len(shown.splitlines()) <= 1
    shown.encode("utf-8")
    assert sanitize(shown) == shown, "idempotent: an escaped name is shown as it is"
