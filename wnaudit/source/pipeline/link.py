"""Link: the run's workspace, which answers across files (imports, classes, constructions, serving paths).

It resolves imports from the config's source roots and reads the modules a
linted file reaches on demand; ``adopt`` completes the linted files' facts
with what their imports stand for (a notebook from its view, not its JSON).
The project model the cross-file rules ask (``source/project_model.py``) is
built on this workspace later, when a rule first asks (``Context.model``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ...common.config import Config
from ..analysis import Aliases, PieceReader
from ..derived_cache import DerivedAnswers, open_for_run
from ..model import FileSummary
from ..project import Location, Project
from ..facts.kinds import SERVED
from ..facts.store import FactStore
from ..workspace import Workspace, WorkspaceSettings
from .analyse import summarize_at
from .inputs import Inputs


def _summarize_located(data: bytes, path: str, location: Location, aliases: Aliases | None, also: PieceReader | None) -> FileSummary:
    return summarize_at(data, path, location, aliases, also)


def new_workspace(
    config: Config | None = None, facts: FactStore | None = None, derived: bool = False, files: Sequence[Path] = (),
    answers: DerivedAnswers | None = None,
) -> Workspace:
    """A workspace resolving imports from ``config``'s source roots (default: the current directory).

    ``facts``: the run's fact store (default: one for this run only).
    ``derived``: reuse (and keep) the cross-file answers of earlier runs, when the store keeps facts (``derived_cache``);
    a run of few ``files`` keeps a record of its own (``derived_cache.SMALL_RUN``).  ``answers``: that record,
    opened already (the run asked it for a kept answer first).
    """
    config = config or Config()
    facts = facts if facts is not None else FactStore()
    if answers is None and derived:
        answers = open_for_run(config, facts, files)
    if answers is not None:
        facts.keep_in(SERVED, answers.served)  # WN110's verdicts are asked of the store, kept in this record
    settings = WorkspaceSettings(
        fix_fold=config.fix_fold, excluded=config.is_path_excluded, serving_entries=config.serving,
        config_root=Path(config.root), serving_on=lambda path: config.enabled("WN110", path),
    )
    return Workspace(Project(config.source_roots), _summarize_located, facts, answers, settings)


def default_workspace() -> Workspace:
    return new_workspace()


def adopt(workspace: Workspace, summaries: list[FileSummary], inputs: Inputs) -> list[FileSummary]:
    """The linted files' facts completed across files; a notebook's names from its view (its Python)."""
    return workspace.analyses.adopt(summaries, {path: view.text for path, view in inputs.views.items()})
