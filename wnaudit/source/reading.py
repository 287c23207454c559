"""Read a source file the way Python would: BOM, PEP 263 cookie, any line ending.

Also holds the cheap byte-level prefilter: a file that mentions none of the
catalogue's API leaf names cannot contain a finding, so it is never parsed.
"""

from __future__ import annotations

import bisect
import io
import os
import re
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


def _leaf_names(with_other: bool = False) -> tuple[bytes, ...]:
    names: set[str] = set()
    for spelling in catalogue.SPELLINGS:
        if spelling.kind is catalogue.Kind.OTHER and not with_other:
            continue
        for api in (*spelling.apply_apis, *spelling.remove_apis):
            names.add(api.rpartition(".")[2])
    # "weight_norm" is a substring of "remove_weight_norm": keep only minimal needles.
    minimal = {n for n in names if not any(o != n and o in n for o in names)}
    return tuple(sorted(n.encode("ascii") for n in minimal))


#: Byte strings of which at least one must occur for a file to be parsed at all.
NEEDLES: tuple[bytes, ...] = _leaf_names()


#: The same for a file another file imports: any parametrization it registers can decide a rule.
FACT_NEEDLES: tuple[bytes, ...] = _leaf_names(with_other=True)


def may_have_findings(data: bytes) -> bool:
    """Cheap test run on every file: substring search, no decoding, no parsing."""
    return any(needle in data for needle in NEEDLES)


def _apply_leaf_names() -> tuple[tuple[bytes, bytes], ...]:
    """(apply name, the remover name that contains it) for every applier: ``weight_norm`` / ``remove_weight_norm``."""
    appliers = {api.rpartition(".")[2] for s in catalogue.SPELLINGS for api in s.apply_apis}
    removers = {api.rpartition(".")[2] for s in catalogue.SPELLINGS for api in s.remove_apis}
    out = []
    for name in sorted(appliers):
        containing = sorted(r for r in removers if name in r)
        out.append((name.encode("ascii"), containing[0].encode("ascii") if containing else b""))
    return tuple(out)


_APPLIERS = _apply_leaf_names()


def may_hold_facts(data: bytes) -> bool:
    """Can this file, imported by a linted one, tell the rules anything? It names an API that applies.

    Removals in an imported file decide nothing for the importer; an applier
    name that only ever occurs inside its remover's name (``remove_weight_norm``)
    does not count.
    """
    for name, remover in _APPLIERS:
        count = data.count(name)
        if count and (not remover or count > data.count(remover)):
            return True
    return False


#: A line that starts at column 0 with code (not blank, not a comment).
_TOP_LINE = re.compile(rb"^[^ \t\r\n#\f]", re.M)
_DEFINITION_STARTS = (b"def ", b"def\t", b"class ", b"class\t", b"async ", b"@")


def may_bind_api_at_module_level(data: bytes) -> bool:
    """Could this file bind an API name at module level (``from torch.nn.utils import weight_norm``)?

    True unless every mention of an API name sits inside a top-level ``def``
    or ``class`` (the last line at column 0 before it opens one): names bound
    there are not the module's, so other files cannot import them.
    """
    positions = [m for needle in FACT_NEEDLES for m in _occurrences(data, needle)]
    if not positions:
        return False
    tops = [m.start() for m in _TOP_LINE.finditer(data)]
    for position in positions:
        index = bisect.bisect_right(tops, position) - 1
        if index < 0 or not data.startswith(_DEFINITION_STARTS, tops[index]):
            return True
    return False


def _occurrences(data: bytes, needle: bytes) -> list[int]:
    out = []
    start = data.find(needle)
    while start >= 0:
        out.append(start)
        start = data.find(needle, start + 1)
    return out


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
