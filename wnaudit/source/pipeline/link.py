"""Link: the run's workspace, which answers across files (imports, classes, constructions, serving paths).

It resolves imports from the config's source roots and reads the modules a
linted file reaches on demand; ``adopt`` completes the linted files' facts
with what their imports stand for (a notebook from its view, not its JSON).
The project model the cross-file rules ask (``source/project_model.py``) is
built on this workspace later, when a rule first asks (``Context.model``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ...common.config import Config
from ..analysis import Aliases, PieceReader
from ..derived_cache import SMALL_RUN, DerivedAnswers
from ..model import FileSummary
from ..project import Location, Project
from ..facts.store import FactStore
from ..workspace import Workspace, WorkspaceSettings
from .analyse import summarize_at
from .inputs import Inputs


def _summarize_located(data: bytes, path: str, location: Location, aliases: Aliases | None, also: PieceReader | None) -> FileSummary:
    return summarize_at(data, path, location, aliases, also)


def new_workspace(
    config: Config | None = None, facts: FactStore | None = None, derived: bool = False, files: Sequence[Path] = (),
) -> Workspace:
    """A workspace resolving imports from ``config``'s source roots (default: the current directory).

    ``facts``: the run's fact store (default: one for this run only).
    ``derived``: reuse (and keep) the cross-file answers of earlier runs, when the store keeps facts (``derived_cache``);
    a run of few ``files`` keeps a record of its own (``derived_cache.SMALL_RUN``, ``_scope``).
    """
    config = config or Config()
    project = Project(config.source_roots)
    facts = facts if facts is not None else FactStore()
    answers = None
    if derived and facts.persistent:
        # WN110's kept verdicts rest on them too (an exclude is also matched from the working directory).
        kept_on = [*config.exclusions, *config.serving, os.getcwd()]
        answers = DerivedAnswers.open(facts, project.roots, _scope(files) if len(files) <= SMALL_RUN else [], kept_on)
    settings = WorkspaceSettings(
        fix_fold=config.fix_fold, excluded=config.is_path_excluded, serving_entries=config.serving,
        config_root=Path(config.root), serving_on=lambda path: config.enabled("WN110", path),
    )
    return Workspace(project, _summarize_located, facts, answers, settings)


def _scope(files: Sequence[Path]) -> list[str]:
    """Where a small run's files live: the directories above their top-level packages (its record's key).

    Runs on files of the same packages share a record that grows to what they
    read, never a whole tree's; any key is sound (a record is checked before use).
    """
    tops = set()
    for file in files:
        directory = os.path.dirname(os.path.abspath(file))
        while os.path.isfile(os.path.join(directory, "__init__.py")):
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        tops.add(directory)
    return sorted(tops)


def default_workspace() -> Workspace:
    return new_workspace()


def cached_workspace(config: Config, use_cache: bool, files: Sequence[Path] = ()) -> Workspace:
    """The run's workspace with the caches ``--no-cache`` turns off (syntax facts, analyses, kept answers)."""
    return new_workspace(config, FactStore.open(use_cache), derived=True, files=files)


def adopt(workspace: Workspace, summaries: list[FileSummary], inputs: Inputs) -> list[FileSummary]:
    """The linted files' facts completed across files; a notebook's names from its view (its Python)."""
    return workspace.analyses.adopt(summaries, {path: view.text for path, view in inputs.views.items()})
