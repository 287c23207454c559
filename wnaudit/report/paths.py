"""Paths as CI consumers want them: relative to the working directory, with ``/``.

GitHub matches annotations and code-scanning results to files by their path
relative to the repository root, which is the working directory of a workflow
step; an absolute path or a ``./`` prefix would not match.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from urllib.parse import quote


def _relative(path: str, base: Path | None = None) -> PurePath | None:
    """``path`` relative to ``base`` (default: cwd), or None if it lies outside."""
    base = (base or Path.cwd()).resolve()
    candidate = Path(path)
    absolute = candidate if candidate.is_absolute() else base / candidate
    try:
        return Path(absolute).resolve().relative_to(base)
    except ValueError:
        return None


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
    return Path(path).resolve().as_uri(), False


def base_uri(base: Path | None = None) -> str:
    """``file:///.../`` URI of ``base`` with the trailing slash SARIF requires."""
    uri = (base or Path.cwd()).resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"
