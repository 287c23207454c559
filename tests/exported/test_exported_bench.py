"""``wnaudit bench`` on a torch.export archive: paired live/folded timings with an interval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from exported_helpers import FOLDED_NAMES, rewrite_model_json

from wnaudit.bench import exported as bench_exported
from wnaudit.cli.command import run


def test_bench_times_the_program_against_its_folded_twin(
    fused_archive: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    timed: list[tuple[Any, Any]] = []

    def recording(torch: Any, live: Any, folded: Any, *args: Any) -> Any:
        timed.append((live, folded))
        return time_pairs(torch, live, folded, *args)

    time_pairs = bench_exported._time_pairs
    monkeypatch.setattr(bench_exported, "_time_pairs", recording)
    status = run(["bench", str(fused_archive), "--input-shape", "1,4,7", "--iterations", "6", "--warmup", "1", "--threads", "1", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0
    assert report["weight_norms_folded"] == len(FOLDED_NAMES)
    assert report["settings"]["second_arm"] == "folded program" and report["settings"]["iterations"] == 6
    saving = report["paired_saving"]
    assert saving["ci_low_ms"] <= saving["median_ms"] <= saving["ci_high_ms"]
    assert saving["pairs"] == 6 and saving["confidence"] == 0.95
    [(live, folded)] = timed
    assert _norm_nodes(live) == 3 and _norm_nodes(folded) == 0, "the live arm computes the norms, the folded arm none"


def _norm_nodes(graph_module: Any) -> int:
    return sum("weight_norm" in str(node.target) for node in graph_module.graph.nodes)


def test_bench_refuses_an_archive_that_would_run_code(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    guarded = rewrite_model_json(fused_archive, tmp_path / "guarded.pt2", lambda program: program.update(guards_code=["__import__('os').getpid() > 0"]))
    assert run(["bench", str(guarded), "--input-shape", "1,4,7", "--iterations", "2", "--warmup", "0"]) == 2
    assert "--trust-pickle" in capsys.readouterr().err
