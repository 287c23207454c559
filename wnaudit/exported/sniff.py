"""Recognise ``.pt2`` archives by their layout, whatever their name, without torch.

``torch.export.save`` and ``aoti_compile_and_package`` both write a zip with
one top-level folder holding ``archive_format`` (``pt2``); an exported program
adds ``models/NAME.json``, an AOTInductor package ``data/aotinductor/``.
"""

from __future__ import annotations

import enum
import os
import stat
import zipfile
from pathlib import Path

from ..core.catalogue import (
    PT2_AOTINDUCTOR_DIR,
    PT2_ARCHIVE_FORMAT_MEMBER,
    PT2_MODEL_JSON_SUFFIX,
    PT2_MODELS_DIR,
)

_ZIP_MAGIC = b"PK\x03\x04"


class ArchiveKind(enum.Enum):
    EXPORTED_PROGRAM = "torch.export archive"
    AOTI_PACKAGE = "AOTInductor package"


def member_path(name: str) -> str:
    """A member's path below the archive's top-level folder (``m/models/model.json`` -> ``models/model.json``)."""
    return name.partition("/")[2]


def kind_from_names(names: list[str]) -> ArchiveKind | None:
    """What a zip with these member names is, or None if it is no ``.pt2`` archive."""
    inner = [member_path(name) for name in names]
    if PT2_ARCHIVE_FORMAT_MEMBER not in inner:
        return None
    if any(path.startswith(PT2_AOTINDUCTOR_DIR) for path in inner):
        return ArchiveKind.AOTI_PACKAGE
    if any(path.startswith(PT2_MODELS_DIR) and path.endswith(PT2_MODEL_JSON_SUFFIX) for path in inner):
        return ArchiveKind.EXPORTED_PROGRAM
    return None


def looks_like_exported_program(path: Path) -> bool:
    """True for a regular file that is a torch.export archive or an AOTInductor package.

    Cheap for non-zips (four bytes); a zip costs a read of its central directory.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            if handle.read(4) != _ZIP_MAGIC:
                return False
            handle.seek(0)
            with zipfile.ZipFile(handle) as archive:
                return kind_from_names(archive.namelist()) is not None
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, OverflowError):
        return False
