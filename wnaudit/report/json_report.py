"""``--format json``: exactly one JSON object, as fixed by the design contract."""

from __future__ import annotations

import json
from typing import TextIO

from ..common.findings import RunResult
from . import sorted_findings
from .paths import given_relative


def render(result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False, **_: object) -> None:
    # Paths as the GitHub and SARIF reports give them: relative to the working directory, errors too.
    payload = {
        "findings": [{**f.to_dict(), "path": given_relative(f.path)} for f in sorted_findings(result)],
        "errors": [{**e.to_dict(), "path": given_relative(e.path)} for e in result.errors],
    }
    # ensure_ascii: a lone surrogate or control character in a name is a JSON
    # escape (``\\udc80``), so the document is valid JSON whatever the stream's encoding.
    json.dump(payload, stream, indent=2, ensure_ascii=True)
    stream.write("\n")
