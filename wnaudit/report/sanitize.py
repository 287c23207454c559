"""The one output sanitiser: what the input holds is shown, never obeyed by the terminal.

File names and tensor keys come from repositories and checkpoints wnaudit did
not write.  Every human-readable line (text formats, GitHub annotations, the
summary, ``wnaudit: error:`` lines, SARIF message texts) passes its untrusted
parts through :func:`sanitize`, so a name can neither move the cursor, change
the window title, nor forge a line of its own (``\\n``, ``\\r``), and a lone
surrogate (a key decoded from ``\\ud800`` in JSON, a file name that is not
valid UTF-8) cannot crash the encoder.  Escaped, not stripped: the line still
names the real file.
"""

from __future__ import annotations

import re

#: Characters that are never written raw: C0 controls (tab included: it can
#: hide text in a column), DEL, C1 controls (``\x9b`` is a one-byte CSI),
#: lone surrogates, the line/paragraph separators, and the bidirectional
#: overrides and isolates that reorder what a reader sees ("trojan source").
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def sanitize(text: str) -> str:
    """``text`` with every unsafe character shown as a Python-style escape (``\\x1b``, ``\\n``, ``\\udc80``).

    A backslash is left as it is: the escapes are for a human reader, and a
    Windows path must stay readable.  The result encodes in UTF-8 and holds
    no line break, so one finding stays one line.
    """
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE.sub(_escape, text)


def is_safe_line(text: str) -> bool:
    """True when ``text`` holds nothing :func:`sanitize` would escape (for tests and assertions)."""
    return _UNSAFE.search(text) is None


def encodable(text: str, encoding: str | None) -> str:
    """``text`` as it can be written to a stream in ``encoding`` (characters it lacks shown as escapes)."""
    if not encoding:
        return text
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, errors="backslashreplace").decode(encoding, errors="replace")
    except LookupError:  # a stream that names an encoding Python does not know
        return text.encode("ascii", errors="backslashreplace").decode("ascii")
    return text
