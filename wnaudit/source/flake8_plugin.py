"""The wnaudit source rules (WN1xx) as a flake8 extension.

Teams that already run flake8 get the rules with no new tool: the entry point
``flake8.extension`` ``WN`` loads :class:`WnauditFlake8`.  flake8 does the rest
(``--select``/``--extend-ignore``, ``# noqa: WN101``, per-file ignores, output
formats); this class only turns wnaudit findings into flake8 errors.

Like the source lint, this module never imports torch.
"""

from __future__ import annotations

import ast
import logging
from typing import Iterator, Sequence

from .. import __version__

logger = logging.getLogger(__name__)

Flake8Error = tuple[int, int, str, type]


class WnauditFlake8:
    """flake8 AST plugin: the source rules run on the file's text with libcst.

    flake8 classifies a plugin by its ``__init__`` parameters; ``tree`` makes
    this a tree plugin (run once per file), ``lines`` gives the exact source
    text libcst needs (flake8's AST alone has lost comments and formatting).
    """

    name = "wnaudit"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[Flake8Error]:
        from . import SourceError, lint_source  # here: flake8 loads plugins even when WN is not selected

        source = "".join(self.lines)
        try:
            findings = lint_source(source, self.filename)
        except SourceError as error:
            # flake8 reports real syntax errors itself (E999); this is only
            # code that Python parses and libcst does not.
            logger.warning("wnaudit: %s: %s", self.filename, error)
            return
        for item in findings:
            if item.line is None:
                continue
            column = max((item.column or 1) - 1, 0)  # flake8 columns are 0-based
            yield item.line, column, f"{item.code} {item.message}", type(self)
