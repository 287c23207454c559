"""``wnaudit bench`` end to end: factory and pickle models, checkpoints, errors, JSON shape."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from wnaudit.bench.loading import load_model
from wnaudit.cli.command import main
from wnaudit.testing.vocoder import build_vocoder, example_input, expected_weight_norms

FACTORY = "wnaudit.testing.vocoder:build_vocoder"
FAST = ["--input-shape", "1,80,8", "--iterations", "3", "--warmup", "1", "--threads", "1"]


def _bench(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["bench", *args], catch_exceptions=False)


def test_factory_text_report() -> None:
    result = _bench(FACTORY, *FAST)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"folded:   {expected_weight_norms()} weight norms folded in a model built again from the factory; outputs match (max abs difference 0)" in out
    assert "of the live call), 95% interval " in out
    assert "verdict:" in out
    assert "3 pairs of calls, live and folded in turn, after 1 warm-up pairs" in out
    # Issue 37: one saving figure, plain words.
    assert "ratio folded/live" not in out and "second arm" not in out and "CI [" not in out


def test_json_report_shape_and_consistency() -> None:
    result = _bench(FACTORY, *FAST, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {
        "model", "settings", "weight_norms_folded", "max_abs_difference", "live", "folded",
        "paired_saving", "ratio", "verdict", "warnings",
    }
    assert report["model"] == FACTORY
    assert report["settings"] == {
        "input_shapes": [[1, 80, 8]], "device": "cpu", "dtype": "float32", "threads": 1,
        "warmup": 1, "iterations": 3, "seed": 0, "second_arm": "rebuilt",
    }
    assert report["weight_norms_folded"] == expected_weight_norms()
    assert report["max_abs_difference"] == 0.0
    saving = report["paired_saving"]
    assert saving["pairs"] == 3 and saving["confidence"] == 0.95
    assert saving["ci_low_ms"] <= saving["median_ms"] <= saving["ci_high_ms"]
    assert report["ratio"] == pytest.approx(report["folded"]["median_ms"] / report["live"]["median_ms"])
    crosses = saving["ci_low_ms"] <= 0 <= saving["ci_high_ms"]
    assert (report["verdict"]["kind"] == "not resolvable") == crosses
    assert any("crosses zero" in w for w in report["warnings"]) == crosses


@pytest.fixture(scope="module")
def legacy_pickle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pickles") / "vocoder_full.pt"
    torch.save(build_vocoder("legacy"), path)  # a modern-parametrized module cannot be pickled
    return path


def test_pickle_without_trust_is_refused_naming_the_flag(legacy_pickle: Path) -> None:
    result = _bench(str(legacy_pickle), *FAST)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--trust-pickle" in lines[0] and str(legacy_pickle) in lines[0]


def test_pickle_with_trust_is_benchmarked(legacy_pickle: Path) -> None:
    result = _bench(str(legacy_pickle), *FAST, "--trust-pickle", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["weight_norms_folded"] == expected_weight_norms()


def test_a_state_dict_given_as_model_points_to_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "weights.pt"
    torch.save(build_vocoder("modern").state_dict(), path)
    result = _bench(str(path), *FAST)
    assert result.exit_code == 2 and "--checkpoint" in result.stderr


def test_legacy_checkpoint_loads_into_the_modern_factory(tmp_path: Path) -> None:
    trained = build_vocoder("legacy", seed=3)
    path = tmp_path / "g_00100000.pt"
    torch.save({"generator": trained.state_dict(), "steps": 100000}, path)

    loaded = load_model(FACTORY, checkpoint=path)
    x = example_input(8)
    with torch.inference_mode():
        assert torch.equal(loaded.module(x), trained(x))  # the checkpoint's weights, not the factory's

    result = _bench(FACTORY, *FAST, "--checkpoint", str(path))
    assert result.exit_code == 0, result.output


def test_checkpoint_that_does_not_fit_is_one_line(tmp_path: Path) -> None:
    state = build_vocoder("modern").state_dict()
    state.pop("conv_post.bias")
    path = tmp_path / "broken.pt"
    torch.save(state, path)
    result = _bench(FACTORY, *FAST, "--checkpoint", str(path))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "conv_post.bias" in lines[0]


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("wnaudit.testing.vocoder:no_such_factory", "no attribute"),
        ("no_such_package.module:build", "cannot import"),
        ("not-a-spec", "MODEL must be"),
    ],
)
def test_bad_model_specs_are_one_line_errors(model: str, message: str) -> None:
    result = _bench(model, *FAST)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_wrong_input_shape_is_reported_not_raised() -> None:
    result = _bench(FACTORY, "--input-shape", "1,7,8", "--iterations", "2", "--threads", "1")
    assert result.exit_code == 2 and "running the model failed" in result.stderr


def test_bad_shape_and_missing_cuda_are_usage_errors() -> None:
    assert _bench(FACTORY, "--input-shape", "1,a,8").exit_code == 2
    if not torch.cuda.is_available():
        result = _bench(FACTORY, *FAST, "--device", "cuda")
        assert result.exit_code == 2 and "CUDA is not available" in result.stderr


def test_factory_from_a_python_file(tmp_path: Path) -> None:
    script = tmp_path / "my_models.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            from torch import nn

            def build():
                torch.manual_seed(0)
                return nn.Sequential(
                    nn.utils.parametrizations.weight_norm(nn.Linear(16, 16)),
                    nn.utils.parametrizations.weight_norm(nn.Linear(16, 4)),
                )
            """
        )
    )
    result = _bench(f"{script}:build", "--input-shape", "8,16", "--iterations", "4", "--format", "json", "--threads", "1")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["weight_norms_folded"] == 2


def test_command_modules_do_not_import_torch() -> None:
    code = "import sys, wnaudit.cli, wnaudit.bench, wnaudit.bench.command; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
