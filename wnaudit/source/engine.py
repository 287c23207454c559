"""Lint (and fix) many files: the source pipeline's stages, in the order data flows.

Each stage is a module of ``wnaudit.source.pipeline``: ``inputs`` -> ``read``
-> ``prefilter`` -> ``analyse`` (run over the inputs by ``scan``, in the
``-j`` workers when it pays) -> ``link`` -> ``run_rules`` -> ``plan`` ->
``apply`` -> ``collect``.  Cost model: every file is read and searched for the
catalogue's API names (a substring search); only files that can hold a
finding are parsed, with CPython's ``ast``; the others count as checked.
libcst parses only files that get a fix.  ``lint_run.lint_files`` is the entry: it gives the
answer an identical earlier run kept, or runs these stages (``run_stages``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..common.config import Config
from ..common.findings import Finding, InputError, RunResult
from ..common.options import RunOptions
from .analysis import parsed_ahead
from .context import Context
from .diff import unified_patch
from .fixer import FixError, apply_fixes
from .serving.entries import entry_errors
from .model import FileSummary
from .pipeline.analyse import check_syntax, compiles_quietly, parse_syntax, summarize, summarize_at, syntax_message
from .pipeline.apply import Files, apply_plan, commit
from .pipeline.inputs import Inputs, gather_inputs
from .pipeline.plan import FixPlan, plan_fixes
from .pipeline.prefilter import Scanned
from .pipeline.link import adopt, default_workspace, new_workspace
from .derived_cache import DerivedAnswers
from .facts.store import FactStore
from .pipeline.read import read_source
from .pipeline.collect import fixed_findings, planned_findings
from .pipeline.run_rules import file_candidates, findings_of, identity, offered, serving_syntax_errors, to_finding
from .pipeline.scan import scan_all
from . import notebook, run_answers
from .reading import SourceError
from .workspace import Workspace

logger = logging.getLogger(__name__)

__all__ = [
    "FixPlan", "SourceError", "apply_fixes", "check_syntax", "compiles_quietly", "default_workspace", "fix_source",
    "lint_source", "new_workspace", "parse_syntax", "plan_fixes", "read_source", "summarize",
    "summarize_at", "syntax_message",
]


@dataclass
class Scan:
    """The per-file stages' answer for a run: each file's ``Scanned``, and the linted files' completed facts."""

    scanned: list[Scanned]
    summaries: list[FileSummary]
    #: resolved path -> the path as given, for every file read without an error.
    given: dict[str, str]

    @property
    def run_files(self) -> frozenset[str]:
        return frozenset(self.given)

    def files(self) -> Files:
        return Files(
            self.given, {s.file or s.path: s for s in self.summaries},
            {item.path: item.digest for item in self.scanned if item.digest is not None},
        )

    def unparsed(self) -> dict[str, str]:
        """resolved path -> path as given, of the files the prefilter ruled out (counted as checked, not parsed)."""
        analysed = {item.path for item in self.scanned if item.summary is not None}
        return {resolved: path for resolved, path in self.given.items() if path not in analysed}


def scan(inputs: Inputs, options: RunOptions, workspace: Workspace) -> Scan:
    """Read, prefilter and analyse every input; complete the linted files' facts across files (project model)."""
    config = options.config
    scanned = scan_all(inputs.files, options.jobs, config.max_source_bytes, workspace, lambda path: config.enabled("WN110", path))
    summaries = adopt(workspace, [item.summary for item in scanned if item.summary is not None], inputs)
    given = {workspace.project.input_identity(item.path): item.path for item in scanned if item.error is None}
    return Scan(scanned, summaries, given)


def run_stages(
    inputs: Inputs, options: RunOptions, facts: FactStore, record: DerivedAnswers | None, result: RunResult,
    settle: Callable[[], None], kept: tuple[str | None, run_answers.InputStamps | None] = (None, None),
) -> RunResult:
    """The stages of a run no kept answer answered (``lint_run``), on its fact store and record of derived answers.

    ``result`` holds the journal check's errors; ``kept``: the run's key and its inputs' stamps, when its answer
    is to be kept (``run_answers``).
    """
    # Trees parsed ahead are not kept past the run.
    with parsed_ahead.for_one_run():
        workspace = new_workspace(options.config, facts, files=inputs.files, answers=record)
        return _run_stages(inputs, options, workspace, result, settle, kept)


