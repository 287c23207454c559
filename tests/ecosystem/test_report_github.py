"""``--format github``: workflow commands GitHub Actions turns into pull-request annotations."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from ecosystem_helpers import WN101_LINE, run_wnaudit, write_buggy
from wnaudit.common.findings import Finding, InputError, RunResult, Severity
from wnaudit.report.github import escape_data, escape_property, render
from wnaudit.report.sanitize import sanitize

#: ::level key=value,key=value::message, with nothing unescaped that would break parsing.
COMMAND = re.compile(r"^::(error|warning|notice) ((?:[a-zA-Z]+=[^,:\r\n]*)(?:,[a-zA-Z]+=[^,:\r\n]*)*)::([^\r\n]*)$")


def _unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(text: str) -> str:
    return _unescape_data(text.replace("%3A", ":").replace("%2C", ","))


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """Parse one workflow command as the Actions runner does."""
    match = COMMAND.match(line)
    assert match, f"not a well-formed workflow command: {line!r}"
    level, props, message = match.groups()
    properties = dict(prop.split("=", 1) for prop in props.split(","))
    return level, {k: _unescape_property(v) for k, v in properties.items()}, _unescape_data(message)


def _render(result: RunResult, **flags: bool) -> str:
    stream = io.StringIO()
    render(result, stream, color=False, quiet=flags.get("quiet", False), statistics=flags.get("statistics", False))
    return stream.getvalue()


def test_escaping_follows_githubs_rules():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    # % is escaped first, so an already-escaped-looking sequence round-trips.
    assert _unescape_property(escape_property("%3A")) == "%3A"


def test_source_finding_is_an_annotation_with_line_and_column():
    finding = Finding("pkg/voc.py", "WN101", "legacy remover on modern weight norm", True, Severity.ERROR, line=12, column=9)
    lines = _render(RunResult(findings=[finding]), quiet=True).splitlines()
    assert lines == [lines[0]]
    level, props, message = parse(lines[0])
    assert level == "error"
    assert props == {"file": "pkg/voc.py", "line": "12", "col": "9", "title": "WN101"}
    assert message.startswith("legacy remover on modern weight norm")


def test_tensor_finding_annotates_the_file_only_and_names_the_tensor():
    finding = Finding("ckpt/g_0050.pt", "WN302", "stored unfolded", True, Severity.WARNING, object="generator.ups.0.weight")
    level, props, message = parse(_render(RunResult(findings=[finding]), quiet=True).splitlines()[0])
    assert level == "warning"
    assert props == {"file": "ckpt/g_0050.pt", "title": "WN302"}
    assert "generator.ups.0.weight" in message


def test_input_errors_are_error_annotations():
    result = RunResult(errors=[InputError("broken.pt", "not a checkpoint: truncated zip")])
    level, props, message = parse(_render(result, quiet=True).splitlines()[0])
    assert level == "error" and props["file"] == "broken.pt"
    assert message == "not a checkpoint: truncated zip"


def test_hostile_text_cannot_inject_commands_or_properties():
    """Newlines, '::', ',' and ':' in paths and messages stay inside their field."""
    nasty_path = "dir,with:odd/na%me\n::error ::x.py"
    nasty_message = "multi\nline\r\n::warning file=evil.py::injected 100%"
    finding = Finding(nasty_path, "WN101", nasty_message, False, Severity.ERROR, line=3, column=1)
    out = _render(RunResult(findings=[finding], errors=[InputError(nasty_path, nasty_message)]), quiet=True)
    lines = out.splitlines()
    assert len(lines) == 2
    for line in lines:
        level, props, message = parse(line)
        # The one sanitiser shows CR/LF escaped (issue 13); GitHub's escaping keeps the rest in its field.
        assert props["file"] == sanitize(nasty_path)
        assert message.startswith(sanitize(nasty_message))


def test_absolute_paths_under_the_workspace_become_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    finding = Finding(str(tmp_path / "src" / "voc.py"), "WN101", "m", False, Severity.ERROR, line=1, column=1)
    _, props, _ = parse(_render(RunResult(findings=[finding]), quiet=True).splitlines()[0])
    assert props["file"] == "src/voc.py"


def test_summary_and_statistics_are_plain_log_lines():
    findings = [
        Finding("a.py", "WN101", "m", True, Severity.ERROR, line=1, column=1),
        Finding("b.py", "WN101", "m", True, Severity.ERROR, line=2, column=1),
    ]
    out = _render(RunResult(findings=findings), statistics=True).splitlines()
    commands = [line for line in out if line.startswith("::")]
    plain = [line for line in out if not line.startswith("::")]
    assert len(commands) == 2
    assert any(re.match(r"^\s*2\tWN101\b", line) for line in plain)
    assert plain[-1] == "wnaudit: 2 findings."
    assert _render(RunResult(findings=findings), quiet=True).count("\n") == 2


def test_fixable_findings_say_how_to_fix_them_once():
    findings = [
        Finding("a.py", "WN101", "m", True, Severity.ERROR, line=1, column=1),
        Finding("b.py", "WN101", "m", False, Severity.ERROR, line=1, column=1),
        Finding("c.py", "WN101", "run wnaudit --fix", True, Severity.ERROR, line=1, column=1),
    ]
    messages = [parse(line)[2] for line in _render(RunResult(findings=findings), quiet=True).splitlines()]
    assert messages == ["m (fixable with wnaudit --fix)", "m", "run wnaudit --fix"]


def test_statistics_most_frequent_code_first_then_by_code():
    findings = [Finding(f"{name}.py", code, "m", False, Severity.ERROR, line=1, column=1) for name, code in
                [("a", "WN104"), ("b", "WN102"), ("c", "WN102"), ("d", "WN101")]]
    rows = [line.split("\t")[:2] for line in _render(RunResult(findings=findings), statistics=True, quiet=True).splitlines()
            if not line.startswith("::")]
    assert [(count.strip(), code) for count, code in rows] == [("2", "WN102"), ("1", "WN101"), ("1", "WN104")]


def test_cli_format_github_on_a_buggy_file(tmp_path: Path):
    write_buggy(tmp_path)
    proc = run_wnaudit("--format", "github", "vocoder.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    annotations = [parse(line) for line in proc.stdout.splitlines() if line.startswith("::")]
    assert [(props["file"], props["line"], props["title"]) for _, props, _ in annotations] == [
        ("vocoder.py", str(WN101_LINE), "WN101")
    ]
    assert annotations[0][0] == "error"


def test_cli_format_github_reports_unreadable_inputs_and_exits_2(tmp_path: Path):
    write_buggy(tmp_path)
    proc = run_wnaudit("--format", "github", "vocoder.py", "missing.pt", cwd=tmp_path)
    assert proc.returncode == 2
    parsed = [parse(line) for line in proc.stdout.splitlines() if line.startswith("::")]
    assert {props["file"] for _, props, _ in parsed} == {"vocoder.py", "missing.pt"}
