"""The ``wnaudit`` command line.

``wnaudit [OPTIONS] [PATHS]...`` lints Python source and audits checkpoints;
``wnaudit bench`` measures what folding buys on a model.  Exit status: 0 clean
(or everything fixed), 1 findings remain, 2 usage error, unreadable input or
a report that could not be written (see :mod:`.streams`), 130 / 143
interrupted by SIGINT / SIGTERM (see :mod:`.signals`).
"""

from __future__ import annotations

import atexit
import dataclasses
import gc
import logging
import sys
from pathlib import Path
from typing import Any, Sequence

import click

from .. import __version__
from ..common.config import Config
from ..common.gc_pause import LINT_THRESHOLDS
from .discovery import Inputs, discover, distinct_checkpoints
from .stdin import STDIN_NAME, check_stdin, read_stdin, wants_stdin, write_stdout
from .errors import EXIT_ERROR, OneLineUsageError, one_line
from .outcome import EXIT_CLEAN, is_terminal as _is_terminal, report_error_line
from .outcome import exit_status as _exit_status, load_run_config as _load_config, write_findings as _report
from ..common.findings import Finding, RunResult
from .logs import configure_cli_logging
from .signals import interruptions_end_cleanly
from .streams import Written, guard_standard_streams
from ..common.options import RunOptions
from ..report import FORMAT_ALIASES, FORMATS


#: Subcommands registered on first use (``_DefaultCommandGroup.get_command``).
_LAZY_COMMANDS = ("bench", "probe")


