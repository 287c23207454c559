"""Lint (and fix) many files: prefilter, analyse in parallel, resolve across files, fix.

Cost model: every file is read and searched for the catalogue's API names
(a substring search); only files that mention one are analysed, with CPython's
``ast``; the others are only parsed, so that a syntax error is reported in
every file read.  libcst parses only files that get a fix.  When the files to parse
add up to a lot of source, they are parsed by a process pool; results come
back as small picklable summaries.
"""

from __future__ import annotations

import ast
import concurrent.futures
import dataclasses
import logging
import os
import stat
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..common.atomic import atomic_write_bytes
from ..common.config import Config
from ..common.findings import Applicability, Finding, InputError, RunResult, finding
from ..common.options import RunOptions
from ..common.gc_pause import cyclic_gc_paused
from .analysis import Aliases, analyze
from .context import Context
from .derived_cache import DerivedAnswers
from .diff import unified_patch
from .fixer import FixError, apply_fixes
from . import notebook
from .model import FileSummary
from .project import Location, Project
from .reading import SourceError, decode, read_source_bytes
from .rules import BY_CODE, Candidate, candidates
from .summary_cache import SummaryCache
from .syntax_cache import OK, SyntaxCache, digest_of
from .workspace import Workspace

logger = logging.getLogger(__name__)

#: Below this much candidate source (bytes to parse) a process pool costs more than it saves.
PARALLEL_BYTES = 1 << 20


@dataclass
class _Scanned:
    path: str
    summary: FileSummary | None = None
    error: str | None = None
    #: Digest of the content of a syntax-check-only file whose verdict (``error`` or none) is cacheable.
    digest: bytes | None = None


def _syntax_message(error: SyntaxError) -> str:
    where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "") if error.lineno else "unknown position"
    return f"syntax error at {where}: {error.msg}"


def check_syntax(text: str, path: str) -> None:
    """SourceError (one line) when ``text`` is not valid Python: the verdict of the parse ``analyze`` does, nothing kept.

    The bytecode compiler runs the same parser without building Python objects
    for the tree (about a third cheaper), so a file it accepts without a word
    is valid; anything else (an error, a warning, deep nesting) gets the
    tree-building parse, whose verdict is the answer.
    """
    if _compiles_quietly(text, path):
        return
    try:  # inline, not a call: how deep a tree can be built depends on the stack depth of the parse
        compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        raise SourceError(_syntax_message(error)) from error
    except (ValueError, RecursionError, MemoryError) as error:
        raise SourceError(f"cannot parse: {type(error).__name__}: {error}") from error


def parse_syntax(text: str, path: str) -> None:
    """``check_syntax`` by building the tree, as ``ast.parse`` does: the reference verdict (for tests and benchmarks)."""
    try:
        compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        raise SourceError(_syntax_message(error)) from error
    except (ValueError, RecursionError, MemoryError) as error:
        raise SourceError(f"cannot parse: {type(error).__name__}: {error}") from error


