"""Reading and forging the one cache's files in tests (``wnaudit.common.cache``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wnaudit.common.cache import Kind, decode_file, encode_file


def files_of(cache_dir: Path, kind: str) -> list[Path]:
    """The store files of one kind (``syntax``, ``content``, ``summary``, ``serving``, ``derived``)."""
    return sorted(cache_dir.glob(f"*/{kind}/*.json"))


def _kind(path: Path) -> Kind:
    return Kind(path.parent.name, sharded=len(path.stem) == 2, check=lambda value: value)


def entries_of(path: Path) -> dict[str, Any]:
    """The entries of a store file (``ValueError`` when it is not an intact one)."""
    return decode_file(_kind(path), path.read_bytes())


def forge(path: Path, entries: dict[str, Any]) -> None:
    """Write ``entries`` as a well-formed store file: only the values' checks stand between them and belief."""
    path.write_bytes(encode_file(_kind(path), entries))
