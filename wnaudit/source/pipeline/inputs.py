"""Find inputs: the files of the run as given, and the notebooks' views (findings name cell and line).

The command line's discovery (``wnaudit.cli.discovery``) walks directories and
honours excludes; this stage takes its list.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...common.findings import Finding
from .. import notebook


@dataclass
class Inputs:
    files: list[Path]
    #: path as given -> the notebook's view (only for notebooks that can be read).
    views: dict[str, notebook.NotebookView]

    @property
    def names(self) -> list[str]:
        return [str(p) for p in self.files]

    def placed(self, findings: list[Finding]) -> list[Finding]:
        """``findings`` sorted, those in notebooks named by cell and line."""
        if self.views:
            findings = notebook.place_findings(findings, self.views)
        return sorted(findings, key=Finding.sort_key)


def gather_inputs(files: list[Path], max_bytes: int) -> Inputs:
    """``files`` and the views of the notebooks among them (read as the scan reads: regular files up to ``max_bytes``)."""
    return Inputs(list(files), notebook.views_of([str(p) for p in files], max_bytes))
