"""Pickle payloads in every container wnaudit reads never run without --trust-pickle.

Each payload would create a marker file if it ran.  A first group of tests
proves the payloads are live (an unsafe load does create the marker), so the
absence of the marker in the CLI runs means something.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch

from .helpers import (
    CONTAINERS,
    PAYLOADS,
    assert_no_traceback,
    marker_appeared,
    nested_in_state_dict,
    run_cli,
    write_checkpoint,
    write_torch_zip,
)

CASES = [(payload, container) for payload in PAYLOADS for container in CONTAINERS]
IDS = [f"{payload}-{container}" for payload, container in CASES]


def _hostile(tmp_path: Path, payload: str, container: str, suffix: str = ".pt") -> tuple[Path, Path]:
    marker = tmp_path / "PWNED"
    path = CONTAINERS[container](tmp_path / f"hostile{suffix}", nested_in_state_dict(PAYLOADS[payload](marker)))
    return path, marker


@pytest.mark.parametrize(("payload", "container"), CASES, ids=IDS)
def test_payload_is_live_when_loaded_unsafely(tmp_path: Path, payload: str, container: str) -> None:
    """Control: the same bytes do run code under an unrestricted unpickler."""
    path, marker = _hostile(tmp_path, payload, container)
    if container == "raw-pickle":
        with open(path, "rb") as handle:
            pickle.load(handle)
    else:
        torch.load(path, weights_only=False)
    assert marker_appeared(marker, payload)


@pytest.mark.parametrize(("payload", "container"), CASES, ids=IDS)
def test_payload_never_runs_and_other_inputs_are_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], payload: str, container: str
) -> None:
    path, marker = _hostile(tmp_path, payload, container)
    good = write_checkpoint(tmp_path / "good.pt")

    text = run_cli(capsys, path, good)
    assert text.rc == 2
    assert_no_traceback(text)
    assert len(text.error_lines) == 1, text.stderr
    (line,) = text.errors_for(path)
    if container != "raw-pickle":  # a torch file could be a full-module pickle: name the flag
        assert "--trust-pickle" in line

    report = run_cli(capsys, "--format", "json", path, good).json()
    assert [error["path"] for error in report["errors"]] == [str(path)]
    assert {f["path"] for f in report["findings"]} == {str(good)}, "the valid input was not audited"
    assert not marker_appeared(marker, payload), "the pickle payload ran"


@pytest.mark.parametrize("container", sorted(set(CONTAINERS) - {"raw-pickle"}))
def test_fix_on_hostile_file_never_runs_it_nor_rewrites_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], container: str
) -> None:
    path, marker = _hostile(tmp_path, "os.system", container)
    before = path.read_bytes()
    result = run_cli(capsys, "--fix", path)
    assert not marker.exists()
    assert result.rc == 2 and len(result.errors_for(path)) == 1
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["g_00500000", "model.bin", "last.ckpt", "weights.pth"])
def test_payload_in_any_checkpoint_name(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """HiFi-GAN's extensionless ``g_00500000`` is sniffed by content; it must be as safe."""
    marker = tmp_path / "PWNED"
    path = write_torch_zip(tmp_path / name, nested_in_state_dict(PAYLOADS["os.system"](marker)))
    result = run_cli(capsys, path)
    assert not marker.exists()
    assert result.rc == 2 and len(result.errors_for(path)) == 1


def test_trust_pickle_does_run_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the flag means: the file's code runs.  Documented in docs/security.md."""
    path, marker = _hostile(tmp_path, "os.system", "torch-zip")
    run_cli(capsys, "--trust-pickle", path)
    assert marker.exists()


@pytest.mark.parametrize("trust", [False, True], ids=["default", "trust-pickle"])
def test_payload_in_a_shard_behind_an_index(tmp_path: Path, capsys: pytest.CaptureFixture[str], trust: bool) -> None:
    """Shards are state dicts by definition: never unpickled beyond weights, even with the flag."""
    import json

    marker = tmp_path / "PWNED"
    shard = write_torch_zip(tmp_path / "pytorch_model-00001-of-00001.bin", {"conv.weight_g": PAYLOADS["os.system"](marker)})
    index = tmp_path / "pytorch_model.bin.index.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": {"conv.weight_g": shard.name}}))
    result = run_cli(capsys, *(["--trust-pickle"] if trust else []), index)
    assert not marker.exists()
    assert result.rc == 2 and len(result.error_lines) == 1, result.stderr
