"""Jupyter notebooks (``.ipynb``) seen as one Python module, and written back cell by cell.

Model porting often happens in notebooks.  The rules run on a *view* of the
notebook: its code cells in order, each introduced by a marker comment, so a
finding's line maps back to a cell and a line within it, and the fixer's output
splits back into cells.  IPython syntax is not Python: a cell that starts with
a cell magic (``%%time``, ``%%bash``) is left out of the view; in other cells a
line magic or shell escape (``%pip``, ``!ls``, ``x = !ls``, ``obj?``) becomes a
``pass`` placeholder that remembers the original line, so line numbers hold and
the line comes back untouched.  Cells that are valid Python as they stand are
never transformed.

Writing back changes only the ``source`` of code cells the fix touched;
outputs, metadata and every other cell stay as they were, and the JSON is
written in the notebook's own layout (indent, key order, ASCII escaping, line endings) when
that layout can be recognised, else as nbformat writes it.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..common.config import DEFAULT_MAX_SOURCE_BYTES
from ..common.files import FileRefused, read_regular_file
from ..common.findings import Finding
from .reading import SourceError

SUFFIX = ".ipynb"

#: Introduces each code cell in the view; never a line of the user's code.
_MARKER = "# wnaudit: notebook cell {number}"
_MARKER_LINE = re.compile(r"^# wnaudit: notebook cell (\d+)$")
#: Stands for one IPython-only line; the index names the original line.
_PLACEHOLDER = "pass  # wnaudit: ipython line {index}"
_PLACEHOLDER_LINE = re.compile(r"^[ \t]*pass  # wnaudit: ipython line (\d+)$")

#: Lines IPython rewrites before Python sees them: magics, shell escapes, help.
#: (Comments are Python whatever they end with; only cells that fail to parse are searched.)
_IPYTHON_LINE = re.compile(r"^(?![ \t]*#)(?:[ \t]*(?:[%!?]|[\w.]+[ \t]*=[ \t]*[%!])|.*\?\??[ \t]*$)")


def is_notebook(path: str | Path) -> bool:
    return str(path).endswith(SUFFIX)


@dataclass(frozen=True)
class CellView:
    """Where one code cell sits in the view (``first_line``: 1-based line after its marker)."""

    index: int  # position in the notebook's ``cells`` list (0-based)
    first_line: int
    line_count: int

    @property
    def number(self) -> int:
        """The cell's 1-based position in the notebook, as findings name it."""
        return self.index + 1


@dataclass(frozen=True)
class NotebookView:
    """The notebook's code cells as one Python module, and how to map back."""

    text: str
    cells: tuple[CellView, ...]
    #: Original text of each IPython-only line replaced by a placeholder.
    ipython_lines: tuple[str, ...]

    def locate(self, line: int) -> tuple[int, int] | None:
        """(cell number, line within the cell) for a line of the view."""
        for cell in self.cells:
            if cell.first_line <= line < cell.first_line + max(cell.line_count, 1):
                return cell.number, line - cell.first_line + 1
        return None


def _load(data: bytes) -> dict[str, Any]:
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise SourceError(f"notebook is not UTF-8: {error.reason}") from error
    except json.JSONDecodeError as error:
        raise SourceError(f"notebook is not valid JSON: {error.msg} at line {error.lineno}") from error
    except RecursionError as error:
        raise SourceError("notebook JSON nests too deeply") from error
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise SourceError("not an nbformat 4 notebook: no list of cells")
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise SourceError(f"cell {number}: not an nbformat cell")
        source = cell.get("source", "")
        if not isinstance(source, str) and not (isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise SourceError(f"cell {number}: source is neither a string nor a list of strings")
    return notebook


def _cell_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _parses(text: str) -> SyntaxError | None:
    try:
        compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        return error
    except (ValueError, RecursionError, MemoryError) as error:
        return SyntaxError(f"{type(error).__name__}: {error}")
    return None


def _without_ipython(lines: list[str], ipython_lines: list[str]) -> list[str]:
    """Replace IPython-only lines (and their backslash continuations) by placeholders."""
    out: list[str] = []
    continuation_indent: str | None = None
    for line in lines:
        if continuation_indent is not None or _IPYTHON_LINE.search(line):
            indent = continuation_indent if continuation_indent is not None else line[: len(line) - len(line.lstrip(" \t"))]
            ipython_lines.append(line)
            out.append(indent + _PLACEHOLDER.format(index=len(ipython_lines) - 1))
            continuation_indent = indent if line.endswith("\\") else None
        else:
            out.append(line)
    return out


def notebook_view(data: bytes) -> NotebookView:
    """The view the rules run on; SourceError (one line naming the cell) when a code cell is not Python."""
    notebook = _load(data)
    parts: list[str] = []
    cells: list[CellView] = []
    ipython_lines: list[str] = []
    line = 1
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        text = _cell_text(cell)
        if text.lstrip().startswith("%%"):
            continue  # a cell magic: the whole cell is IPython's (or another language's)
        lines = text.splitlines()
        if _parses(text) is not None:
            lines = _without_ipython(lines, ipython_lines)
            error = _parses("\n".join(lines) + "\n")
            if error is not None:
                where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "") if error.lineno else "unknown position"
                raise SourceError(f"cell {index + 1}: syntax error at {where}: {error.msg}")
        parts.append(_MARKER.format(number=index + 1))
        parts.extend(lines)
        cells.append(CellView(index, line + 1, len(lines)))
        line += 1 + len(lines)
    return NotebookView("\n".join(parts) + "\n" if parts else "", tuple(cells), tuple(ipython_lines))


