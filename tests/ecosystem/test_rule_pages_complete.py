"""Every rule code has a page, every page has the five sections, and the WN2xx
examples do what they say (the WN1xx and WN3xx examples are run by the source
and checkpoint test suites, next to the rules they exercise)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from wnaudit.report.codes import code_registry
from wnaudit.report.rule_pages import page_codes, page_sections, read_page

SECTIONS = ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety"]


def _python_block(section: str) -> str:
    match = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert match, "the section has no ```python block"
    return match.group(1)


def test_every_registered_code_has_a_page_and_every_page_a_code():
    assert set(code_registry()) == set(page_codes())


def test_the_registry_is_complete_in_a_fresh_interpreter():
    """The registry gathers every code itself: nothing has to be imported first to register one."""
    script = "from wnaudit.report.codes import code_registry; print(' '.join(code_registry()))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=_env())
    assert done.stdout.split() == page_codes()


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}


@pytest.mark.parametrize("code", page_codes())
def test_page_has_the_five_sections_in_order(code: str):
    page = read_page(code)
    title = page.splitlines()[0]
    assert title.startswith("# ") and code in title, title
    headings = [line[3:].strip() for line in page.splitlines() if line.startswith("## ")]
    assert headings == SECTIONS
    assert all(body.strip() for body in page_sections(code).values())


#: Seen at run time by wnaudit.watch: their examples are run under a watch, not audited at rest.
RUNTIME_CODES = ["WN206", "WN207"]
MODULE_CODES = [code for code in page_codes() if code.startswith("WN2") and code not in RUNTIME_CODES]


def _build(source: str) -> object:
    return _run(source)["model"]


def _run(source: str) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "rule_page_example"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the deprecated legacy weight_norm
        exec(compile(source, "<rule page>", "exec"), namespace)  # noqa: S102 - our own docs
    assert "model" in namespace, "a WN2xx example builds a module named `model`"
    return namespace


def test_module_codes_all_have_pages():
    assert MODULE_CODES == ["WN201", "WN202", "WN203", "WN204", "WN205"]


@pytest.mark.parametrize("code", MODULE_CODES)
def test_module_example_triggers_exactly_its_code(code: str):
    from wnaudit import audit_module

    findings = audit_module(_build(_python_block(page_sections(code)["Example"])))
    assert findings, f"the {code} example is clean"
    assert {f.code for f in findings} == {code}


@pytest.mark.parametrize("code", MODULE_CODES)
def test_module_use_instead_is_clean(code: str):
    from wnaudit import audit_module

    good = _python_block(page_sections(code)["Use instead"])
    assert "wnaudit." in good, "the good example shows the wnaudit call that fixes it"
    assert audit_module(_build(good)) == []


@pytest.mark.parametrize("code", MODULE_CODES)
def test_use_instead_is_the_example_plus_the_fold(code: str):
    """The two examples differ only by the wnaudit import and the fold call."""
    sections = page_sections(code)
    bad = _python_block(sections["Example"]).splitlines()
    good = _python_block(sections["Use instead"]).splitlines()
    added = [line for line in good if line not in bad]
    assert all(line == "" or "wnaudit" in line for line in added), added
    removed = [line for line in bad if line not in good]
    # WN205's fix replaces torch's remover; every other fix only adds the fold.
    assert all("parametrize" in line for line in removed) if code == "WN205" else removed == [], removed


def _watched_codes(source: str) -> set[str]:
    from wnaudit import watch

    with watch() as watched:
        _run(source)
    return {f.code for f in watched.findings}


@pytest.mark.parametrize("code", RUNTIME_CODES)
def test_runtime_example_shows_exactly_its_code_under_a_watch(code: str):
    assert _watched_codes(_python_block(page_sections(code)["Example"])) == {code}


@pytest.mark.parametrize("code", RUNTIME_CODES)
def test_runtime_use_instead_is_clean_under_a_watch(code: str):
    assert _watched_codes(_python_block(page_sections(code)["Use instead"])) == set()


def test_the_wn206_fix_is_the_example_plus_the_fold():
    sections = page_sections("WN206")
    bad = _python_block(sections["Example"]).splitlines()
    good = _python_block(sections["Use instead"]).splitlines()
    assert [line for line in bad if line not in good] == []
    assert all(line == "" or "wnaudit" in line for line in good if line not in bad)
