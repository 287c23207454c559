"""Find and read the ``rules/WNxxx.md`` pages, installed or in a checkout.

The wheel carries them as ``wnaudit/_rules``; an editable install or a source
checkout reads ``rules/`` beside the package.
"""

from __future__ import annotations

import re
from pathlib import Path

_CODE = re.compile(r"^WN\d{3}$")


def rules_directory() -> Path:
    package = Path(__file__).resolve().parent.parent  # wnaudit/
    for candidate in (package / "_rules", package.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the rule pages (rules/WNxxx.md) are not installed with this wnaudit")


def page_codes() -> list[str]:
    return sorted(p.stem for p in rules_directory().glob("WN*.md") if _CODE.match(p.stem))


def read_page(code: str) -> str:
    """The markdown page for ``code``; ``KeyError`` if there is none."""
    code = code.strip().upper()
    if not _CODE.match(code):
        raise KeyError(code)
    path = rules_directory() / f"{code}.md"
    if not path.is_file():
        raise KeyError(code)
    return path.read_text(encoding="utf-8")


def page_title(code: str) -> str:
    """The page's first heading (``WN101: title``); tests hold it to the rule's registered title."""
    for line in read_page(code).splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return code


def page_sections(code: str) -> dict[str, str]:
    """The ``## `` sections of a page by heading (What it does, Why is this bad?, ...)."""
    return parse_sections(read_page(code))


def parse_sections(page: str) -> dict[str, str]:
    """Split page text already read into its ``## `` sections (no second read)."""
    sections: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in page.splitlines():
        if line.startswith("## "):
            if current is not None:
                sections[current] = "\n".join(lines).strip()
            current, lines = line[3:].strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).strip()
    return sections
