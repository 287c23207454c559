"""Paths as CI consumers want them: relative to the working directory, with ``/``.

GitHub matches annotations and code-scanning results to files by their path
relative to the repository root, which is the working directory of a workflow
step; an absolute path or a ``./`` prefix would not match.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from urllib.parse import quote_from_bytes


def path_bytes(text: str) -> bytes:
    """The bytes a path names on disk: a name that was not valid UTF-8 (``os.fsdecode``
    gives ``\\udcxx``) gets its original bytes back; any other lone surrogate is kept
    as its code point's bytes, so percent-encoding it never fails."""
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass")


def quote(text: str, safe: str = "/") -> str:
    """Percent-encode a path for a URI, whatever characters its name holds."""
    return quote_from_bytes(path_bytes(text), safe=safe)


def _relative(path: str, base: Path | None = None) -> PurePath | None:
    """``path`` relative to ``base`` (default: cwd), or None if it lies outside."""
    base = (base or Path.cwd()).resolve()
    candidate = Path(path)
    absolute = candidate if candidate.is_absolute() else base / candidate
    try:
        return _resolved(absolute).relative_to(base)
    except ValueError:
        return None


def _resolved(path: Path) -> Path:
    """``path.resolve()``, or its normalised form when the OS cannot take the name
    (a NUL, or a lone surrogate that no file name encodes to)."""
    try:
        return path.resolve()
    except (ValueError, OSError, UnicodeError):
        return Path(os.path.normpath(path))


def display_path(path: str, base: Path | None = None) -> str:
    """Relative POSIX path when the file is under ``base``; the path as given otherwise.

    Labels that are not file paths (``<Generator>`` from the module inspector)
    come back unchanged.
    """
    if path.startswith("<"):
        return path
    relative = _relative(path, base)
    if relative is None:
        return Path(path).as_posix()
    return relative.as_posix()


def given_relative(path: str, base: Path | None = None) -> str:
    """An absolute path under ``base`` (default: cwd) made relative, links not followed (a snapshot
    symlink keeps its name); a relative path, a path elsewhere or a label comes back as given."""
    if path.startswith("<") or not os.path.isabs(path):
        return path
    root = os.path.abspath(base or os.getcwd())
    normal = os.path.normpath(path)
    if normal.startswith(root.rstrip(os.sep) + os.sep):
        return Path(os.path.relpath(normal, root)).as_posix()
    return path


def artifact_uri(path: str, base: Path | None = None) -> tuple[str, bool]:
    """A SARIF artifact URI for ``path``: (uri, is_relative_to_base).

    Relative URIs are percent-encoded POSIX paths meant to be resolved against
    ``%SRCROOT%``; a file outside ``base`` gets an absolute ``file://`` URI.
    """
    if path.startswith("<"):
        return quote(path, safe=""), True
    relative = _relative(path, base)
    if relative is not None:
        return quote(relative.as_posix(), safe="/"), True
    absolute = _resolved(Path(path)).as_posix()
    return "file://" + quote(absolute if absolute.startswith("/") else "/" + absolute), False


def base_uri(base: Path | None = None) -> str:
    """``file:///.../`` URI of ``base`` with the trailing slash SARIF requires."""
    uri = (base or Path.cwd()).resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"