def read_view(path: str | Path, max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> NotebookView:
    """The view of the notebook at ``path``: a regular file of at most ``max_bytes`` (a FIFO never blocks)."""
    try:
        data = read_regular_file(path, max_bytes)
    except FileRefused as error:
        raise SourceError(str(error)) from error
    return notebook_view(data)


def _split_view(view: NotebookView, new_text: str) -> dict[int, list[str]]:
    """The fixed view's lines per cell index, IPython lines restored."""
    cells: dict[int, list[str]] = {}
    current: list[str] = []
    leading: list[str] = []  # anything a fix put above the first marker joins the first cell
    for line in new_text.splitlines():
        marker = _MARKER_LINE.match(line)
        if marker:
            current = cells.setdefault(int(marker.group(1)) - 1, [])
            if leading:
                current.extend(leading)
                leading = []
            continue
        placeholder = _PLACEHOLDER_LINE.match(line)
        if placeholder:
            line = view.ipython_lines[int(placeholder.group(1))]
        (current if cells else leading).append(line)
    if set(cells) != {cell.index for cell in view.cells}:
        raise SourceError("the fix moved a notebook cell boundary; notebook unchanged")
    return cells


def _source_value(original: str | list[str], text: str) -> str | list[str]:
    """``text`` in the cell's own ``source`` form (one string, or a list of lines)."""
    if isinstance(original, str):
        return text
    return text.splitlines(keepends=True)


def _line_ending(text: str) -> str:
    """The first line ending in ``text`` (``\r\n`` from a Windows checkout, ``\r``, else ``\n``)."""
    found = re.search(r"\r\n|\r|\n", text)
    return found.group(0) if found else "\n"


def _dump_like(original: bytes, notebook: dict[str, Any]) -> str | None:
    """A serialiser that reproduces ``original`` exactly, applied to ``notebook``.

    JSON strings hold no raw line breaks, so every line break in the file is
    layout: the file's own ending is matched as ``\n`` and written back as it was.
    """
    text = original.decode("utf-8-sig")
    ending = _line_ending(text)
    plain = text.replace(ending, "\n") if ending != "\n" else text
    parsed = json.loads(plain)
    for indent in (1, 2, 4, 3, "\t", None):
        for ensure_ascii in (False, True):
            dumped = json.dumps(parsed, indent=indent, ensure_ascii=ensure_ascii)
            for tail in ("\n", ""):
                if dumped + tail == plain:
                    return _with_ending(json.dumps(notebook, indent=indent, ensure_ascii=ensure_ascii) + tail, ending)
    return None


def _with_ending(text: str, ending: str) -> str:
    return text.replace("\n", ending) if ending != "\n" else text


def rewrite_notebook(data: bytes, view: NotebookView, new_text: str) -> bytes:
    """The notebook file with the fixed view written back into its code cells."""
    notebook = _load(data)
    before = _split_view(view, view.text)
    changed = {index: lines for index, lines in _split_view(view, new_text).items() if lines != before[index]}
    if not changed:
        return data  # nothing to write: the file stays byte for byte what it was
    for index, lines in changed.items():
        cell = notebook["cells"][index]
        ending = _line_ending(_cell_text(cell))  # a cell's own lines keep their endings too
        new = ending.join(lines)
        if _cell_text(cell).endswith(("\n", "\r")) and lines:
            new += ending
        cell["source"] = _source_value(cell.get("source", ""), new)
    text = _dump_like(data, notebook)
    if text is None:  # a layout we do not recognise: write it as nbformat does, with the file's line endings
        text = _with_ending(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", _line_ending(data.decode("utf-8-sig")))
    prefix = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    return prefix + text.encode("utf-8")


def place_findings(findings: Iterable[Finding], views: dict[str, NotebookView]) -> list[Finding]:
    """Findings in notebooks named by cell and line within the cell."""
    placed: list[Finding] = []
    for item in findings:
        view = views.get(item.path)
        where = view.locate(item.line) if view is not None and item.line is not None else None
        placed.append(replace(item, cell=where[0], line=where[1]) if where is not None else item)
    return placed


def views_of(paths: Sequence[str], max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> dict[str, NotebookView]:
    """The views of the notebooks among ``paths`` that can be read (others are reported by the scan)."""
    views: dict[str, NotebookView] = {}
    for path in paths:
        if is_notebook(path):
            try:
                views[path] = read_view(path, max_bytes)
            except (OSError, SourceError):
                continue
    return views
