"""The ``wnaudit`` command line.

``wnaudit [OPTIONS] [PATHS]...`` lints Python source and audits checkpoints;
``wnaudit bench`` measures what folding buys on a model.  Exit status: 0 clean
(or everything fixed), 1 findings remain, 2 usage error or unreadable input,
130 / 143 interrupted by SIGINT / SIGTERM (see :mod:`.signals`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import click

from .. import __version__
from ..bench.command import bench
from ..common.config import ConfigError, load_config
from .discovery import discover
from ..common.findings import Finding, RunResult
from .logs import configure_cli_logging
from .signals import interruptions_end_cleanly
from ..common.options import RunOptions
from ..report import FORMATS, renderer

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _DefaultCommandGroup(click.Group):
    """A group whose default command is ``check``: ``wnaudit PATHS`` == ``wnaudit check PATHS``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands and args[0] not in ("--version",):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        with interruptions_end_cleanly():  # SIGINT/SIGTERM: temporaries removed, exit 130/143
            return super().invoke(ctx)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        check = self.commands["check"]
        with click.Context(check, info_name=ctx.info_name, parent=None) as check_ctx:
            check.format_help(check_ctx, formatter)


def _split_codes(values: Sequence[str]) -> list[str]:
    return [part.strip().upper() for value in values for part in value.split(",") if part.strip()]




@click.group(cls=_DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="wnaudit")
def main() -> None:
    """wnaudit: find live weight norms and the code that keeps them alive; fold them."""


class _CheckCommand(click.Command):
    """``check`` is the default command, so its usage line shows the plain form."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.find_root().info_name or "wnaudit", " ".join(self.collect_usage_pieces(ctx)))


@main.command("check", cls=_CheckCommand, epilog="Measure what folding buys on a model: wnaudit bench --help")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--fix", is_flag=True, help="Apply fixes in place: rewrite source, fold checkpoints atomically.")
@click.option("--diff", is_flag=True, help="Print source fixes as a unified diff; write nothing.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="With --fix on one checkpoint: write the folded checkpoint here.")
@click.option("--trust-pickle", is_flag=True, help="Allow unpickling full-module checkpoints. This RUNS CODE FROM THE FILE.")
@click.option(
    "--fix-training-in-place",
    is_flag=True,
    help="With --fix: fold checkpoints holding optimizer/scheduler state in place too (they can no longer resume training).",
)
@click.option("--fold-spectral", is_flag=True, help="With --fix on checkpoints: fold spectral norm too (eval-mode semantics).")
@click.option("--format", "output_format", type=click.Choice(sorted(FORMATS)), default="text", show_default=True)
@click.option("--select", multiple=True, help="Rule codes or prefixes to report (comma-separated).")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to skip (comma-separated).")
@click.option("--exclude", multiple=True, help="Glob patterns of paths to skip in directories.")
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), help="pyproject.toml to read [tool.wnaudit] from.")
@click.option("--statistics", is_flag=True, help="Print a count per rule code.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, help="Worker processes for the source lint (0: automatic).")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging and full tracebacks for unreadable inputs.")
@click.option("--explain", metavar="CODE", help="Print the documentation page of a rule code and exit.")
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
    fold_spectral: bool,
    output_format: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    config_path: Path | None,
    statistics: bool,
    exit_zero: bool,
    quiet: bool,
    jobs: int,
    verbose: bool,
    explain: str | None,
) -> None:
    """Lint Python source and audit checkpoints for live weight norms.

    PATHS are .py files, directories (recursed) and checkpoints (.pt .pth .bin
    .ckpt .safetensors, *.index.json, or any file that looks like one).
    """
    configure_cli_logging(verbose)
    if explain is not None:
        ctx.exit(_explain(explain))
    if not paths:
        raise click.UsageError("no paths given; try: wnaudit .")
    if fix and diff:
        raise click.UsageError("--fix and --diff are exclusive: --diff only shows what --fix would write")
    if output is not None and not fix:
        raise click.UsageError("-o/--output needs --fix")
    try:
        config = load_config(list(paths), config_path).with_overrides(
            select=_split_codes(select), ignore=_split_codes(ignore), exclude=exclude
        )
    except ConfigError as error:
        raise click.UsageError(str(error)) from error

    inputs = discover(list(paths), config)
    if output is not None and (len(inputs.checkpoints) != 1 or inputs.sources):
        raise click.UsageError("-o/--output works with exactly one checkpoint input")
    options = RunOptions(
        config=config,
        fix=fix,
        diff=diff,
        output=output,
        trust_pickle=trust_pickle,
        spectral=fold_spectral,
        progress=fix and sys.stderr.isatty(),
        jobs=jobs,
        verbose=verbose,
        module_auditor=_audit_module,
        fix_training_in_place=fix_training_in_place,
        read_only=frozenset(inputs.read_only),
    )
    result = RunResult(errors=list(inputs.errors))
    if inputs.sources:
        from ..source import lint_files

        result.extend(lint_files(inputs.sources, options))
    if inputs.checkpoints:
        # Imports torch only when a checkpoint is actually read; without torch
        # each checkpoint gets an input error saying what to install.
        from ..checkpoint import audit_checkpoints

        result.extend(audit_checkpoints(inputs.checkpoints, options))
    result.findings = [f for f in result.findings if config.enabled(f.code, f.path)]
    if any(path.is_dir() for path in paths):  # the summary says what a directory walk found
        result.checked_sources, result.checked_checkpoints = len(inputs.sources), result.checked_checkpoints or 0
    else:
        result.checked_sources = result.checked_checkpoints = None

    stdout = sys.stdout
    if output_format != "github":  # github: errors are annotations on stdout already
        for input_error in result.errors:
            click.echo(f"wnaudit: error: {input_error.path}: {input_error.message}", err=True)
    color = output_format == "text" and stdout.isatty()
    renderer(output_format)(result, stdout, color=color, quiet=quiet, statistics=statistics)
    ctx.exit(_exit_status(result, exit_zero))


def _audit_module(module: object, path: str) -> list[Finding]:
    """The module entrance, imported only when a checkpoint holds a pickled module (it needs torch)."""
    from ..module import audit_module

    return audit_module(module, path=path)


def _exit_status(result: RunResult, exit_zero: bool) -> int:
    if result.errors:
        return EXIT_ERROR
    if result.findings and not exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _explain(code: str) -> int:
    from ..report.rule_pages import page_codes, read_page

    try:
        click.echo(read_page(code), nl=False)
    except KeyError:
        click.echo(f"wnaudit: error: unknown rule code {code!r}; known codes: {', '.join(page_codes())}", err=True)
        return EXIT_ERROR
    return EXIT_CLEAN


main.add_command(bench)  # imports torch only when it runs: the lint must never import it


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit status (for tests and embedding)."""
    try:
        status = main.main(args=list(argv) if argv is not None else None, prog_name="wnaudit", standalone_mode=False)
    except click.exceptions.Exit as exit_:
        return int(exit_.exit_code)
    except click.UsageError as error:
        error.show()
        return EXIT_ERROR
    except SystemExit as exit_:
        return int(exit_.code or 0)
    # Without standalone mode, click returns ctx.exit()'s status instead of raising.
    return int(status) if isinstance(status, int) else EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    main()