def _run_stages(
    inputs: Inputs, options: RunOptions, workspace: Workspace, result: RunResult, settle: Callable[[], None],
    kept: tuple[str | None, run_answers.InputStamps | None],
) -> RunResult:
    with run_answers.logged_warnings() as warnings:
        found, plan, errors, parsed = _check(inputs, options, workspace, settle)
    result.errors.extend(errors)
    result.parsed_sources = parsed
    if (options.fix or options.diff) and plan.edits:
        workspace.save_caches()
        _apply(plan, found, options, workspace, result)
        return result
    answer = run_answers.RunAnswer(planned_findings(plan), errors, parsed, warnings)
    key, stamps = kept
    if key is not None and stamps is not None:
        _keep_answer(workspace, key, inputs.files, stamps, answer)
    workspace.save_caches()  # what the scan and the rules learnt (dependencies' facts and summaries too)
    result.findings = inputs.placed(answer.findings)
    return result


def _keep_answer(
    workspace: Workspace, key: str, files: list[Path], stamped: run_answers.InputStamps, answer: run_answers.RunAnswer,
) -> None:
    """Keep the run's answer with the record, when it is one of the code alone and no input changed meanwhile.

    Not kept: a file whose analysis failed (a limit of this process), a symbolic link met (where it points
    is not observed).
    """
    if workspace.derived is None or workspace.analysis_failures or workspace.project.met_links():
        return
    keys = run_answers.input_keys(files, stamped, lambda path: _digest_read(workspace, path))
    if keys is not None:
        workspace.derived.keep_run(key, run_answers.encode(answer, keys, stamped))


def _digest_read(workspace: Workspace, path: str) -> str | None:
    """The digest of the bytes of a source file (not a notebook: its view is read) the run read or its record checked."""
    if notebook.is_notebook(path):
        return None
    read = workspace.reads.read(Path(path))
    if read is not None:
        return read[0].hex()
    return workspace.derived.digests.get(path) if workspace.derived is not None else None


def _check(
    inputs: Inputs, options: RunOptions, workspace: Workspace, settle: Callable[[], None],
) -> tuple[Scan, FixPlan, list[InputError], int]:
    """The stages that find: scan, link, rules and plan; with the inputs' errors they found and how many files were parsed."""
    config = options.config
    errors: list[InputError] = []
    try:
        found = scan(inputs, options, workspace)
        settle()  # the scan's records live to the end of the run: the rules' collections need not walk them
        errors.extend(InputError(item.path, item.error) for item in found.scanned if item.error is not None)
        context = Context(found.summaries, workspace=workspace)
        plan = plan_fixes(found.summaries, config, context, options.unsafe_fixes, found.run_files)
        served = serving_syntax_errors(context, found.unparsed(), workspace)
    finally:
        workspace.close_workers()
    errors.extend(InputError(path, message) for path, message in served)
    if config.serving:  # declared entries the project does not define: a config error each (never imported)
        pyproject = str(Path(config.root) / "pyproject.toml")
        errors.extend(
            InputError(pyproject, message)
            for message in entry_errors(config.serving, workspace.project, Path(config.root), workspace.reads.source_bytes)
        )
    errors.extend(InputError(path, message) for path, message in sorted(workspace.analysis_failures.items()))
    return found, plan, errors, sum(item.parsed for item in found.scanned) + len(served)


def _apply(plan: FixPlan, found: Scan, options: RunOptions, workspace: Workspace, result: RunResult) -> None:
    """Fix stages: new contents for every edited file, then a diff of each or one write of all; the report after."""
    config = options.config

    def replan(withheld: frozenset) -> FixPlan:
        return plan_fixes(found.summaries, config, Context(found.summaries, workspace=workspace), options.unsafe_fixes,
                          found.run_files, withheld)

    outcome, fixed = apply_plan(plan, found.files(), workspace, config.max_source_bytes, replan)
    result.errors.extend(outcome.errors)
    inputs = gather_inputs([Path(item.path) for item in found.scanned], config.max_source_bytes)
    if options.diff:
        result.diffs.extend(unified_patch(c.old, c.new, c.path) for c in outcome.changes)  # nothing written: nothing fixed
        result.findings = inputs.placed(planned_findings(plan))
        return
    try:
        left = {id(c) for change in commit(outcome.changes, list(found.given.values())) for c in change.applied}
        fixed = [(path, candidate) for path, candidate in fixed if id(candidate) not in left]
    except OSError as error:
        result.errors.extend(InputError(c.path, f"cannot write the fix, file unchanged: {error}") for c in outcome.changes)
        fixed = []
    result.fixed = inputs.placed(fixed_findings(fixed))
    result.findings = _relint(found, options, result)


