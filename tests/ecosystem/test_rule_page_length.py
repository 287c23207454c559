"""Rule pages in ruff's length (issue 37, item 8): "What it does" says it in a few sentences, details go under
their own headings, so ``wnaudit --explain`` and ``--output-format full`` open with something a person reads."""

from __future__ import annotations

import pytest

from wnaudit.report.rule_pages import page_codes, page_sections

#: The lead of "What it does" (before its first ``###`` heading), and its first paragraph, which ``full`` prints.
LEAD_LIMIT, FIRST_PARAGRAPH_LIMIT = 1600, 700


@pytest.mark.parametrize("code", page_codes())
def test_what_it_does_leads_with_a_few_sentences(code: str):
    what = page_sections(code)["What it does"]
    lead = what.split("\n### ", 1)[0]
    assert len(lead) <= LEAD_LIMIT, f"{code}: {len(lead)} characters before the first ### heading"
    assert len(lead.split("\n\n", 1)[0]) <= FIRST_PARAGRAPH_LIMIT, f"{code}: the first paragraph is too long"
