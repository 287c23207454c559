"""Read a source file the way Python would: BOM, PEP 263 cookie, any line ending.

Also holds the cheap byte-level prefilter: a file that mentions none of the
catalogue's API leaf names cannot contain a finding, so it is never parsed.
"""

from __future__ import annotations

import io
import os
import tokenize
from dataclasses import dataclass

from ..common.config import DEFAULT_MAX_SOURCE_BYTES
from ..common.files import FileRefused, read_regular_file
from ..core import catalogue


class SourceError(ValueError):
    """The file cannot be read as Python source; the message is one line."""


#: The [tool.wnaudit] key that sets the size cap, named in the refusal.
MAX_BYTES_SETTING = "max-source-bytes"


def read_source_bytes(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> bytes:
    """A source file's bytes; SourceError for a FIFO, device, socket or a file above ``max_bytes``.

    Never blocks (a FIFO is refused before it is opened) and never reads
    more than ``max_bytes + 1`` bytes.  Other failures raise ``OSError``.
    """
    try:
        return read_regular_file(path, max_bytes, setting=MAX_BYTES_SETTING)
    except FileRefused as error:
        raise SourceError(str(error)) from error


def _leaf_names() -> tuple[bytes, ...]:
    names: set[str] = set()
    for spelling in catalogue.SPELLINGS:
        if spelling.kind is catalogue.Kind.OTHER:
            continue
        for api in (*spelling.apply_apis, *spelling.remove_apis):
            names.add(api.rpartition(".")[2])
    # "weight_norm" is a substring of "remove_weight_norm": keep only minimal needles.
    minimal = {n for n in names if not any(o != n and o in n for o in names)}
    return tuple(sorted(n.encode("ascii") for n in minimal))


#: Byte strings of which at least one must occur for a file to be parsed at all.
NEEDLES: tuple[bytes, ...] = _leaf_names()


def may_have_findings(data: bytes) -> bool:
    """Cheap test run on every file: substring search, no decoding, no parsing."""
    return any(needle in data for needle in NEEDLES)


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str


def decode(data: bytes) -> DecodedSource:
    """Decode source bytes like the interpreter does; SourceError on failure.

    The BOM is dropped from ``text`` (``encoding`` is then ``utf-8-sig``).
    """
    if b"\x00" in data:
        raise SourceError("binary file, not Python source (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"bad encoding declaration: {error.msg if hasattr(error, 'msg') else error}") from error
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise SourceError(f"cannot decode as {encoding}: {error.reason if hasattr(error, 'reason') else error}") from error
    if text.startswith("\ufeff"):
        text = text[1:]
    return DecodedSource(text=text, encoding=encoding)
