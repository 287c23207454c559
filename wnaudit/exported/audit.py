"""``audit_exported_programs``: audit (and with ``--fix`` fold) every ``.pt2`` input.

The audit is pure reading (see :mod:`.archive`); one bad input becomes one
:class:`InputError` line naming the file and the problem, and the other
inputs are still audited.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from ..common.findings import Finding, InputError, RunResult, finding
from ..common.interrupts import raise_if_interrupted
from ..common.options import RunOptions
from ..common.progress import heartbeat
from ..core.catalogue import FOLD_BEFORE_EXPORT_API
from ..core.torch_api import TorchMissingError, missing
from .aoti import constant_names, weight_norm_pairs
from .archive import ArchiveContents, read_archive
from .codes import AOTI_PAIR, DECOMPOSED, FUSED
from .errors import ExportedProgramError
from .graph import SiteShape, WeightNormSite, find_weight_norms
from .sniff import ArchiveKind

logger = logging.getLogger(__name__)


def audit_exported_programs(paths: Sequence[Path], options: RunOptions) -> RunResult:
    """Audit every archive in ``paths``; fold the torch.export ones with ``options.fix``."""
    result = RunResult()
    for path in paths:
        result.extend(audit_one(Path(path), options))
        result.checked_checkpoints = (result.checked_checkpoints or 0) + 1
    return result


def audit_one(path: Path, options: RunOptions) -> RunResult:
    try:
        contents = read_archive(path)
        findings = findings_for(contents, str(path))
        sites = fixable_sites(contents, str(path), options)
        if options.fix and sites and (options.output is not None or path not in options.read_only):
            from .fix import fix_archive

            with heartbeat(f"folding {path}", announce=False):  # a line every 10 s; an error stays one line
                fix_archive(path, contents, sites, options)
            fixed = [item for item in findings if item.fixable and options.config.enabled(item.code, str(path))]
            return RunResult(findings=[item for item in findings if item not in fixed], fixed=fixed)
        if options.fix and options.output is not None:
            from .fix import copy_unchanged

            copy_unchanged(path, options.output)
        return RunResult(findings=findings)
    except Exception as error:
        raise_if_interrupted()
        if options.verbose:
            logger.debug("%s: %s", path, error, exc_info=error)
        return RunResult(errors=[InputError(str(path), _problem(error))])


def _problem(error: Exception) -> str:
    if isinstance(error, (ExportedProgramError, TorchMissingError)):
        return str(error)
    if isinstance(error, PermissionError):
        return "permission denied: cannot read or replace the file"
    if isinstance(error, OSError):
        return f"cannot read or write: {error.strerror or error}"
    if isinstance(error, ImportError):
        return missing(error.name or "a dependency", "fixing an exported program")
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"unexpected {type(error).__name__}: {first}".rstrip(": ")


def fixable_sites(contents: ArchiveContents, path: str, options: RunOptions) -> list[WeightNormSite]:
    """The sites ``--fix`` folds: those of a torch.export archive whose code is selected (as checkpoints do)."""
    if contents.kind is not ArchiveKind.EXPORTED_PROGRAM:
        return []
    return [
        site for entry in contents.models for site in find_weight_norms(entry.program)
        if options.config.enabled((FUSED if site.shape is SiteShape.FUSED else DECOMPOSED).code, path)
    ]


def findings_for(contents: ArchiveContents, path: str) -> list[Finding]:
    """The WN4xx findings of one archive, in graph (or constant) order."""
    found: list[Finding] = []
    fixable = contents.kind is ArchiveKind.EXPORTED_PROGRAM
    for entry in contents.models:
        prefix = "" if entry.name == "model" or len(contents.models) == 1 else f"{entry.name}: "
        found.extend(_site_finding(site, path, prefix, fixable) for site in find_weight_norms(entry.program))
    if contents.kind is ArchiveKind.AOTI_PACKAGE:
        if not constant_names(contents):
            logger.warning("%s: the AOTInductor package names no constants in its wrapper source or weights config; its weights were not audited", path)
        for group in weight_norm_pairs(contents):
            found.append(
                finding(
                    AOTI_PAIR, path,
                    f"AOTInductor package computes weight norm from constants {group.key('g')} and {group.key('v')} on "
                    f"every call; a compiled package cannot be folded: fold the model with {FOLD_BEFORE_EXPORT_API} "
                    "before exporting and compile again",
                    fixable=False, object=group.folded_key,
                )
            )
    return found


def _site_finding(site: WeightNormSite, path: str, prefix: str, fixable: bool) -> Finding:
    info = FUSED if site.shape is SiteShape.FUSED else DECOMPOSED
    how = f"aten.{site.operator}" if site.shape is SiteShape.FUSED else "norm, div and mul"
    remedy = "wnaudit --fix folds it into one stored weight" if fixable else f"fold with {FOLD_BEFORE_EXPORT_API} before exporting"
    return finding(
        info, path,
        f"{prefix}exported program computes weight norm ({how}) from {site.g.fqn} and {site.v.fqn} on every call; {remedy}",
        fixable=fixable, object=site.folded_name,
    )
