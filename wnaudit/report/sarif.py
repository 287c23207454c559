"""``--format sarif``: a SARIF 2.1.0 log that GitHub code scanning accepts.

The rules carry their help from ``rules/WNxxx.md`` (what ``--explain`` prints),
so an alert on GitHub explains itself.  Source findings point at a line and
column; tensor findings (checkpoints, modules) have no line, so they point at
the file and name the tensor as a logical location.  Inputs that could not be
read are tool execution notifications, not results: they are not problems in
the user's code, and the run is marked as not successful.

The log is always one JSON document on stdout; ``--statistics`` and
``--quiet`` do not change it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any, TextIO

from .. import __version__
from ..common.findings import Finding, InputError, RunResult, Severity
from . import sorted_findings, with_fix_hint
from .codes import code_info, code_registry
from .paths import artifact_uri, base_uri, path_bytes
from .sanitize import sanitize

logger = logging.getLogger(__name__)

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "wnaudit"
SRCROOT = "%SRCROOT%"


def _level(severity: Severity | str) -> str:
    return "error" if Severity(severity) == Severity.ERROR else "warning"


def _pascal_name(title: str) -> str:
    """A rule's friendly name as SARIF wants it: one Pascal-case identifier."""
    words = re.findall(r"[A-Za-z0-9]+", title)
    return "".join(word[:1].upper() + word[1:] for word in words) or "Rule"


def _known_codes(findings: list[Finding]) -> list[str]:
    """Every registered code, so a rule's help is there even before it first fires."""
    return sorted(set(code_registry()) | {f.code for f in findings})


def rule_descriptor(code: str) -> dict[str, Any]:
    """The ``reportingDescriptor`` for one code, with help from its rules/ page."""
    from .rule_pages import parse_sections, read_page

    info = code_info(code)
    title = info.title if info is not None else code
    descriptor: dict[str, Any] = {
        "id": code,
        "name": _pascal_name(title),
        "shortDescription": {"text": title},
        "defaultConfiguration": {"level": _level(info.severity if info is not None else Severity.WARNING)},
        "properties": {"tags": ["weight-norm", _category(code)]},
    }
    try:
        page = read_page(code)
        what = parse_sections(page).get("What it does", "")
    except (KeyError, FileNotFoundError):
        logger.debug("no rules/ page for %s", code)
        return descriptor
    if what:
        descriptor["fullDescription"] = {"text": what}
    descriptor["help"] = {"text": page, "markdown": page}
    return descriptor


def _category(code: str) -> str:
    return {"1": "source", "2": "module", "3": "checkpoint"}.get(code[2:3], "other")


def _artifact_location(path: str) -> dict[str, Any]:
    uri, relative = artifact_uri(path)
    location: dict[str, Any] = {"uri": uri}
    if relative:
        location["uriBaseId"] = SRCROOT
    return location


def _result(item: Finding, rule_index: dict[str, int]) -> dict[str, Any]:
    artifact = _artifact_location(item.path)
    physical: dict[str, Any] = {"artifactLocation": artifact}
    location: dict[str, Any] = {"physicalLocation": physical}
    if item.line is not None and item.cell is None:
        physical["region"] = {"startLine": item.line, "startColumn": item.column or 1}
    result: dict[str, Any] = {
        "ruleId": item.code,
        "ruleIndex": rule_index[item.code],
        "level": _level(item.severity),
        "message": {"text": sanitize(with_fix_hint(item, _where(item) + item.message))},
        "locations": [location],
        "properties": {"fixable": item.fixable},
    }
    if item.object is not None:
        # No line in a tensor file: the tensor's name is the location, and it
        # also keeps the alert's identity stable across runs.
        location["logicalLocations"] = [
            {"name": sanitize(item.object.rpartition(".")[2]), "fullyQualifiedName": sanitize(item.object), "kind": "member"}
        ]
        identity = "\0".join((item.code, artifact["uri"], item.object))
        result["partialFingerprints"] = {"wnauditObject/v1": hashlib.sha256(path_bytes(identity)).hexdigest()[:32]}
    return result


def _where(item: Finding) -> str:
    """A notebook cell is not a region of the file: it is named in the message."""
    return f"cell {item.cell}, line {item.line}: " if item.cell is not None else ""


def _notification(error: InputError) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact_location(error.path)}
    if error.position is not None:  # a syntax error has a place in the file
        physical["region"] = {"startLine": error.position[0], "startColumn": error.position[1]}
    return {
        "level": "error",
        "message": {"text": sanitize(f"{error.path}: {error.message}")},
        "locations": [{"physicalLocation": physical}],
    }


def sarif_log(result: RunResult) -> dict[str, Any]:
    """The whole SARIF log for one wnaudit run, as a JSON-ready dict."""
    findings = sorted_findings(result)
    codes = _known_codes(findings)
    rule_index = {code: index for index, code in enumerate(codes)}
    invocation: dict[str, Any] = {"executionSuccessful": not result.errors}
    if result.errors:
        invocation["toolExecutionNotifications"] = [_notification(e) for e in result.errors]
    run = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [rule_descriptor(code) for code in codes],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": base_uri()}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(item, rule_index) for item in findings],
    }
    return {"$schema": SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def render(result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False, **_: object) -> None:
    json.dump(sarif_log(result), stream, indent=2)
    stream.write("\n")
