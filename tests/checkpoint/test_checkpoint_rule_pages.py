"""The WN3xx rule pages' examples run: the bad one triggers exactly its code, the good one is
clean, and ``--fix`` turns the bad checkpoint into the good one, tensor for tensor."""

from __future__ import annotations

import re
import warnings

import pytest
import torch

from checkpoint_helpers import cli_json
from wnaudit.report.rule_pages import page_sections

CHECKPOINT_CODES = ["WN301", "WN302", "WN303"]


def _save_example(code: str, section: str, directory) -> object:
    source = re.search(r"```python\n(.*?)```", page_sections(code)[section], flags=re.S).group(1)
    assert '"model.pt"' in source
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        exec(compile(source, f"<{code} {section}>", "exec"), {"__name__": "rule_page_example"})  # noqa: S102
    saved = directory / f"{section.replace(' ', '_')}.pt"
    (directory / "model.pt").rename(saved)
    return saved


def _flatten(obj, prefix=""):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _flatten(value, f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), obj


@pytest.mark.parametrize("code", CHECKPOINT_CODES)
def test_rule_page_examples(tmp_path, monkeypatch, capsys, code):
    monkeypatch.chdir(tmp_path)
    bad = _save_example(code, "Example", tmp_path)
    good = _save_example(code, "Use instead", tmp_path)
    spectral = ["--fold-spectral"] if code == "WN303" else []
    status, report = cli_json(capsys, *spectral, bad)
    assert status == 1 and report["findings"] and {f["code"] for f in report["findings"]} == {code}
    status, report = cli_json(capsys, *spectral, good)
    assert (status, report) == (0, {"findings": [], "errors": []})
    status, report = cli_json(capsys, "--fix", *spectral, bad)
    assert status == 0
    fixed = dict(_flatten(torch.load(bad, weights_only=True)))
    expected = dict(_flatten(torch.load(good, weights_only=True)))
    assert list(fixed) == list(expected)
    for key, value in expected.items():
        assert torch.equal(fixed[key], value) if isinstance(value, torch.Tensor) else fixed[key] == value, key
