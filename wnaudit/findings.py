"""Findings, input errors and the registry of finding codes.

Torch-free: shared by the source lint, the module inspector and the checkpoint
audit, and by every report format.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class CodeInfo:
    """What a finding code means; the long form lives in ``rules/WNxxx.md``."""

    code: str
    title: str
    severity: Severity


#: Every finding code wnaudit can emit.  Each has a page in ``rules/``.
CODES: dict[str, CodeInfo] = {}


def register_code(code: str, title: str, severity: Severity) -> CodeInfo:
    """Declare a finding code; a code is declared once, where its rule lives."""
    info = CodeInfo(code, title, severity)
    existing = CODES.get(code)
    if existing is not None and existing != info:
        raise ValueError(f"finding code {code} declared twice with different meanings")
    CODES[code] = info
    return info


# Module (WN2xx) and checkpoint (WN3xx) codes are declared here because their
# producers need torch; source codes (WN1xx) are declared by their rules.
register_code("WN201", "weight norm (modern parametrization) live in a loaded module", Severity.WARNING)
register_code("WN202", "weight norm (legacy forward-pre-hook) live in a loaded module", Severity.WARNING)
register_code("WN203", "spectral norm live in a loaded module", Severity.WARNING)
register_code("WN204", "other parametrization live in a loaded module", Severity.WARNING)
register_code("WN205", "folded weight left as a plain or inference tensor", Severity.ERROR)
register_code("WN301", "modern weight-norm keys stored unfolded in a checkpoint", Severity.WARNING)
register_code("WN302", "legacy weight-norm keys stored unfolded in a checkpoint", Severity.WARNING)
register_code("WN303", "spectral-norm keys stored unfolded in a checkpoint", Severity.WARNING)


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

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape fixed by the design contract."""
        data: dict[str, Any] = {
            "path": self.path,
            "code": self.code,
            "severity": Severity(self.severity).value,
            "message": self.message,
            "fixable": self.fixable,
        }
        if self.line is not None:
            data["line"] = self.line
            data["column"] = self.column if self.column is not None else 1
        if self.object is not None:
            data["object"] = self.object
        return data

    def sort_key(self) -> tuple[Any, ...]:
        return (self.path, self.line or 0, self.column or 0, self.object or "", self.code)


def finding(path: str, code: str, message: str, *, fixable: bool, **where: Any) -> Finding:
    """Build a finding whose severity comes from the code registry."""
    info = CODES.get(code)
    severity = info.severity if info is not None else Severity.WARNING
    return Finding(path=path, code=code, message=message, fixable=fixable, severity=severity, **where)


@dataclass(frozen=True)
class InputError:
    """An input that could not be read or fixed; reported, never fatal to the run."""

    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass
class RunResult:
    """What one engine (source lint or checkpoint audit) produced for its inputs.

    ``findings`` are those still present after the run (fixed ones are moved to
    ``fixed``); ``diffs`` are unified diffs for ``--diff``.
    """

    findings: list[Finding] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)

    def extend(self, other: "RunResult") -> None:
        self.findings.extend(other.findings)
        self.fixed.extend(other.fixed)
        self.errors.extend(other.errors)
        self.diffs.extend(other.diffs)