class _DefaultCommandGroup(click.Group):
    """A group whose default command is ``check``: ``wnaudit PATHS`` == ``wnaudit check PATHS``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands and args[0] not in (*_LAZY_COMMANDS, "--version"):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """``bench`` and ``probe`` are imported when asked for (a lint run never needs them: ~12 ms of every run's start)."""
        if cmd_name == "bench" and cmd_name not in self.commands:
            from ..bench.command import bench

            self.add_command(bench)
        elif cmd_name == "probe" and cmd_name not in self.commands:
            from .probe import probe

            self.add_command(probe)
        return super().get_command(ctx, cmd_name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        guard_standard_streams()  # first: a usage error on a closed stderr still exits 2
        return super().main(*args, **kwargs)

    # Usage errors of the group and of its commands become one ``wnaudit: error:`` line (cli/errors.py).
    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise one_line(error) from error

    def invoke(self, ctx: click.Context) -> object:
        with interruptions_end_cleanly():  # SIGINT/SIGTERM: temporaries removed, exit 130/143
            try:
                return super().invoke(ctx)
            except click.UsageError as error:  # the subcommand's own options and checks
                raise one_line(error) from error

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        check = self.commands["check"]
        with click.Context(check, info_name=ctx.info_name, parent=None) as check_ctx:
            check.format_help(check_ctx, formatter)






@click.group(cls=_DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="wnaudit")
def main() -> None:
    """wnaudit: find live weight norms and the code that keeps them alive; fold them."""


class _CheckCommand(click.Command):
    """``check`` is the default command, so its usage line shows the plain form."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.find_root().info_name or "wnaudit", " ".join(self.collect_usage_pieces(ctx)))


@main.command(
    "check", cls=_CheckCommand,
    epilog="Measure what folding buys on a model: wnaudit bench --help. See what a served model computes: wnaudit probe --help",
)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--fix", is_flag=True, help="Apply fixes in place: rewrite source, fold checkpoints atomically.")
@click.option("--diff", is_flag=True, help="Print source fixes as a unified diff; write nothing.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="With --fix on one checkpoint or exported program: write the folded file here.")
@click.option("--trust-pickle", is_flag=True, help="Allow unpickling full-module checkpoints. This RUNS CODE FROM THE FILE.")
@click.option(
    "--fix-training-in-place",
    is_flag=True,
    help="With --fix: fold checkpoints holding optimizer/scheduler state in place too (they can no longer resume training).",
)
@click.option("--discard-journal", is_flag=True, help="Delete the journal an interrupted fix left (a sharded checkpoint or a multi-file source fix), instead of finishing it.")
@click.option(
    "--max-fix-bytes", type=click.IntRange(min=1), default=None, metavar="BYTES",
    help="With --fix: the most bytes a checkpoint or exported-program fix may write (default: 16x the input, at least 256 MiB; a zip bomb guard).",
)
@click.option("--fold-spectral", is_flag=True, help="With --fix on checkpoints: fold spectral norm too (eval-mode semantics).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff: also apply the fixes that need review (marked [-]).")
@click.option("--show-fixes", is_flag=True, help="With --fix: list the findings that were fixed.")
@click.option(
    "--output-format", "--format", "output_format", type=click.Choice([*FORMATS, *FORMAT_ALIASES]),
    default="concise", show_default=True, help="How findings are printed (--format is an alias; text = concise).",
)
@click.option(
    "--color", "color_choice", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
    help="Colour the text formats (auto: on a terminal other than TERM=dumb, unless NO_COLOR is set; FORCE_COLOR forces it).",
)
@click.option("--select", multiple=True, help="Rule codes or prefixes to report (comma-separated); replaces the configured selection.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to report on top of the selection (comma-separated).")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to skip (comma-separated).")
@click.option("--exclude", multiple=True, help="Glob patterns to skip in directory walks; replaces the configured and default excludes.")
@click.option("--extend-exclude", multiple=True, help="Glob patterns to skip in directory walks, on top of the excludes.")
@click.option("--force-exclude", is_flag=True, default=None, help="Apply excludes to paths named on the command line too (pre-commit passes it).")
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), help="pyproject.toml to read [tool.wnaudit] from.")
@click.option("--statistics", is_flag=True, help="Print a count per rule code instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, help="Worker processes for the source lint (0: automatic).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the per-user cache (also: WNAUDIT_NO_CACHE=1).")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging and full tracebacks for unreadable inputs.")
@click.option("--explain", metavar="CODE", help="Print the documentation page of a rule code and exit.")
@click.option("--stdin-filename", metavar="PATH", help="With PATH '-': lint stdin as this file (--fix prints the fixed source).")
@click.version_option(__version__, "--version", prog_name="wnaudit")
@click.pass_context
def check(
    ctx: click.Context,
    paths: tuple[Path, ...],
    fix: bool,
    diff: bool,
    output: Path | None,
    trust_pickle: bool,
    fix_training_in_place: bool,
    discard_journal: bool,
    max_fix_bytes: int | None,
    fold_spectral: bool,
    unsafe_fixes: bool,
    show_fixes: bool,
    output_format: str,
    color_choice: str,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    force_exclude: bool | None,
    config_path: Path | None,
    statistics: bool,
    exit_zero: bool,
    quiet: bool,
    jobs: int,
    no_cache: bool,
    verbose: bool,
    explain: str | None,
    stdin_filename: str | None,
) -> None:
    """Lint Python source and audit checkpoints for live weight norms.

    PATHS are .py/.pyi files, notebooks (.ipynb), directories (recursed) and
    checkpoints (.pt .pth .bin .ckpt .safetensors, *.index.json, or any file
    that looks like one), torch.export archives and AOTInductor packages (.pt2,
    recognised by layout).
    """
    closed = guard_standard_streams()  # before any file is opened: none may take a closed descriptor's number
    configure_cli_logging(verbose)
    if quiet:  # -q: findings only, no progress lines either
        logging.getLogger("wnaudit.progress").setLevel(logging.WARNING)
    if explain is not None:
        ctx.exit(_explain(explain))
    stdin = wants_stdin(paths, stdin_filename)
    _check_arguments(paths if not stdin else (Path(stdin_filename or STDIN_NAME),), fix=fix, diff=diff, output=output)
    config = _load_config(paths if not stdin else (Path(stdin_filename or "."),), config_path, select=select,
                          extend_select=extend_select, ignore=ignore,
                          exclude=exclude, extend_exclude=extend_exclude, force_exclude=force_exclude,
                          use_cache=not no_cache)
    if max_fix_bytes is not None:
        config = dataclasses.replace(config, max_fix_bytes=max_fix_bytes)
    if stdin:
        ctx.exit(_check_stdin(stdin_filename or STDIN_NAME, config, closed, fix=fix, diff=diff, unsafe_fixes=unsafe_fixes,
                              output_format=output_format, quiet=quiet, exit_zero=exit_zero))
    inputs = discover(list(paths), config)
    if output is not None and (len(distinct_checkpoints(inputs.checkpoints)) + len(inputs.exported) != 1 or inputs.sources):
        raise click.UsageError("-o/--output works with exactly one checkpoint or exported-program input")
    options = RunOptions(
        config=config,
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        diff=diff,
        output=output,
        trust_pickle=trust_pickle,
        spectral=fold_spectral,
        progress=fix and _is_terminal(sys.stderr),
        jobs=jobs,
        verbose=verbose,
        module_auditor=_audit_module,
        fix_training_in_place=fix_training_in_place,
        discard_journal=discard_journal,
        read_only=frozenset(inputs.read_only),
        walked=frozenset(inputs.walked),
        cache=not no_cache,
    )
    result = _run_engines(inputs, options)
    _count_walked(result, paths, inputs)
    _report_input_errors(result, inputs, output_format)
    written = _report(
        result, closed, output_format=output_format, color_choice=color_choice, diff=diff, fix=fix,
        quiet=quiet, statistics=statistics, show_fixes=show_fixes, unsafe_fixes=unsafe_fixes,
        checked=len(inputs.sources) + len(inputs.checkpoints) + len(inputs.exported),
    )
    ctx.exit(EXIT_ERROR if written is Written.FAILED else _exit_status(result, exit_zero))


def _check_stdin(
    name: str, config: Config, closed: frozenset[str], *, fix: bool, diff: bool, unsafe_fixes: bool, output_format: str,
    quiet: bool, exit_zero: bool,
) -> int:
    """``wnaudit -``: stdout is the fixed source (``--fix``) or the patch (``--diff``), else the report."""
    result, text = check_stdin(read_stdin(), name, config, fix=fix, diff=diff, unsafe_fixes=unsafe_fixes)
    if text is not None:
        write_stdout(text)
    _report_input_errors(result, Inputs(sources=[Path(name)]), output_format)
    written = _report(
        result, closed, output_format=output_format, color_choice="never", diff=text is not None, fix=fix, quiet=quiet,
        statistics=False, show_fixes=False, unsafe_fixes=unsafe_fixes, checked=1,
    )
    return EXIT_ERROR if written is Written.FAILED else _exit_status(result, exit_zero)


def _check_arguments(paths: tuple[Path, ...], *, fix: bool, diff: bool, output: Path | None) -> None:
    """The usage errors that need no config and no input read."""
    if not paths:
        raise click.UsageError("no paths given; try: wnaudit .")
    if fix and diff:
        raise click.UsageError("--fix and --diff are exclusive: --diff only shows what --fix would write")
    if output is not None and not fix:
        raise click.UsageError("-o/--output needs --fix")
    if output is not None:
        _check_output_path(output)


def _run_engines(inputs: Inputs, options: RunOptions) -> RunResult:
    """Lint the sources, audit the checkpoints (and fix them): all the work is done before anything is reported."""
    result = RunResult(errors=list(inputs.errors))
    if inputs.sources:
        from ..source import lint_files

        result.extend(lint_files(inputs.sources, options))
    if inputs.checkpoints:
        # Imports torch only when a checkpoint is actually read; without torch
        # each checkpoint gets an input error saying what to install.
        from ..checkpoint import audit_checkpoints

        result.extend(audit_checkpoints(inputs.checkpoints, options))
    if inputs.exported:  # torch.export archives and AOTInductor packages: read without torch
        from ..exported import audit_exported_programs

        result.extend(audit_exported_programs(inputs.exported, options))
    result.findings = [f for f in result.findings if options.config.enabled(f.code, f.path)]
    return result


def _count_walked(result: RunResult, paths: tuple[Path, ...], inputs: Inputs) -> None:
    """The summary says what a directory walk found; named files need no count."""
    if any(path.is_dir() for path in paths):
        result.checked_sources, result.checked_programs = len(inputs.sources), len(inputs.exported)
        result.checked_checkpoints = len(distinct_checkpoints(inputs.checkpoints))
    else:
        result.checked_sources = result.checked_checkpoints = result.checked_programs = None


def _report_input_errors(result: RunResult, inputs: Inputs, output_format: str) -> None:
    if not inputs.sources and not inputs.checkpoints and not inputs.exported and not inputs.errors:
        report_error_line("warning", "no Python file, notebook or checkpoint found under the given paths: nothing checked")
    if output_format != "github":  # github: errors are annotations on stdout already
        for input_error in result.errors:
            report_error_line("error", f"{input_error.path}: {input_error.message}")


def _check_output_path(output: Path) -> None:
    """``-o`` must name a file to write, in a directory that exists; say so before reading anything."""
    if output.is_dir():
        raise OneLineUsageError(f"-o/--output: {output} is a directory; give the path of the file to write")
    parent = output.absolute().parent
    if not parent.is_dir():
        raise OneLineUsageError(f"-o/--output: {output}: directory {parent} does not exist")


def _audit_module(module: object, path: str) -> list[Finding]:
    """The module entrance, imported only when a checkpoint holds a pickled module (it needs torch)."""
    from ..module import audit_module

    return audit_module(module, path=path)


def _explain(code: str) -> int:
    from ..report.rule_pages import page_codes, read_page

    try:
        click.echo(read_page(code), nl=False)
    except KeyError:
        report_error_line("error", f"unknown rule code {code!r}; known codes: {', '.join(page_codes())}")
        return EXIT_ERROR
    return EXIT_CLEAN


# ``bench`` is added on first use (``_LAZY_COMMANDS``); it imports torch only when it runs: the lint must never import it


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit status (for tests and embedding)."""
    try:
        status = main.main(args=list(argv) if argv is not None else None, prog_name="wnaudit", standalone_mode=False)
    except click.exceptions.Exit as exit_:
        return int(exit_.exit_code)
    except click.UsageError as error:  # raised outside the group's own handling
        one_line(error).show()
        return EXIT_ERROR
    except click.ClickException as error:
        error.show()
        return int(error.exit_code)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    # Without standalone mode, click returns ctx.exit()'s status instead of raising.
    return int(status) if isinstance(status, int) else EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    main()


def process_main() -> None:
    """The ``wnaudit`` process (console script, ``python -m wnaudit.cli``): the command, and an exit that walks no heap.

    A big lint leaves a heap of cyclic records that only a full collection frees: with Python's
    thresholds one right after the lint and one at exit walked all of it (about 1 s each on a
    2.8 M-line tree).  The process keeps a lint's thresholds throughout and freezes
    what is left at exit; the OS takes the memory back.  In-process callers (``run``) free theirs.
    """
    gc.set_threshold(*LINT_THRESHOLDS)
    atexit.register(gc.freeze)
    main()
