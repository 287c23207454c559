"""The files a lint needs, read on demand: the linted ones and what they import.

A linted file's answer depends on the project code it imports: the class it
inherits from, the helper that applies weight norm, the module that picks a
spelling at import time.  Those files are read from disk when a question
reaches them, whether or not they were named on the command line, and only
when they can matter: a file is parsed only if it, or a project module it
imports (transitively), mentions one of the catalogue's API names.
Everything else stays a byte scan.

The workspace is the run's set of those parts, one job each: ``file_reads``
(bytes, byte facts, observations), ``import_scan`` (reachability),
``analyses`` (summaries), ``api_names`` (names bound to torch APIs).  Every
per-file fact comes from the run's fact store (``facts/``).
"""

from __future__ import annotations

import logging

from .analyses import Analyses, Summarizer
from .api_names import ApiNames
from .derived_cache import DerivedAnswers
from .facts.store import FactStore
from .file_reads import FileReads
from .import_scan import ImportScan
from .project import Project
from .serving.ahead import ServingAhead
from .workspace_settings import WorkspaceSettings

__all__ = ["Summarizer", "Workspace", "WorkspaceSettings"]

logger = logging.getLogger(__name__)


class Workspace:
    """The run's readers of files and answers across them, built once from the project, the store and the settings.

    ``facts``: where every per-file fact comes from (a store with no disk: this
    run only); ``derived``: earlier runs' cross-file answers, reused while every
    observation they rest on holds.  Each only saves work: the answers are the same.
    """

    def __init__(
        self, project: Project, summarizer: Summarizer, facts: FactStore | None = None, derived: DerivedAnswers | None = None,
        settings: WorkspaceSettings | None = None,
    ) -> None:
        self.project = project
        self.derived = derived
        if derived is not None:
            project.listing_stamps = {}  # its listings are observations of the kept answers: keyed like the files read
        self.settings = settings or WorkspaceSettings()
        self.facts = facts if facts is not None else FactStore()
        self.reads = FileReads(project, self.facts, derived)
        self.scan = ImportScan(
            project, self.reads, derived, lambda path: self.analyses.first_kept(path),
            lambda summary, name: self.names.names_api(summary, name),
        )
        self.analyses = Analyses(
            project, self.reads, summarizer, self.settings, derived, lambda summary: self.names.aliases(summary), self.scan.may_matter,
        )
        self.names = ApiNames(project, self.scan, self.analyses)
        #: Workers for WN110's index, started by a scan that computed byte facts ahead (a big run with nothing kept).
        self.serving_ahead: ServingAhead | None = None

    @property
    def analysis_failures(self) -> dict[str, str]:
        """Linted files whose analysis raised (path as given -> one line): their findings are left out."""
        return self.analyses.analysis_failures

    def use_serving_workers(self, ahead: ServingAhead) -> None:
        """WN110's index reads files ahead in these workers (the scan started them; ``close_workers`` stops them)."""
        self.serving_ahead = ahead

    def close_workers(self) -> None:
        """Stop the serving-facts workers (a run's last use of them is its rules)."""
        if self.serving_ahead is not None:
            self.serving_ahead.close()
            self.serving_ahead = None

    def save_caches(self) -> None:
        """Write back what this run added to the store and the record of derived answers (silent on failure)."""
        if self.derived is not None:
            self.derived.note_listings(self.project.listing_stamps or {})
            self.derived.save(self.reads.observations())
        self.facts.save()
