"""The ``wnaudit bench`` command.

Imports nothing heavy at import time: the CLI registers this command on every
run, including source lints that must never import torch.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..common.progress import heartbeat
from ..report.log_format import configure_cli_logging
from .errors import BenchError
from .inputs import check_inputs_fit, random_inputs

logger = logging.getLogger("wnaudit.bench")

EXIT_OK, EXIT_ERROR = 0, 2
_DTYPES = ("float32", "float16", "bfloat16", "float64")


def parse_shape(text: str) -> list[int]:
    """``1,80,50`` -> ``[1, 80, 50]``; every dimension a positive integer."""
    try:
        shape = [int(part) for part in text.replace("x", ",").split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated integers like 1,80,50") from None
    if not shape or any(d < 1 for d in shape):
        raise click.BadParameter(f"{text!r}: expected positive dimensions like 1,80,50")
    return shape


def _shapes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[list[int]]:
    return [parse_shape(value) for value in values]


@click.command("bench", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model")
@click.option(
    "--input-shape",
    "input_shapes",
    multiple=True,
    required=True,
    callback=_shapes,
    help="Shape of a random input, e.g. 1,80,50 (repeat for models taking several inputs).",
)
@click.option(
    "--checkpoint",
    type=click.Path(path_type=Path, dir_okay=False),
    help="State dict to load into the factory's model (weights_only, strict).",
)
@click.option("--checkpoint-key", help="Entry of the checkpoint holding the state dict (dotted), when it is nested.")
@click.option("--trust-pickle", is_flag=True, help="Allow MODEL to be a pickled module file. This RUNS CODE FROM THE FILE.")
@click.option(
    "--dtype", type=click.Choice(_DTYPES), default=None, help="Cast model and input to this dtype (default: keep the model's)."
)
@click.option("--device", default="cpu", show_default=True, help="Device to time on: cpu, cuda, cuda:1 ...")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="torch intra-op threads (default: torch's; 1 is steadiest on a shared machine).",
)
@click.option("--iterations", type=click.IntRange(min=2), default=100, show_default=True, help="Timed pairs of calls.")
@click.option("--warmup", type=click.IntRange(min=0), default=10, show_default=True, help="Untimed pairs before timing.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random input and of the bootstrap.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("-v", "--verbose", is_flag=True, help="Debug logging.")
@click.pass_context
def bench(ctx: click.Context, output_format: str, verbose: bool, **options: Any) -> None:
    """Measure what folding the weight norms of MODEL saves per forward call.

    MODEL is a factory 'package.module:callable' (or 'file.py:callable') called
    with no arguments, or a pickled module file (with --trust-pickle). The model
    as loaded and a folded twin are checked to give the same output, then timed
    in alternating pairs; the report gives each arm's median, the median of the
    paired differences with a 95% bootstrap interval, and a verdict.
    """
    configure_cli_logging(verbose)
    try:
        with heartbeat(f"bench {options['model']}", announce=False):  # a line every 10 s; errors stay one line
            result = _run(BenchRequest(**options))
    except BenchError as error:
        click.echo(f"wnaudit: error: {error}", err=True)
        ctx.exit(EXIT_ERROR)
    except (SystemExit, KeyboardInterrupt, GeneratorExit) as error:
        click.echo(f"wnaudit: error: {options['model']}: {_user_exit(error)}", err=True)
        ctx.exit(EXIT_ERROR)
    from .result import render_json, render_text

    click.echo((render_json if output_format == "json" else render_text)(result), nl=False)
    ctx.exit(EXIT_OK)


def _user_exit(error: BaseException) -> str:
    """What the model's own code raised to leave the run; a real SIGINT/SIGTERM (``Interrupted``) goes on.

    The CLI turns a real signal into :class:`~wnaudit.common.interrupts.Interrupted` and records it, so
    a ``SystemExit`` or ``KeyboardInterrupt`` that is neither was raised by the factory, the module it
    imports, an unpickled object or the model's forward: an error of that input, not an exit status.
    """
    from ..common import interrupts

    if isinstance(error, interrupts.Interrupted) or interrupts.received is not None:
        raise error
    return f"the model's code raised {type(error).__name__}({', '.join(map(repr, error.args))}); nothing measured"


@dataclass(frozen=True)
class BenchRequest:
    """What the command line asked to measure (one field per option)."""

    model: str
    input_shapes: list[list[int]]
    checkpoint: Path | None
    checkpoint_key: str | None
    trust_pickle: bool
    dtype: str | None
    device: str
    threads: int | None
    iterations: int
    warmup: int
    seed: int


def _run(request: BenchRequest):  # type: ignore[no-untyped-def]
    """Load, build the input and measure; every expected failure becomes a BenchError."""
    check_inputs_fit(request.input_shapes)  # before any model code runs
    from ..core.torch_api import TorchMissingError, import_torch, missing

    try:
        torch = import_torch()
    except TorchMissingError:
        raise BenchError(missing("torch", "wnaudit bench")) from None
    from .exported import is_exported_program
    from .loading import load_model
    from .runner import measure

    if is_exported_program(request.model):
        return _run_exported(request, torch)

    try:
        torch_device = torch.device(request.device)
    except RuntimeError as error:
        raise BenchError(f"--device {request.device}: {error}") from None
    if torch_device.type == "cuda" and not torch.cuda.is_available():
        raise BenchError(f"--device {request.device}: CUDA is not available in this torch build or on this machine")
    loaded = load_model(
        request.model,
        checkpoint=request.checkpoint,
        checkpoint_key=request.checkpoint_key,
        trust_pickle=request.trust_pickle,
    )
    inputs = random_inputs(torch, request.input_shapes, request.seed)
    try:
        return measure(
            loaded.module,
            inputs,
            rebuild=loaded.rebuild,
            warmup=request.warmup,
            iterations=request.iterations,
            device=torch_device,
            dtype=request.dtype,
            threads=request.threads,
            seed=request.seed,
            label=loaded.label,
        )
    except BenchError:
        raise
    except Exception as error:  # noqa: BLE001 - the user's forward can fail on a wrong shape
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise BenchError(f"{request.model}: running the model failed: {type(error).__name__}: {message}") from error


def _run_exported(request: BenchRequest, torch: object):  # type: ignore[no-untyped-def]
    """A torch.export archive: timed on the CPU in its own dtype, live program against its folded twin."""
    from .exported import measure_exported

    if request.device != "cpu" or request.dtype is not None or request.checkpoint is not None:
        raise BenchError(f"{request.model}: an exported program is timed on the CPU in its own dtype; --device, --dtype and --checkpoint do not apply")
    inputs = random_inputs(torch, request.input_shapes, request.seed)
    try:
        return measure_exported(
            request.model, inputs, trust_pickle=request.trust_pickle, warmup=request.warmup,
            iterations=request.iterations, threads=request.threads, seed=request.seed,
        )
    except BenchError:
        raise
    except Exception as error:  # noqa: BLE001 - a wrong input shape fails inside the program
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise BenchError(f"{request.model}: running the program failed: {type(error).__name__}: {message}") from error
