"""``wnaudit bench`` on a torch.export archive: the program as stored against its folded twin.

The twin is the fold ``wnaudit --fix`` would write, made in memory by the
exported-program entrance; both arms are ``ep.module()`` graph modules, checked
to compute the same output, then timed in alternating pairs as modules are
(:mod:`.runner`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core import torch_api
from ..exported import looks_like_exported_program
from .errors import BenchError
from .result import BenchResult, Settings
from .runner import (
    _check_arms,
    _synchronizer,
    _tensors,
    _threads,
    _time_pairs,
    _warnings,
)
from .stats import summarize


def is_exported_program(spec: str) -> bool:
    path = Path(spec)
    return path.is_file() and looks_like_exported_program(path)


def measure_exported(
    spec: str, inputs: tuple[Any, ...], *, trust_pickle: bool, warmup: int, iterations: int, threads: int | None, seed: int
) -> BenchResult:
    """Time the program in ``spec`` live against its folded twin on ``inputs`` (CPU, the program's dtype)."""
    from ..exported.errors import ExportedProgramError
    from ..exported.fix import load_with_folded_twin

    torch = torch_api.import_torch()
    try:
        live_program, folded_program, names = load_with_folded_twin(Path(spec), trust_pickle=trust_pickle)
    except ExportedProgramError as error:
        raise BenchError(f"{spec}: {error}") from None
    live, folded = live_program.module(), folded_program.module()  # type: ignore[attr-defined]
    with _threads(torch, threads):
        with torch.inference_mode():
            reference = _tensors(live(*inputs))
        difference = _check_arms(torch, live, folded, inputs, reference, 0)
        live_times, folded_times = _time_pairs(torch, live, folded, inputs, warmup, iterations, _synchronizer(torch, torch.device("cpu")))
        used_threads = torch.get_num_threads()
    summary = summarize(live_times, folded_times, seed=seed)
    settings = Settings(
        model=spec, input_shapes=[list(t.shape) for t in inputs], device="cpu", dtype=str(inputs[0].dtype).removeprefix("torch."),
        threads=used_threads, warmup=warmup, iterations=iterations, seed=seed, second_arm="folded program",
    )
    return BenchResult(
        settings=settings, summary=summary, weight_norms_folded=len(names), folded_names=names,
        max_abs_difference=difference, live_times=live_times, folded_times=folded_times, warnings=_warnings(summary, len(names)),
    )
