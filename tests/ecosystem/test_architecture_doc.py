"""docs/architecture.md describes the real tree: every file it names exists, every folder has its paragraph."""

from __future__ import annotations

import re

from ecosystem_helpers import REPO_ROOT

DOC = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = REPO_ROOT / "wnaudit"


def _folders() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file() and p.name not in {"testing"})


def _paragraphs() -> dict[str, str]:
    """Folder -> its paragraph's parenthesised file list (``**`wnaudit/core/`** (a.py, b.py) ...``)."""
    return dict(re.findall(r"\*\*`wnaudit/(\w+)/`\*\* \(([^)]*)\)", DOC))


def test_every_package_folder_has_a_paragraph():
    described = set(_paragraphs())
    assert [folder for folder in _folders() if folder not in described and f"`wnaudit/{folder}/`" not in DOC] == []


def test_the_files_listed_per_folder_exist():
    for folder, listed in _paragraphs().items():
        for name in (item.strip() for item in listed.split(",")):
            assert (PACKAGE / folder / name.rstrip("/")).exists(), f"docs/architecture.md names wnaudit/{folder}/{name}"


def test_every_path_the_doc_names_exists():
    paths = set(re.findall(r"(?<![\w.])((?:wnaudit|source|checkpoint|module|core|common|report|cli|rules|tests|docs)/[\w/.<>-]*\w)", DOC))
    missing = []
    for path in sorted(paths):
        if "<" in path or "xx" in path:
            continue  # placeholders: a new module's or page's name
        candidates = [REPO_ROOT / path, PACKAGE / path]
        if not any(c.exists() or c.with_suffix(".py").exists() for c in candidates):
            missing.append(path)
    assert missing == []


def test_it_is_linked_from_the_index():
    assert "(architecture.md)" in (REPO_ROOT / "docs" / "index.md").read_text(encoding="utf-8")
