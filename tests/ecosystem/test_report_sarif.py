"""``--format sarif``: valid SARIF 2.1.0 (checked against the vendored OASIS schema)
that also meets what GitHub code scanning needs to ingest it."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import re

import jsonschema
import pytest

from ecosystem_helpers import DATA, WN101_LINE, run_wnaudit, write_buggy
from wnaudit.report.codes import code_registry
from wnaudit.common.findings import Finding, InputError, RunResult, Severity
from wnaudit.report.sarif import render, sarif_log
from wnaudit.report.rule_pages import read_page

SCHEMA_PATH = DATA / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    raw = SCHEMA_PATH.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "the vendored SARIF schema was modified"
    schema = json.loads(raw)
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def assert_valid_sarif(log: dict, validator: jsonschema.Draft4Validator) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    assert_uri_formats(log)
    assert_github_can_ingest(log)


#: RFC 3986 characters, with '%' only as the start of a percent-encoding. The
#: installed jsonschema does not check the "uri"/"uri-reference" formats, so
#: the schema validation above leaves this to us.
_URI_REFERENCE = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")


def assert_uri_formats(node: object, key: str = "") -> None:
    """Every property the schema marks as a URI is a valid URI reference."""
    if isinstance(node, dict):
        for name, value in node.items():
            assert_uri_formats(value, name)
    elif isinstance(node, list):
        for value in node:
            assert_uri_formats(value, key)
    elif key in ("uri", "informationUri", "$schema", "helpUri", "downloadUri"):
        assert isinstance(node, str) and _URI_REFERENCE.fullmatch(node), f"{key}: not a URI reference: {node!r}"
        if key in ("informationUri", "$schema"):
            assert urlsplit(node).scheme in ("http", "https"), node


def assert_github_can_ingest(log: dict) -> None:
    """What code scanning requires beyond the schema (its documented SARIF subset)."""
    assert log["version"] == "2.1.0"
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert driver["name"] and driver["version"]
        ids = [rule["id"] for rule in driver["rules"]]
        assert len(ids) == len(set(ids)), "rule ids must be unique"
        for rule in driver["rules"]:
            assert rule["shortDescription"]["text"]
            assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        for result in run["results"]:
            assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
            assert result["level"] in ("error", "warning", "note")
            assert result["message"]["text"]
            # "locationFromSarifResult: expected at least one location" otherwise.
            assert result["locations"], "code scanning rejects results without a location"
            artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
            uri = artifact["uri"]
            if artifact.get("uriBaseId") == "%SRCROOT%":
                assert not urlsplit(uri).scheme and not uri.startswith(("/", "./")), uri
                assert "%SRCROOT%" in run["originalUriBaseIds"]
            else:
                assert urlsplit(uri).scheme == "file", uri
            region = result["locations"][0]["physicalLocation"].get("region")
            if region is not None:
                assert region["startLine"] >= 1 and region.get("startColumn", 1) >= 1


def _log(result: RunResult) -> dict:
    stream = io.StringIO()
    render(result, stream, color=False, quiet=False, statistics=True)
    return json.loads(stream.getvalue())  # one JSON document, even with --statistics


MIXED = RunResult(
    findings=[
        Finding("pkg/voc.py", "WN101", "legacy remover on modern weight norm", True, Severity.ERROR, line=11, column=9),
        Finding("ckpt/g 00500000.pt", "WN302", "legacy weight-norm keys stored", True, Severity.WARNING, object="generator.ups.0.weight"),
        Finding("ckpt/g 00500000.pt", "WN302", "legacy weight-norm keys stored", True, Severity.WARNING, object="generator.ups.1.weight"),
        Finding("models/vocöder 100%#1.safetensors", "WN301", "modern keys stored", True, Severity.WARNING, object="conv_post.weight"),
    ],
    errors=[InputError("broken.pt", "not a checkpoint: truncated zip")],
)


def test_vendored_schema_rejects_what_it_should(validator):
    """The validator is live: a result without a message and a bad level are caught."""
    log = _log(MIXED)
    del log["runs"][0]["results"][0]["message"]
    log["runs"][0]["results"][1]["level"] = "fatal"
    assert len(list(validator.iter_errors(log))) >= 2


def test_mixed_run_is_valid_sarif(validator):
    assert_valid_sarif(_log(MIXED), validator)


def test_empty_run_is_valid_sarif(validator):
    log = _log(RunResult())
    assert_valid_sarif(log, validator)
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def _results(code: str) -> list[dict]:
    return [r for r in _log(MIXED)["runs"][0]["results"] if r["ruleId"] == code]


def test_source_result_points_at_line_and_column():
    [result] = _results("WN101")
    assert result["ruleId"] == "WN101" and result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/voc.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 11, "startColumn": 9}


def test_tensor_result_points_at_file_and_names_the_tensor():
    results = _results("WN302")
    location = results[0]["locations"][0]
    assert location["physicalLocation"] == {"artifactLocation": {"uri": "ckpt/g%2000500000.pt", "uriBaseId": "%SRCROOT%"}}
    assert unquote(location["physicalLocation"]["artifactLocation"]["uri"]) == "ckpt/g 00500000.pt"
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "generator.ups.0.weight"
    # Two tensors of one file stay two distinct alerts across runs.
    fingerprints = [r["partialFingerprints"] for r in results]
    assert fingerprints[0] != fingerprints[1]


def test_input_errors_are_tool_notifications_not_results():
    run = _log(MIXED)["runs"][0]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "broken.pt" in note["message"]["text"]
    assert all(r["ruleId"].startswith("WN") for r in run["results"])


def test_rules_carry_help_from_the_rule_pages():
    rules = {rule["id"]: rule for rule in _log(MIXED)["runs"][0]["tool"]["driver"]["rules"]}
    assert set(code_registry()) <= set(rules)
    for code in ("WN201", "WN205"):
        assert rules[code]["help"]["markdown"] == read_page(code)
        assert rules[code]["fullDescription"]["text"].startswith("Finds ")
        assert rules[code]["name"].isidentifier() and rules[code]["name"][0].isupper()
    assert rules["WN205"]["defaultConfiguration"]["level"] == "error"
    assert rules["WN201"]["defaultConfiguration"]["level"] == "warning"


def test_paths_outside_the_workspace_get_absolute_file_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, validator):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    outside = tmp_path / "elsewhere" / "m.py"
    log = sarif_log(RunResult(findings=[Finding(str(outside), "WN101", "m", False, Severity.ERROR, line=1, column=1)]))
    assert_valid_sarif(log, validator)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": outside.resolve().as_uri()}
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == workspace.resolve().as_uri() + "/"


def test_cli_format_sarif_on_a_buggy_file(tmp_path: Path, validator):
    write_buggy(tmp_path, "voc oder.py")
    proc = run_wnaudit("--format", "sarif", "--statistics", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert_valid_sarif(log, validator)
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "WN101"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "voc%20oder.py"
    assert location["region"]["startLine"] == WN101_LINE


def test_cli_format_sarif_with_an_unreadable_input(tmp_path: Path, validator):
    (tmp_path / "broken.pt").write_bytes(b"PK\x03\x04 not really a zip")
    proc = run_wnaudit("--format", "sarif", "broken.pt", cwd=tmp_path)
    assert proc.returncode == 2
    log = json.loads(proc.stdout)
    assert_valid_sarif(log, validator)
    [note] = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "broken.pt" in note["message"]["text"]


def test_cli_format_sarif_on_a_checkpoint(tmp_path: Path, validator):
    import warnings

    import torch

    from wnaudit.testing.vocoder import build_vocoder, expected_weight_norms

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.save({"generator": build_vocoder(weight_norm="legacy").state_dict()}, tmp_path / "g_00500000")
    proc = run_wnaudit("--format", "sarif", "g_00500000", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert_valid_sarif(log, validator)
    results = log["runs"][0]["results"]
    assert len(results) == expected_weight_norms()
    assert {r["ruleId"] for r in results} == {"WN302"}
    for result in results:
        [location] = result["locations"]
        assert location["physicalLocation"] == {"artifactLocation": {"uri": "g_00500000", "uriBaseId": "%SRCROOT%"}}
        assert location["logicalLocations"][0]["fullyQualifiedName"].startswith("generator.")
    assert len({json.dumps(r["partialFingerprints"]) for r in results}) == len(results)


@pytest.mark.parametrize("output_format", ["sarif", "github"])
def test_ci_formats_work_without_torch(tmp_path: Path, output_format: str):
    """The CI formats run where only `pip install wnaudit` was done: torch is blocked here."""
    import subprocess
    import sys

    write_buggy(tmp_path)
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # any import of torch now raises ImportError\n"
        "from wnaudit.cli import run\n"
        f"status = run(['--format', {output_format!r}, 'vocoder.py'])\n"
        "assert 'torch' not in sys.modules or sys.modules['torch'] is None\n"
        "sys.exit(status)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "WN101" in proc.stdout
    if output_format == "sarif":
        assert json.loads(proc.stdout)["runs"][0]["results"][0]["ruleId"] == "WN101"


def test_result_message_says_how_to_fix_a_fixable_finding():
    findings = [
        Finding("a.py", "WN101", "m", True, Severity.ERROR, line=1, column=1),
        Finding("b.py", "WN101", "m", False, Severity.ERROR, line=1, column=1),
    ]
    texts = [r["message"]["text"] for r in _log(RunResult(findings=findings))["runs"][0]["results"]]
    assert texts == ["m (fixable with wnaudit --fix)", "m"]