def _relint(found: Scan, options: RunOptions, result: RunResult) -> list[Finding]:
    """What remains, decided from the disk after the writes (another run may have fixed files meanwhile).

    A file that cannot be analysed now is reported once (``result.errors``), as in the first pass.
    """
    inputs = gather_inputs([Path(path) for path in found.given.values()], options.config.max_source_bytes)
    workspace = new_workspace(options.config)  # fresh: a fix may change what another file's names stand for
    try:
        again = scan(inputs, options, workspace)
        context = Context(again.summaries, workspace=workspace)
        remaining = inputs.placed(findings_of(again.summaries, context, options.config, again.run_files))
    finally:
        workspace.close_workers()
    reported = {(error.path, error.message) for error in result.errors}
    result.errors.extend(
        InputError(path, message) for path, message in sorted(workspace.analysis_failures.items()) if (path, message) not in reported
    )
    return remaining


def lint_source(source: str | bytes, path: str, config: Config | None = None) -> list[Finding]:
    """Findings for one file's content; for editor and flake8 use.

    The project modules it imports are read from disk (resolved from
    ``path`` and the config's source roots), so the answer is the one a
    whole-tree run gives for that file.  Raises ``SourceError`` (a
    ValueError with a one-line message) when the content is not Python source.
    """
    with parsed_ahead.for_one_run():
        return _lint_source(source, path, config or Config())


def _lint_source(source: str | bytes, path: str, config: Config) -> list[Finding]:
    workspace = new_workspace(config)
    summary = _summarize_given(source, path, workspace)
    context = Context([summary], workspace=workspace)
    found = file_candidates(summary, context, config, frozenset({summary.file or summary.path}))
    if summary.path in workspace.analysis_failures:
        raise SourceError(workspace.analysis_failures[summary.path])
    kept = offered([summary], {summary.path: found}, config, workspace)[1][summary.path]
    return sorted((to_finding(path, c) for c in kept), key=Finding.sort_key)


def _summarize_given(source: str | bytes, path: str, workspace: Workspace) -> FileSummary:
    """Summary of in-memory content for ``path``; its imports are read from disk as needed."""
    summary = summarize_at(source, path, workspace.project.locate_input(path))
    return workspace.analyses.adopt([summary], {path: source})[0]


def fix_source(
    source: str | bytes, path: str, config: Config | None = None, *, unsafe_fixes: bool = True,
) -> tuple[str | bytes, list[Finding]]:
    """Fix one file's content; returns the new content (same type as given) and the findings fixed.

    Raises ``SourceError`` when the content is not Python; when a fix cannot be
    applied the content comes back unchanged (and the reason is logged).
    The caller asked for the fix, so fixes that need review are applied too
    unless ``unsafe_fixes=False`` (the CLI's ``--fix`` passes that).
    """
    with parsed_ahead.for_one_run():
        return _fix_source(source, path, config or Config(), unsafe_fixes)


def _fix_source(source: str | bytes, path: str, config: Config, unsafe_fixes: bool) -> tuple[str | bytes, list[Finding]]:
    workspace = new_workspace(config)
    summary = _summarize_given(source, path, workspace)
    plan = plan_fixes([summary], config, Context([summary], workspace=workspace), unsafe_fixes)
    fixes = [edit.candidate for edit in plan.edits]
    if not fixes:
        return source, []
    try:
        new_source, applied = apply_fixes(source, summary, fixes)
        summarize_at(new_source, path, workspace.project.locate_input(path))
    except (FixError, SourceError) as error:
        logger.warning("%s: fix not applied: %s", path, error)
        return source, []
    reported = {identity(c) for c in plan.findings[path]}
    return new_source, [to_finding(path, c) for c in applied if identity(c) in reported]
