"""The package's comments and docstrings say why, never "see the tracker": no issue numbers in ``wnaudit/``."""

from __future__ import annotations

import re

from ecosystem_helpers import REPO_ROOT

#: "issue 21", "Issues 22", "(#35)": a tracker reference the next reader cannot follow from the code.
TRACKER_REFERENCE = re.compile(r"\b[Ii]ssues? \d+\b|\(#\d+\b")


def test_no_comment_cites_a_tracker_issue_instead_of_saying_why():
    cited = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"
        for path in sorted((REPO_ROOT / "wnaudit").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if TRACKER_REFERENCE.search(line)
    ]
    assert cited == []