def _compiles_quietly(text: str, path: str) -> bool:
    """True when the bytecode compiler accepts ``text`` with no warning and a third of the recursion budget to spare.

    The compiler checks more than the parser (``return`` outside a function, ``nonlocal``,
    ``__future__`` names) and warns where the parser does not: those answers are never used,
    only "accepted quietly".  Building the tree nests a level or so deeper than compiling
    does, so the compiler runs with two thirds of the recursion limit: what it accepts
    nests far below the depth at which building the tree fails.
    """
    limit = sys.getrecursionlimit()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sys.setrecursionlimit(max(limit * 2 // 3, 1))
            try:
                compile(text, path, "exec", dont_inherit=True)
            finally:
                sys.setrecursionlimit(limit)
    except Exception:  # noqa: BLE001 - any failure: the tree-building parse decides
        return False
    return not caught


def summarize(
    data: bytes | str, path: str, module: str, is_package: bool = False, aliases: Aliases | None = None, file: str = "",
) -> FileSummary:
    """Analyse one file's content; SourceError (one line) when it is not valid Python.

    ``file`` is the file's identity as a module (its absolute path); ``aliases``
    the project names it imports that stand for torch APIs (``Workspace.aliases``).
    """
    if isinstance(data, bytes):
        text = decode(data).text
    else:
        text = data[1:] if data.startswith("\ufeff") else data
        if "\x00" in text:
            raise SourceError("binary file, not Python source (contains NUL bytes)")
    try:
        summary = analyze(text, path, module, is_package, aliases)
    except SyntaxError as error:
        raise SourceError(_syntax_message(error)) from error
    except (ValueError, RecursionError, MemoryError) as error:
        raise SourceError(f"cannot parse: {type(error).__name__}: {error}") from error
    summary.file = file
    return summary


def summarize_at(data: bytes | str, path: str, location: Location, aliases: Aliases | None = None) -> FileSummary:
    """``summarize`` for a located file (its module name and identity come from the import system)."""
    return summarize(data, path, location.module, location.is_package, aliases, str(location.path))


def _summarize_located(data: bytes, path: str, location: Location, aliases: Aliases | None) -> FileSummary:
    return summarize_at(data, path, location, aliases)


def new_workspace(
    config: Config | None = None, cache: SyntaxCache | None = None, summaries: SummaryCache | None = None,
    derived: bool = False,
) -> Workspace:
    """A workspace resolving imports from ``config``'s source roots (default: the current directory).

    ``derived``: reuse (and keep) the cross-file answers of earlier runs, with ``summaries`` (``derived_cache``).
    """
    project = Project((config or Config()).source_roots)
    answers = DerivedAnswers.open(summaries, project.roots) if derived and summaries is not None else None
    return Workspace(project, _summarize_located, cache, summaries, answers)


def default_workspace() -> Workspace:
    return new_workspace()


def _read_source(path: Path, max_bytes: int) -> bytes | str:
    """A file's content as the rules see it: its bytes, or a notebook's view (text).

    Only regular files under ``max_bytes`` are read (see ``read_source_bytes``).
    """
    data = read_source_bytes(path, max_bytes)
    return notebook.notebook_view(data).text if notebook.is_notebook(path) else data


def _prefilter(
    path_text: str, max_bytes: int, workspace: Workspace, cache: SyntaxCache | None = None,
) -> tuple[_Scanned | None, int, bool]:
    """Read and test one file: (result, 0, _) when done, else (None, its size, whether it needs analysis).

    A file only syntax-checked is done here when ``cache`` holds the verdict for its bytes,
    a file to analyse when the workspace's summary cache holds its summary.

    A file that cannot contain a finding is still parsed (``analyse`` False):
    a syntax error is reported in every file that is read.  A file that names
    no API can still hold one when it imports a project name bound to an API
    (``Workspace.may_have_findings``, decided from bytes).  When the record
    of kept answers has just read the file and vouches for its bytes
    (``Workspace.vouched``), it is neither read nor decided again.
    """
    location = workspace.project.locate(path_text)
    vouched = workspace.vouched(location.path) if not notebook.is_notebook(Path(path_text)) else None
    if vouched is not None and _readable_within(path_text, max_bytes):
        done = _answered(path_text, *vouched, workspace, cache)
        if done is not None:
            return done, 0, vouched[1]
    try:
        data = _read_source(Path(path_text), max_bytes)
    except OSError as error:
        return _Scanned(path_text, error=f"cannot read: {error.strerror or error}"), 0, False
    except SourceError as error:  # not a regular file, too big, a notebook that is not one, a cell that is not Python
        return _Scanned(path_text, error=str(error)), 0, False
    if isinstance(data, str):  # a notebook view, already parsed cell by cell
        _, facts = workspace.facts_for(data.encode("utf-8", "surrogatepass"))
        if not workspace.may_have_findings(location.path, facts):
            return _Scanned(path_text), 0, False
        return None, len(data), True
    found = workspace.content(location.path, data)
    assert found is not None
    digest, facts = found
    analyse = workspace.may_have_findings(location.path, facts)
    done = _answered(path_text, digest, analyse, workspace, cache)
    return (done, 0, analyse) if done is not None else (None, len(data), analyse)


def _answered(path_text: str, digest: bytes, analyse: bool, workspace: Workspace, cache: SyntaxCache | None) -> _Scanned | None:
    """A file's result from the caches alone: its syntax verdict, or the summary of a file to analyse (None: not kept)."""
    if not analyse:
        verdict = cache.get(digest) if cache is not None else None
        if verdict is None:
            return None
        return _Scanned(path_text, error=None if verdict == OK else verdict)  # the verdict a parse of exactly these bytes gave
    if workspace.summaries is None:
        return None
    located = workspace.project.locate_input(path_text)
    summary = workspace.summaries.get(workspace.summaries.key(digest, path_text, located, None), path_text, str(located.path))
    return None if summary is None else _Scanned(path_text, summary=summary)


def _readable_within(path_text: str, max_bytes: int) -> bool:
    """A regular file no bigger than the lint reads (else the read decides, and words the error)."""
    try:
        status = os.stat(path_text)
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size <= max_bytes


def _check_path(path_text: str, max_bytes: int) -> _Scanned:
    """Parse one file that cannot hold a finding, only to report a syntax error (in a worker for big runs).

    The digest of the bytes parsed comes back with a verdict that depends on them
    alone (valid, or a ``SyntaxError``), for the syntax cache.
    """
    try:
        data = read_source_bytes(Path(path_text), max_bytes)
        text = decode(data).text
    except OSError as error:
        return _Scanned(path_text, error=f"cannot read: {error.strerror or error}")
    except SourceError as error:
        return _Scanned(path_text, error=str(error))
    try:
        check_syntax(text, path_text)
    except SourceError as error:
        cacheable = isinstance(error.__cause__, SyntaxError)  # not RecursionError, MemoryError: those depend on the process
        return _Scanned(path_text, error=str(error), digest=digest_of(data) if cacheable else None)
    return _Scanned(path_text, digest=digest_of(data))


def _scan_one(task: tuple[str, bool, int, Location | None]) -> _Scanned:
    path_text, analyse, max_bytes, location = task
    if analyse and location is not None:
        return _analyze_path(path_text, max_bytes, location)
    return _check_path(path_text, max_bytes)


def _analyze_path(path_text: str, max_bytes: int, location: Location) -> _Scanned:
    """Parse and analyse one candidate file (runs in a worker process for big runs).

    The digest of the bytes analysed comes back with the summary, for the summary cache.
    """
    path = Path(path_text)
    try:
        data = _read_source(path, max_bytes)
    except OSError as error:
        return _Scanned(path_text, error=f"cannot read: {error.strerror or error}")
    except SourceError as error:
        return _Scanned(path_text, error=str(error))
    try:
        summary = summarize_at(data, path_text, location)
    except SourceError as error:
        return _Scanned(path_text, error=str(error))
    return _Scanned(path_text, summary=summary, digest=digest_of(data) if isinstance(data, bytes) else None)


def _scan_all(
    files: Sequence[Path], jobs: int, max_bytes: int, workspace: Workspace, cache: SyntaxCache | None = None,
) -> list[_Scanned]:
    """Prefilter every file here; parse the candidates, in worker processes when it pays.

    Syntax-only verdicts come from ``cache`` where it has them, and new ones are saved to it;
    the same for the summaries of analysed files in the workspace's summary cache.
    """
    names = [str(p) for p in files]
    results: list[_Scanned | None] = []
    tasks: list[tuple[int, int, bool]] = []  # (index, size, analyse)
    with cyclic_gc_paused():  # the scan's many small records would be rescanned again and again (a third of a warm run)
        for index, name in enumerate(names):
            done, size, analyse = _prefilter(name, max_bytes, workspace, cache)
            results.append(done)
            if done is None:
                tasks.append((index, size, analyse))
    located = {index: workspace.project.locate_input(names[index]) for index, _, analyse in tasks if analyse}
    workers = min(jobs if jobs > 0 else (os.cpu_count() or 1), len(tasks))
    total = sum(size for _, size, _ in tasks)
    if workers > 1 and (jobs > 1 or total >= PARALLEL_BYTES):
        # Largest first, one file per task: a few big model files dominate the time.
        order = sorted(tasks, key=lambda item: -item[1])
        logger.debug("parsing %d files (%d bytes) with %d processes", len(order), total, workers)
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            work = [(names[i], analyse, max_bytes, located.get(i)) for i, _, analyse in order]
            for (index, _, _), scanned in zip(order, pool.map(_scan_one, work, chunksize=max(1, len(work) // (workers * 8)))):
                results[index] = scanned
    else:
        for index, _, analyse in tasks:
            results[index] = _scan_one((names[index], analyse, max_bytes, located.get(index)))
    for index, _, analyse in tasks:
        checked = results[index]
        if checked is None or checked.digest is None:
            continue
        if not analyse and cache is not None:
            cache.put(checked.digest, checked.error or OK)
        elif analyse and checked.summary is not None and workspace.summaries is not None:
            key = workspace.summaries.key(checked.digest, names[index], located[index], None)
            workspace.summaries.put(key, checked.summary)
    return [item for item in results if item is not None]


def _suppressed(summary: FileSummary, candidate: Candidate) -> bool:
    codes = summary.noqa.get(candidate.site.line)
    # A listed code may be a prefix (``# noqa: WN1``), as flake8 reads it.
    return codes is not None and (not codes or any(candidate.code.startswith(code) for code in codes))


def _active(summary: FileSummary, found: Iterable[Candidate], config: Config) -> list[Candidate]:
    return [c for c in found if not _suppressed(summary, c) and config.enabled(c.code, summary.path)]


def _to_finding(path: str, candidate: Candidate) -> Finding:
    return finding(
        BY_CODE[candidate.code], path, candidate.message, fixable=candidate.fixable,
        line=candidate.site.line, column=candidate.site.column,
    )


def _within(found: list[Candidate], files: frozenset[str]) -> list[Candidate]:
    """``found`` with fixes that edit another file kept only where that file is in this run (else: no fix offered).

    A WN110 fix adds the fold to the serving file, a WN103 fix through an
    imported flag choice rewrites the binding in the file that writes it; a
    run that does not lint that file does not write it, so the finding is not
    shown as fixable there (never half a fix: the call's own file alone).
    """
    out = []
    for c in found:
        if c.insert is not None and c.insert.file not in files:
            c = dataclasses.replace(c, insert=None)
        if c.fix is not None and c.fix.binding_file and c.fix.binding_file not in files:
            c = dataclasses.replace(c, fix=None)
        out.append(c)
    return out


def _binding_of(summary: FileSummary, candidate: Candidate) -> tuple[str, tuple[int, int, int, int]] | None:
    """The binding a candidate's fix rewrites, as (file, span) (None: the fix rewrites only its own call)."""
    fix = candidate.fix
    if fix is None or fix.binding is None:
        return None
    return (fix.binding_file or summary.file or summary.path, fix.binding[0])


def _suppressed_bindings(
    summaries: list[FileSummary], found: dict[str, list[Candidate]], active: dict[str, list[Candidate]],
    workspace: Workspace,
) -> frozenset[tuple[str, tuple[int, int, int, int]]]:
    """Bindings a fix must not rewrite: one call through them is suppressed (``# noqa``, or its code off for that file).

    ``norm_f = weight_norm if flag else spectral_norm`` is shared by every
    call through ``norm_f``: rewriting it for one call changes the others too,
    and a fix must never change code the user suppressed.  A ``# noqa`` for
    the code on the binding's own line protects it as well.  Only the files
    of the run are seen (a call in a file outside it is not known).
    """
    out: set[tuple[str, tuple[int, int, int, int]]] = set()
    for summary in summaries:
        kept = {_identity(c) for c in active[summary.path]}
        for candidate in found[summary.path]:
            binding = _binding_of(summary, candidate)
            if binding is None or binding in out:
                continue
            if _identity(candidate) not in kept:
                logger.debug("%s:%d: %s suppressed: its binding is not rewritten", summary.path, candidate.site.line, candidate.code)
                out.add(binding)
                continue
            holder = summary if binding[0] == (summary.file or summary.path) else workspace.first(Path(binding[0]))
            codes = holder.noqa.get(binding[1][0]) if holder is not None else None
            if codes is not None and (not codes or any(candidate.code.startswith(code) for code in codes)):
                out.add(binding)
    return frozenset(out)


def _offered(
    summaries: list[FileSummary], found: dict[str, list[Candidate]], config: Config, workspace: Workspace,
    withheld: frozenset = frozenset(),
) -> tuple[dict[str, list[Candidate]], dict[str, list[Candidate]], frozenset]:
    """(every candidate, the active ones, the bindings withheld): no fix that would rewrite a suppressed call's binding."""
    active = {s.path: _active(s, found[s.path], config) for s in summaries}
    blocked = _suppressed_bindings(summaries, found, active, workspace) | withheld
    if blocked:
        found = {s.path: _withhold(s, found[s.path], blocked) for s in summaries}
        active = {s.path: _active(s, found[s.path], config) for s in summaries}
    return found, active, blocked


def _withhold(summary: FileSummary, found: list[Candidate], blocked: frozenset) -> list[Candidate]:
    """``found`` without the fixes that would rewrite a ``blocked`` binding (the findings stay, not fixable)."""
    if not blocked:
        return found
    return [dataclasses.replace(c, fix=None) if _binding_of(summary, c) in blocked else c for c in found]


def _rules_for(config: Config, summary: FileSummary) -> Callable[[str], bool]:
    """The codes the run reports for a file (a project-wide rule runs only for those)."""
    return lambda code: config.enabled(code, summary.path)


def _identity(candidate: Candidate) -> tuple:
    return (candidate.code, candidate.site.key)


def _applies(code: str, unsafe_fixes: bool) -> bool:
    """Whether this run applies fixes of ``code``: safe ones always, "needs review" ones only with ``--unsafe-fixes``."""
    return unsafe_fixes or BY_CODE[code].applicability is Applicability.SAFE


def plan_fixes(
    summaries: list[FileSummary], config: Config, unsafe_fixes: bool = True, workspace: Workspace | None = None,
    run_files: frozenset[str] = frozenset(),
    withheld: frozenset[tuple[str, tuple[int, int, int, int]]] = frozenset(),
) -> dict[str, tuple[list[Candidate], list[Candidate]]]:
    """Per path: (active findings now, fixes to apply).

    WN103 migrates an application to the modern spelling; the removals that
    migration would break are found by re-running the rules on the post-fix
    view and are fixed with it, even where WN101 itself is not selected.
    Without ``unsafe_fixes`` only fixes whose rule is ``Applicability.SAFE`` are planned.
    ``run_files``: the resolved paths of every file in the run (a statement fix may go into
    one that has no finding of its own); the summarised files are always in it.
    ``withheld``: bindings (file, span) not to rewrite besides those a suppression protects
    (one the fixer could not rewrite: the calls through it keep their removals as they are).
    """
    workspace = workspace or new_workspace(config)
    before = Context(summaries, workspace=workspace)
    files = run_files | frozenset(s.file or s.path for s in summaries)
    now = {s.path: _within(candidates(s, before, _rules_for(config, s)), files) for s in summaries}
    now, active, blocked = _offered(summaries, now, config, workspace, withheld)
    migrated = frozenset(
        (path, c.site.key) for path, found in active.items() for c in found
        if c.code == "WN103" and c.fixable and _applies(c.code, unsafe_fixes)
    )
    after = Context(summaries, migrated, workspace) if migrated else before
    plan: dict[str, tuple[list[Candidate], list[Candidate]]] = {}
    for summary in summaries:
        existing = {_identity(c) for c in now[summary.path]}
        post = (
            _withhold(summary, _within(candidates(summary, after, _rules_for(config, summary)), files), blocked)
            if migrated else now[summary.path]
        )
        chosen = {_identity(c) for c in _active(summary, post, config)}
        fixes = [
            c for c in post
            if c.fixable and _applies(c.code, unsafe_fixes) and (_identity(c) in chosen or _identity(c) not in existing)
        ]
        plan[summary.path] = (active[summary.path], fixes)
    return plan


def lint_files(files: list[Path], options: RunOptions) -> RunResult:
    """Lint ``files`` (and fix them with ``options.fix``; show diffs with ``options.diff``)."""
    result = RunResult()
    views = notebook.views_of([str(p) for p in files])  # notebooks: findings name cell and line
    cache = SyntaxCache.open(options.cache)
    workspace = new_workspace(options.config, cache, SummaryCache.open(options.cache), derived=True)
    scanned = _scan_all(files, options.jobs, options.config.max_source_bytes, workspace, cache)
    summaries: list[FileSummary] = []
    for item in scanned:
        if item.error is not None:
            result.errors.append(InputError(item.path, item.error))
        elif item.summary is not None:
            summaries.append(item.summary)
    config = options.config
    first_pass = summaries
    # A notebook's names are completed from its view (its Python), not from the JSON on disk.
    summaries = workspace.adopt(summaries, {path: view.text for path, view in views.items()})
    # Every file of the run by identity -> the path it was given as (statement fixes may target any of them).
    given = {str(workspace.project.locate_input(item.path).path): item.path for item in scanned if item.error is None}
    plan = plan_fixes(summaries, config, options.unsafe_fixes, workspace, frozenset(given))
    workspace.save_caches()  # what the scan and the rules learnt (dependencies' facts and summaries too)
    if not (options.fix or options.diff):
        for summary in summaries:
            result.findings.extend(_to_finding(summary.path, c) for c in plan[summary.path][0])
        if views:
            result.findings = notebook.place_findings(result.findings, views)
        result.findings.sort(key=Finding.sort_key)
        return result

    fixed_summaries: dict[str, FileSummary] = {}
    imported_from = _imported_from(summaries, workspace.project)
    origin, statements = _route(summaries, plan)
    found_keys = {(s.path, _identity(c)) for s in summaries for c in plan[s.path][0]}
    summarised = {s.file or s.path for s in summaries}
    extra = []
    for file in sorted(set(statements) - summarised):
        # A serving file with no finding of its own: summarised now, only to take the statement.
        try:
            extra.append(summarize_at(read_source_bytes(Path(given[file]), config.max_source_bytes), given[file], workspace.project.locate_input(given[file])))
        except (OSError, SourceError) as error:
            result.errors.append(InputError(given[file], f"fix not applied, file unchanged: {error}"))
    # Files that take a binding rewritten for calls in other files go first: when one cannot be rewritten,
    # the calls' own files are then fixed without migrating their removals (never half a fix).
    rebinding = {file for file, found in statements.items() if any(c.fix is not None and c.fix.binding_file for c in found)}
    order = sorted([*summaries, *extra], key=lambda s: (s.file or s.path) not in rebinding)
    failed: set[tuple[str, tuple[int, int, int, int]]] = set()
    replanned = False
    for summary in order:
        here = summary.file or summary.path
        if failed and not replanned and here not in rebinding:
            replanned = True
            plan = plan_fixes(summaries, config, options.unsafe_fixes, workspace, frozenset(given), frozenset(failed))
            origin, statements = _route(summaries, plan)
        found, fixes = plan.get(summary.path, ([], []))
        fixes = [c for c in fixes if _foreign_file(summary, c) is None] + statements.get(here, [])
        if not fixes:
            continue
        outcome = _fix_one(summary, fixes, options, result, workspace, imported_from.get(summary.file, frozenset()))
        applied = outcome[1] if outcome is not None else []
        if here in rebinding:
            done = {id(c) for c in applied}
            failed.update(
                (here, c.fix.binding[0]) for c in fixes
                if c.fix is not None and c.fix.binding is not None and c.fix.binding_file and id(c) not in done
            )
        if outcome is not None and outcome[0] is not None:
            fixed_summaries[summary.path] = outcome[0]
            for c in applied:
                where = origin.get(id(c), summary.path)
                if (where, _identity(c)) in found_keys:
                    result.fixed.append(_to_finding(where, c))
    if options.fix and fixed_summaries:
        # A fresh workspace: a fix may have changed what another file's names stand for (a binding rewritten there).
        final_workspace = new_workspace(config)
        fixed_views = notebook.views_of(list(fixed_summaries))
        summaries = final_workspace.adopt(
            [fixed_summaries.get(s.path, s) for s in first_pass],
            {path: view.text for path, view in {**views, **fixed_views}.items()},
        )
        final = Context(summaries, workspace=final_workspace)
        for summary in summaries:
            result.findings.extend(_to_finding(summary.path, c) for c in _active(summary, candidates(summary, final, _rules_for(config, summary)), config))
    else:
        for summary in summaries:
            result.findings.extend(_to_finding(summary.path, c) for c in plan[summary.path][0])
    if views:
        result.fixed = notebook.place_findings(result.fixed, views)
        after = notebook.views_of(list(fixed_summaries)) if options.fix else {}
        result.findings = notebook.place_findings(result.findings, {**views, **after})
    result.findings.sort(key=Finding.sort_key)
    result.fixed.sort(key=Finding.sort_key)
    return result


def _route(
    summaries: list[FileSummary], plan: dict[str, tuple[list[Candidate], list[Candidate]]],
) -> tuple[dict[int, str], dict[str, list[Candidate]]]:
    """(candidate id -> the path of its finding, file -> the fixes it takes for findings elsewhere).

    A fix may belong to another file: a statement in the serving code of a
    model built here (WN110), or the binding of a flag choice this file
    imports (WN103).
    """
    origin: dict[int, str] = {}
    statements: dict[str, list[Candidate]] = {}
    for summary in summaries:
        for candidate in plan[summary.path][1]:
            elsewhere = _foreign_file(summary, candidate)
            if elsewhere is not None:
                origin[id(candidate)] = summary.path
                statements.setdefault(elsewhere, []).append(candidate)
    return origin, statements


def _foreign_file(summary: FileSummary, candidate: Candidate) -> str | None:
    """The file (resolved path) a candidate's fix edits when that is not its own file (None: its own)."""
    if candidate.insert is not None:
        return candidate.insert.file
    fix = candidate.fix
    if fix is not None and fix.binding_file and fix.binding_file != (summary.file or summary.path):
        return fix.binding_file
    return None


def _imported_from(summaries: list[FileSummary], project: Project) -> dict[str, frozenset[str]]:
    """File -> the names the other scanned files import from it (the fixer must not drop those imports).

    A file that imports the module itself may use any of its names: ``"*"`` says so.
    """
    names: dict[str, set[str]] = {}
    for summary in summaries:
        location = project.locate(summary.file or summary.path)
        for target in summary.imports:
            found = project.resolve(target, location)
            if found is not None:
                names.setdefault(str(found[0]), set()).add(found[1].partition(".")[0] or "*")
    return {file: frozenset(found) for file, found in names.items()}


def _fix_one(
    summary: FileSummary, fixes: list[Candidate], options: RunOptions, result: RunResult, workspace: Workspace,
    keep: frozenset[str] = frozenset(),
) -> tuple[FileSummary | None, list[Candidate]] | None:
    """Fix one file: (its new first-pass summary, or None with ``--diff``; the candidates fixed), None when nothing changed."""
    path = Path(summary.path)
    try:
        data = read_source_bytes(path, options.config.max_source_bytes)
        if notebook.is_notebook(path):
            view = notebook.notebook_view(data)
            new_view, applied = apply_fixes(view.text, summary, fixes, keep)
            new_data = notebook.rewrite_notebook(data, view, str(new_view))
            checked: bytes | str = new_view
        else:
            fixed, applied = apply_fixes(data, summary, fixes, keep)
            new_data = fixed if isinstance(fixed, bytes) else fixed.encode("utf-8")  # bytes in, bytes out
            checked = new_data
        if not applied or new_data == data:
            return None
        location = workspace.project.locate_input(path)
        new_summary = summarize_at(checked, summary.path, location)  # proves the result is valid Python (first pass)
    except (OSError, FixError, SourceError) as error:
        result.errors.append(InputError(summary.path, f"fix not applied, file unchanged: {error}"))
        return None
    if options.diff:
        result.diffs.append(unified_patch(data, new_data, summary.path))
        return None, applied
    try:
        atomic_write_bytes(path, new_data)
    except OSError as error:
        result.errors.append(InputError(summary.path, f"cannot write the fix, file unchanged: {error}"))
        return None
    logger.debug("fixed %d finding(s) in %s", len(applied), summary.path)
    return new_summary, applied


def lint_source(source: str | bytes, path: str, config: Config | None = None) -> list[Finding]:
    """Findings for one file's content; for editor and flake8 use.

    The project modules it imports are read from disk (resolved from
    ``path`` and the config's source roots), so the answer is the one a
    whole-tree run gives for that file.  Raises ``SourceError`` (a
    ValueError with a one-line message) when the content is not Python source.
    """
    config = config or Config()
    workspace = new_workspace(config)
    summary = _summarize_given(source, path, workspace)
    found = _within(
        candidates(summary, Context([summary], workspace=workspace), _rules_for(config, summary)),
        frozenset({summary.file or summary.path}),
    )
    active = _offered([summary], {summary.path: found}, config, workspace)[1][summary.path]
    return sorted((_to_finding(path, c) for c in active), key=Finding.sort_key)


def _summarize_given(source: str | bytes, path: str, workspace: Workspace) -> FileSummary:
    """Summary of in-memory content for ``path``; its imports are read from disk as needed."""
    summary = summarize_at(source, path, workspace.project.locate_input(path))
    return workspace.adopt([summary], {path: source})[0]


def fix_source(
    source: str | bytes, path: str, config: Config | None = None, *, unsafe_fixes: bool = True,
) -> tuple[str | bytes, list[Finding]]:
    """Fix one file's content; returns the new content (same type as given) and the findings fixed.

    Raises ``SourceError`` when the content is not Python; when a fix cannot be
    applied the content comes back unchanged (and the reason is logged).
    The caller asked for the fix, so fixes that need review are applied too
    unless ``unsafe_fixes=False`` (the CLI's ``--fix`` passes that).
    """
    config = config or Config()
    workspace = new_workspace(config)
    summary = _summarize_given(source, path, workspace)
    found, fixes = plan_fixes([summary], config, unsafe_fixes, workspace)[path]
    if not fixes:
        return source, []
    try:
        new_source, applied = apply_fixes(source, summary, fixes)
        summarize_at(new_source, path, workspace.project.locate_input(path))
    except (FixError, SourceError) as error:
        logger.warning("%s: fix not applied: %s", path, error)
        return source, []
    found_keys = {_identity(c) for c in found}
    return new_source, [_to_finding(path, c) for c in applied if _identity(c) in found_keys]
