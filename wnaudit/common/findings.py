"""Findings, input errors and the declaration of a finding code.

Torch-free: shared by the source lint, the module inspector and the checkpoint
audit, and by every report format.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Applicability(str, enum.Enum):
    """How far a fix can be trusted, as ruff classifies it.

    ``SAFE`` fixes keep the program's meaning and are applied by ``--fix``;
    ``UNSAFE`` ones ("needs review") may change behaviour and are applied only
    with ``--unsafe-fixes``.  Each rule page's "Fix safety" section says which.
    """

    SAFE = "safe"
    UNSAFE = "needs review"


@dataclass(frozen=True)
class CodeInfo:
    """What a finding code means; the long form lives in ``rules/WNxxx.md``.

    Declared as data by the entrance that emits the code (its rules, or its
    ``codes.py``); ``wnaudit.report.codes`` gathers every declaration into the
    one registry the renderers read.  ``applicability`` is ``None`` for codes
    that have no fix.
    """

    code: str
    title: str
    severity: Severity
    applicability: Applicability | None = Applicability.SAFE


@dataclass(frozen=True)
class Finding:
    """One problem found in a source file, a checkpoint or a live module.

    Source findings carry ``line``/``column`` (1-based); tensor findings carry
    ``object``, the qualified name the tensor has once folded.
    """

    path: str
    code: str
    message: str
    fixable: bool
    severity: Severity = Severity.WARNING
    line: int | None = None
    column: int | None = None
    object: str | None = None
    #: How its fix may be applied (``None``: no fix); see :class:`Applicability`.
    applicability: Applicability | None = None
    #: In a notebook: the 1-based cell number; ``line`` then counts within the cell.
    cell: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape fixed by the design contract."""
        data: dict[str, Any] = {
            "path": self.path,
            "code": self.code,
            "severity": Severity(self.severity).value,
            "message": self.message,
            "fixable": self.fixable,
            "fix": {"applicability": self.applicability_name()} if self.fixable else None,
        }
        if self.line is not None:
            data["line"] = self.line
            data["column"] = self.column if self.column is not None else 1
        if self.cell is not None:
            data["cell"] = self.cell
        if self.object is not None:
            data["object"] = self.object
        return data

    def applicability_name(self) -> str:
        """``safe`` or ``unsafe``, the words of ruff's JSON (a fixable finding declared without one is safe)."""
        return "unsafe" if self.applicability is Applicability.UNSAFE else "safe"

    def sort_key(self) -> tuple[Any, ...]:
        return (self.path, self.cell or 0, self.line or 0, self.column or 0, self.object or "", self.code)


def finding(info: CodeInfo, path: str, message: str, *, fixable: bool, **where: Any) -> Finding:
    """Build a finding whose code, severity and fix applicability come from its declaration."""
    return Finding(
        path=path, code=info.code, message=message, fixable=fixable, severity=info.severity,
        applicability=info.applicability if fixable else None, **where,
    )


#: Where a syntax error stands, as the source entrance words it (``syntax error at line 3, column 7: ...``).
_SYNTAX_POSITION = re.compile(r"^syntax error at line (\d+)(?:, column (\d+))?:")


@dataclass(frozen=True)
class InputError:
    """An input that could not be read or fixed; reported, never fatal to the run."""

    path: str
    message: str

    @property
    def position(self) -> tuple[int, int] | None:
        """(line, column), 1-based, where the error has one (a syntax error); reports annotate it there."""
        match = _SYNTAX_POSITION.match(self.message)
        return (int(match[1]), int(match[2] or 1)) if match else None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "message": self.message}
        if self.position is not None:
            data["line"], data["column"] = self.position
        return data


@dataclass
class RunResult:
    """What one engine (source lint or checkpoint audit) produced for its inputs.

    ``findings`` are those still present after the run (fixed ones are moved to
    ``fixed``); ``diffs`` are unified diffs for ``--diff``, as bytes in each
    file's own encoding (the CLI writes them unchanged to stdout);
    ``checked_sources`` and ``checked_checkpoints`` count the inputs examined,
    for the summary of a directory walk (``None``: not reported).
    """

    findings: list[Finding] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    diffs: list[bytes] = field(default_factory=list)
    checked_sources: int | None = None
    checked_checkpoints: int | None = None
    #: Exported programs (``.pt2``) read, counted apart from checkpoints (set by the CLI after a walk).
    checked_programs: int | None = None
    #: Of the source files checked, how many were parsed: those that could hold a finding, or that a rule read.
    parsed_sources: int | None = None

    def extend(self, other: "RunResult") -> None:
        self.findings.extend(other.findings)
        self.fixed.extend(other.fixed)
        self.errors.extend(other.errors)
        self.diffs.extend(other.diffs)
        self.checked_sources = _add_counts(self.checked_sources, other.checked_sources)
        self.checked_checkpoints = _add_counts(self.checked_checkpoints, other.checked_checkpoints)
        self.parsed_sources = _add_counts(self.parsed_sources, other.parsed_sources)


def _add_counts(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)
