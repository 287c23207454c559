"""Report formats: each renders a :class:`~wnaudit.findings.RunResult` to a stream."""

from __future__ import annotations

import importlib
from typing import Protocol, TextIO

from ..findings import RunResult


class Renderer(Protocol):
    def __call__(self, result: RunResult, stream: TextIO, *, color: bool, quiet: bool, statistics: bool) -> None: ...


#: format name -> "module:function"; imported only when used.
FORMATS: dict[str, str] = {
    "text": "wnaudit.report.text:render",
    "json": "wnaudit.report.json_report:render",
    "github": "wnaudit.report.github:render",
    "sarif": "wnaudit.report.sarif:render",
}


def renderer(name: str) -> Renderer:
    module_name, function = FORMATS[name].split(":")
    return getattr(importlib.import_module(module_name), function)
