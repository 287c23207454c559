"""``--diff``: a unified diff that ``git apply`` and ``patch -p1`` apply byte for byte.

The patch is made from the file's bytes, never from decoded text: a latin-1
file gets a latin-1 patch, a BOM and CRLF endings stay what they are, and a
last line without a newline gets the ``\\ No newline at end of file`` marker
both tools require.  Lines are split at ``\\n`` only, as both tools split
them (``bytes.splitlines`` would also split at a lone ``\\r``).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path, PurePosixPath

NO_NEWLINE_MARKER = b"\\ No newline at end of file\n"
_C_ESCAPES = {ord('"'): b'\\"', ord("\\"): b"\\\\", ord("\t"): b"\\t", ord("\n"): b"\\n", ord("\r"): b"\\r"}


def split_lines(data: bytes) -> list[bytes]:
    """``data`` cut after each ``\\n`` (each line keeps its ending; the last may have none)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def patch_name(path: str) -> bytes:
    """The file name written after ``a/`` and ``b/``: relative to the working directory, POSIX style."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, os.getcwd())
    except ValueError:  # another drive on Windows
        relative = absolute
    name = relative if not relative.startswith("..") else absolute
    return os.fsencode(PurePosixPath(*Path(name).parts).as_posix() if os.sep != "/" else name)


def _header(prefix: bytes, name: bytes) -> bytes:
    """A ``---``/``+++`` name, C-quoted as git quotes it when it holds quotes, backslashes or controls."""
    full = prefix + name
    if any(byte < 0x20 or byte in (0x22, 0x5C, 0x7F) for byte in full):
        quoted = b"".join(_C_ESCAPES.get(byte, b"\\%03o" % byte if byte < 0x20 or byte == 0x7F else bytes((byte,))) for byte in full)
        return b'"' + quoted + b'"'
    # git ends a name holding a space with a tab, so that both tools read the whole name.
    return full + (b"\t" if b" " in full else b"")


def unified_patch(old: bytes, new: bytes, path: str) -> bytes:
    """The patch turning ``old`` into ``new`` for the file ``path`` (``b""`` when they are equal)."""
    if old == new:
        return b""
    name = patch_name(path)
    lines = difflib.diff_bytes(
        difflib.unified_diff, split_lines(old), split_lines(new),
        fromfile=_header(b"a/", name), tofile=_header(b"b/", name), lineterm=b"\n",
    )
    out = bytearray()
    for line in lines:
        out += line
        if not line.endswith(b"\n"):
            out += b"\n" + NO_NEWLINE_MARKER
    return bytes(out)
