"""docs/architecture.md describes the real tree: every module is named, every file it names exists, every folder has its paragraph."""

from __future__ import annotations

import inspect
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
    paths = set(re.findall(r"(?<![\w.])((?:wnaudit|source|checkpoint|exported|module|runtime|probe|bench|core|common|report|cli|rules|tests|docs)/[\w/.<>-]*\w)", DOC))
    missing = []
    for path in sorted(paths):
        if "<" in path or "xx" in path:
            continue  # placeholders: a new module's or page's name
        candidates = [REPO_ROOT / path, PACKAGE / path]
        if not any(c.exists() or c.with_suffix(".py").exists() for c in candidates):
            missing.append(path)
    assert missing == []


def _module_index() -> dict[str, str]:
    """"Every module": ``wnaudit/``-relative path -> its line, from the ``### `wnaudit/x/` `` headings and their items."""
    section = DOC.split("\n## Every module\n", 1)[1].split("\n## ", 1)[0]
    folder, named = None, {}
    for line in section.splitlines():
        if heading := re.fullmatch(r"### `wnaudit/((?:[\w]+/)*)`", line):
            folder = heading.group(1)
        elif item := re.match(r"- `([\w.]+\.py)`: (.+)", line):
            assert folder is not None, f"docs/architecture.md: {line!r} comes before any folder heading"
            named[folder + item.group(1)] = item.group(2)
    return named


def _modules() -> set[str]:
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts}


def test_every_module_has_its_line():
    assert sorted(_modules() - set(_module_index())) == [], "add a line for each to docs/architecture.md, 'Every module'"


def test_every_module_line_names_a_module():
    assert sorted(set(_module_index()) - _modules()) == []


def test_the_output_format_recipe_gives_the_renderer_keywords():
    """"How to add an output format" states the signature the CLI calls every renderer with."""
    from wnaudit.report import Renderer

    parameters = inspect.signature(Renderer.__call__).parameters
    keywords = [name for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    recipe = DOC.split("\n## How to add an output format\n", 1)[1].split("\n## ", 1)[0]
    assert f"render(result, stream, *, {', '.join(keywords)})" in recipe


def test_it_is_linked_from_the_index():
    assert "(architecture.md)" in (REPO_ROOT / "docs" / "index.md").read_text(encoding="utf-8")
