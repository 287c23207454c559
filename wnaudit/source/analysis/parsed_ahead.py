"""Whole-file syntax trees another reader parsed before the analysis asked: handed to the analysis once.

WN110's configuration-flag reader (``serving/flags.py``) parses a file that
holds a flag's word to see what the file sets the flag to.  The rules often
ask for the same file's analysis a little later (what a name there stands
for), and the analysis would parse the same text again.  So the flag reader
offers its tree here, by the text it parsed, and the analysis's
``parse_pieces`` takes it instead of parsing: the file is parsed once.

``ast.parse`` is a pure function of the text, so a tree handed over is the
one the analysis would build (the analysis reads a whole-file tree as one
piece at line offset 0, as it reads a small file).  A tree is taken at most
once (the analysis's readers may change it), and only the text it was parsed
from takes it (compared whole, not by hash alone).  Trees wait within a
budget of source characters, oldest dropped first: one never asked for costs
memory until the budget pushes it out, and one dropped is parsed again.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator

from ..reading import SourceError, decode

#: Source characters whose trees wait at most: about 35 bytes of tree per character (measured on this repository),
#: so about 70 MiB, on top of ``serving/kept_trees.KEPT_CHARS``.  A tree pushed out is parsed again when asked.
WAITING_CHARS = 1 << 21
#: A file bigger than this is not offered (the analysis parses a big file in pieces to bound its memory).
LARGEST_OFFERED = 1 << 17

_waiting: dict[int, tuple[str, ast.Module]] = {}
_chars = 0


def offer(text: str, tree: ast.Module) -> None:
    """Let the analysis of ``text`` take ``tree`` (``ast.parse(text)``, which the caller has only read)."""
    global _chars
    if len(text) > LARGEST_OFFERED or hash(text) in _waiting:
        return
    _waiting[hash(text)] = (text, tree)
    _chars += len(text)
    while _chars > WAITING_CHARS:
        oldest = next(iter(_waiting))
        _chars -= len(_waiting.pop(oldest)[0])


def take(text: str) -> ast.Module | None:
    """The tree offered for exactly ``text``, handed over once (None: parse it)."""
    global _chars
    if not _waiting:
        return None
    found = _waiting.get(hash(text))
    if found is None or found[0] != text:
        return None
    del _waiting[hash(text)]
    _chars -= len(text)
    return found[1]


def waits_for(data: bytes) -> bool:
    """Whether a tree of these source bytes is waiting (a worker asked to parse them would parse them again)."""
    if not _waiting:
        return False
    try:
        text = decode(data).text
    except SourceError:
        return False
    found = _waiting.get(hash(text))
    return found is not None and found[0] == text


def forget() -> None:
    """Drop every waiting tree (a run's end: what it did not take is not kept for the next one)."""
    global _chars
    _waiting.clear()
    _chars = 0


@contextlib.contextmanager
def for_one_run() -> Iterator[None]:
    """Around a run: the trees it offered and did not take are dropped at its end (an editor lints for hours)."""
    try:
        yield
    finally:
        forget()
