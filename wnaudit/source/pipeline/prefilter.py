"""Prefilter: can a file's bytes hold a finding?  Decided from bytes (a substring search), never a parse.

A file that names no catalogue API, and imports no project name bound to one
(``Workspace.may_have_findings``), cannot hold a finding: it counts as checked
and is not parsed (a general linter reports its syntax errors).  A file that
can is analysed, unless the summary cache already holds its analysis.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import notebook
from ..derived_cache import stamp
from ..model import FileSummary
from ..reading import SourceError
from ..serving.facts import ServingFacts
from ..serving.kept_trees import PickledTree, PieceTrees
from ..facts.kinds import OK, SUMMARY, SYNTAX, Blob, SummaryOf
from ..workspace import Workspace
from .read import read_failure, read_source, readable_within


@dataclass
class Scanned:
    """What the per-file stages made of one file: its analysis, or the one-line error (neither: ruled out)."""

    path: str
    summary: FileSummary | None = None
    error: str | None = None
    #: Digest of the bytes analysed (for the summary cache, and to see a file change before a fix writes it).
    digest: bytes | None = None
    #: WN110's serving facts of the file, computed beside its analysis (``analyse.summarize_serving``).
    serving: ServingFacts | None = None
    #: The file's trees for WN110's readers (``kept_trees``): as parsed in the main process, pickled from a worker.
    trees: PieceTrees | PickledTree | None = None

    @property
    def parsed(self) -> bool:
        """Whether the file was analysed (or its analysis reused): its syntax was checked."""
        return self.summary is not None or (self.error is not None and self.error.startswith(("syntax error", "cannot parse")))


@dataclass(frozen=True)
class Task:
    """A file the prefilter passed on to the analysis, with its size (the scan runs the big ones first)."""

    index: int
    path: str
    size: int


def prefilter(index: int, path_text: str, max_bytes: int, workspace: Workspace) -> Scanned | Task:
    """Read and test one file: done here (ruled out, unreadable, analysis kept), or a ``Task`` to analyse.

    When the record of kept answers has just read the file and vouches for its
    bytes (``Workspace.vouched``), it is neither read nor decided again.
    """
    # A file the record vouches for and rules out needs no ``Location`` (most of a warm run's files).
    vouched = workspace.reads.vouched(os.path.abspath(path_text)) if not notebook.is_notebook(path_text) else None
    if vouched is not None and readable_within(path_text, max_bytes):
        digest, analyse = vouched
        done = _decided(path_text, digest, analyse, workspace)
        if done is not None:
            return done
    location = workspace.project.locate(path_text)
    # Stamped before the read: a later run's record check trusts the stat instead of reading (``derived_cache``).
    taken = stamp(str(location.path)) if workspace.derived is not None else None
    try:
        data = read_source(Path(path_text), max_bytes)
    except (OSError, SourceError) as error:  # not a regular file, too big, a notebook that is not one...
        return Scanned(path_text, error=read_failure(error))
    if isinstance(data, str):  # a notebook view, already parsed cell by cell
        _, facts = workspace.reads.facts_for(data.encode("utf-8", "surrogatepass"))
        if not workspace.scan.may_have_findings(location.path, facts):
            return Scanned(path_text)
        return Task(index, path_text, len(data))
    found = workspace.reads.content(location.path, data, taken)
    assert found is not None
    digest, facts = found
    done = _decided(path_text, digest, workspace.scan.may_have_findings(location.path, facts), workspace)
    return done if done is not None else Task(index, path_text, len(data))


def _decided(path_text: str, digest: bytes, analyse: bool, workspace: Workspace) -> Scanned | None:
    """The file's result without a parse: ruled out, its syntax error or its analysis from the fact store (None: analyse it)."""
    if not analyse:
        return Scanned(path_text)
    facts = workspace.facts
    verdict = facts.known(SYNTAX, Blob(digest))
    if verdict is not None and verdict != OK:
        return Scanned(path_text, error=verdict)  # the syntax error a parse of exactly these bytes gave
    ask = SummaryOf(digest, path_text, workspace.project.locate_input(path_text))
    summary = facts.known(SUMMARY, ask)
    if summary is None and (summary := workspace.analyses.analysed(ask.location.path, digest, path_text)) is not None:
        facts.put(SUMMARY, ask, summary)  # parsed already (another file's imports led there): kept as the scan keeps its own
    return None if summary is None else Scanned(path_text, summary=summary, digest=digest)
