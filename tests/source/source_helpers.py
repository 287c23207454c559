"""Builders shared by the source-lint tests."""

from __future__ import annotations

from pathlib import Path


def write_package(root: Path, name: str, modules: dict[str, str]) -> Path:
    """Create the package ``root/name`` (with an empty ``__init__.py``) holding ``modules`` (file name -> text)."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for filename, text in modules.items():
        (package / filename).write_text(text)
    return package
