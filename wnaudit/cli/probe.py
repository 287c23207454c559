"""The ``wnaudit probe`` command: see what a served model computes, through the project's own loader.

Registered on first use (``command._LAZY_COMMANDS``): a lint run never imports
it.  Only this command and ``bench`` import or run project code, and only when
the user runs them.  Findings, ``--select`` and exit statuses are the lint's
(``outcome.py``): 0 clean, 1 findings, 2 an error (one line each).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from ..common.config import Config, display_path
from ..common.findings import Finding, InputError, RunResult
from ..probe.run import ProbeRequest, probe as probe_entry
from ..report import FORMAT_ALIASES, FORMATS
from .errors import EXIT_ERROR, OneLineUsageError
from .logs import configure_cli_logging
from .outcome import exit_status, load_run_config, report_error_line, write_findings
from .streams import Written, guard_standard_streams

#: What a fold written into the loader folds: a live weight norm in the returned module (either spelling).
#: A WN206 without one (a kernel called by hand, a norm outside the module tree) is not the loader's to fix.
_FOLDED_BY_THE_FIX = frozenset({"WN201", "WN202"})


def _shapes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    from ..bench.command import parse_shape

    return tuple(tuple(parse_shape(value)) for value in values)


@click.command("probe", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click.option("--input-shape", "input_shapes", multiple=True, callback=_shapes,
              help="Shape of a random input for one watched inference call, e.g. 1,80,50 (repeat for several inputs).")
@click.option("--input", "input_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A tensor file (torch.save of a tensor, a list of tensors or a dict of named ones; read weights_only) to call the model with.")
@click.option("--fix", is_flag=True, help="Put the fold into the loader's source where it returns the model, then probe again.")
@click.option(
    "--output-format", "--format", "output_format", type=click.Choice([*FORMATS, *FORMAT_ALIASES]),
    default="concise", show_default=True, help="How findings are printed (--format is an alias; text = concise).",
)
@click.option("--color", "color_choice", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
@click.option("--select", multiple=True, help="Rule codes or prefixes to report (comma-separated); replaces the configured selection.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to report on top of the selection (comma-separated).")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to skip (comma-separated).")
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), help="pyproject.toml to read [tool.wnaudit] from.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging.")
@click.pass_context
def probe(
    ctx: click.Context, targets: tuple[str, ...], input_shapes: tuple[tuple[int, ...], ...], input_file: Path | None,
    fix: bool, output_format: str, color_choice: str, select: tuple[str, ...], extend_select: tuple[str, ...],
    ignore: tuple[str, ...], config_path: Path | None, exit_zero: bool, quiet: bool, verbose: bool,
) -> None:
    """Call a project's loader, audit the model it returns and watch one inference call.

    TARGET is the loader: 'package.module:callable' or 'path/to/file.py:callable',
    called with no arguments (the current directory is importable). Without
    TARGET, the entries of [tool.wnaudit] serving are probed. The returned model
    is audited for live reparametrizations (WN2xx); with --input-shape or
    --input it is called once under torch.inference_mode inside wnaudit.watch
    (WN206/WN207). THIS IMPORTS AND RUNS THE PROJECT'S CODE.
    """
    closed = guard_standard_streams()
    configure_cli_logging(verbose)
    if input_shapes and input_file is not None:
        raise click.UsageError("--input-shape and --input are exclusive: give random shapes or a saved input")
    config = load_run_config((), config_path, select=select, extend_select=extend_select, ignore=ignore,
                             exclude=(), extend_exclude=(), force_exclude=None)
    entries = targets or config.serving
    if not entries:
        raise OneLineUsageError("no TARGET given and no [tool.wnaudit] serving entries; try: wnaudit probe pkg.serve:load_model")
    request = ProbeRequest(input_shapes=input_shapes, input_file=input_file, search=config.source_roots if config.src else ())
    result = RunResult()
    for spec in entries:
        result.extend(_probe_one(spec, request, config, fix=fix))
    result.findings = [f for f in result.findings if config.enabled(f.code, f.path)]
    result.fixed = [f for f in result.fixed if config.enabled(f.code, f.path)]
    if output_format != "github":  # github: errors are annotations on stdout already
        for error in result.errors:
            report_error_line("error", f"{error.path}: {error.message}")
    written = write_findings(
        result, closed, output_format=output_format, color_choice=color_choice, diff=False, fix=fix, quiet=quiet,
        statistics=False, show_fixes=fix, unsafe_fixes=False, checked=len(entries),
    )
    ctx.exit(EXIT_ERROR if written is Written.FAILED else exit_status(result, exit_zero))


@dataclass(frozen=True)
class _Key:
    code: str
    object: str | None

    @classmethod
    def of(cls, found: Finding) -> "_Key":
        return cls(found.code, found.object)


def _probe_one(spec: str, request: ProbeRequest, config: Config, *, fix: bool) -> RunResult:
    """Probe ``spec``; with ``fix``, fold in the loader's source and probe it again (a fresh import)."""
    first = probe_entry(spec, request)
    reported = any(config.enabled(f.code, f.path) for f in first.result.findings)
    foldable = any(f.code in _FOLDED_BY_THE_FIX for f in first.result.findings)
    if not fix or first.entry is None or first.result.errors or not (reported and foldable):
        return first.result
    from ..common.entry_points import forget_project_modules
    from ..probe.fix import LoaderFixError, fix_loader

    try:
        edited = fix_loader(first.entry, config)
    except LoaderFixError as error:
        first.result.errors.append(InputError(spec, f"--fix: {error}"))
        return first.result
    report_error_line("fixed", f"{display_path(edited)}: {first.entry.attribute}() folds the model before returning it")
    forget_project_modules(first.entry)
    again = probe_entry(spec, request).result
    remaining = {_Key.of(f) for f in again.findings}
    again.fixed = [f for f in first.result.findings if _Key.of(f) not in remaining]
    return again
