"""``# noqa`` comments: which codes each line suppresses (the rules stage drops those findings)."""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?P<sep>:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def parse_noqa(lines: list[str]) -> dict[int, frozenset[str]]:
    """Map line number -> suppressed codes (empty set: every code)."""
    out: dict[int, frozenset[str]] = {}
    for number, line in enumerate(lines, start=1):
        if "noqa" not in line.lower():
            continue
        match = _NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        out[number] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else frozenset()
    return out
