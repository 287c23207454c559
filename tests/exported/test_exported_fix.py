"""``--fix`` on torch.export archives: folded, verified bit for bit before the rename, refused in one line otherwise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from exported_helpers import (
    FOLDED_NAMES,
    exported_program,
    load,
    rewrite_model_json,
    same_bits,
    sample_input,
    save,
    weight_norm_ops,
)
from exported_helpers import run as run_program

from wnaudit.cli.command import run
from wnaudit.exported import verify


def _copy(archive: Path, tmp_path: Path, name: str = "model.pt2") -> Path:
    return Path(shutil.copy(archive, tmp_path / name))


@pytest.mark.parametrize("which", ["fused_archive", "decomposed_archive"])
def test_fix_folds_both_spellings_convtranspose_and_dim_bit_for_bit(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    original_path = request.getfixturevalue(which)
    target = _copy(original_path, tmp_path)
    assert run(["-q", "--fix", str(target)]) == 0
    original, fixed = load(original_path), load(target)
    assert weight_norm_ops(fixed) == [], "the folded program still computes a norm"
    keys = set(fixed.state_dict)
    assert set(FOLDED_NAMES) <= keys
    assert not any(key.endswith(("_g", "_v")) or ".original" in key for key in keys), sorted(keys)
    targets = {spec.target for spec in fixed.graph_signature.input_specs if spec.target}
    assert set(FOLDED_NAMES) <= targets and not any(".original" in t or t.endswith("_g") for t in targets)
    for x in (original.example_inputs[0][0], sample_input() * 3):
        assert same_bits(run_program(original, x), run_program(fixed, x))
    assert run(["-q", str(target)]) == 0, "a second audit finds nothing"


def test_folded_weight_is_torchs_kernel_on_the_stored_pair(fused_archive: Path, tmp_path: Path) -> None:
    target = _copy(fused_archive, tmp_path)
    assert run(["-q", "--fix", str(target)]) == 0
    stored, folded = load(fused_archive).state_dict, load(target).state_dict
    expected = torch._weight_norm(stored["generator.proj.parametrizations.weight.original1"], stored["generator.proj.parametrizations.weight.original0"], 1)
    assert same_bits(folded["generator.proj.weight"].detach(), expected.detach())
    legacy = torch._weight_norm(stored["generator.conv_pre.weight_v"], stored["generator.conv_pre.weight_g"], 0)
    assert same_bits(folded["generator.conv_pre.weight"].detach(), legacy.detach())
    assert isinstance(folded["generator.ups.0.weight"], torch.nn.Parameter) and folded["generator.ups.0.weight"].requires_grad


def test_without_sample_inputs_generated_inputs_of_the_recorded_shapes_verify(tmp_path: Path) -> None:
    program = exported_program()
    program._example_inputs = None
    target = save(program, tmp_path / "no_samples.pt2")
    assert run(["-q", "--fix", str(target)]) == 0
    assert weight_norm_ops(load(target)) == []


def test_outputs_that_differ_refuse_the_fix_and_leave_the_file(fused_archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    target = _copy(fused_archive, tmp_path)
    before = target.read_bytes()
    monkeypatch.setattr(verify, "same_bits", lambda expected, actual: False)
    assert run(["-q", "--fix", str(target)]) == 2
    err = capsys.readouterr().err
    assert "not bit-identical" in err and len(err.strip().splitlines()) == 1
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pt2"], "no temporary file left"


def test_archive_whose_loading_runs_code_needs_trust_pickle(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Guard code is exec'd by ep.module(): without --trust-pickle the fix never loads the archive."""
    target = rewrite_model_json(fused_archive, tmp_path / "guarded.pt2", lambda program: program.update(guards_code=["__import__('os').getpid() > 0"]))
    before = target.read_bytes()
    assert run(["-q", "--fix", str(target)]) == 2
    err = capsys.readouterr().err
    assert "--trust-pickle" in err and "guard code" in err and len(err.strip().splitlines()) == 1
    assert target.read_bytes() == before
    assert run(["-q", "--fix", "--trust-pickle", str(target)]) == 0
    assert weight_norm_ops(load(target)) == []


def test_pickled_weight_needs_trust_pickle(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import io
    import zipfile

    target = tmp_path / "pickled.pt2"
    buffer = io.BytesIO()
    with zipfile.ZipFile(fused_archive) as old, zipfile.ZipFile(buffer, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename.endswith("weights_config.json"):
                config = json.loads(data)
                next(iter(config["config"].values()))["use_pickle"] = True
                data = json.dumps(config).encode()
            new.writestr(info, data)
    target.write_bytes(buffer.getvalue())
    assert run(["-q", "--fix", str(target)]) == 2
    assert "is pickled" in capsys.readouterr().err


class _InterfaceCaller(torch.nn.Module):
    """Calls the fused kernel directly: one node with two outputs (weight and norms), the norms unused."""

    def __init__(self) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(2)
        self.weight_g = torch.nn.Parameter(torch.rand(3, 1, generator=generator) + 0.5)
        self.weight_v = torch.nn.Parameter(torch.randn(3, 4, generator=generator))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch._weight_norm_interface(self.weight_v, self.weight_g, 0)[0].t()


def test_weight_norm_interface_with_two_outputs_is_found_and_folded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(_InterfaceCaller(), (torch.randn(2, 4),))
    target = save(program, tmp_path / "interface.pt2")
    assert run(["--format", "json", str(target)]) == 1
    [found] = json.loads(capsys.readouterr().out)["findings"]
    assert (found["code"], found["object"]) == ("WN401", "weight") and "_weight_norm_interface" in found["message"]
    assert run(["-q", "--fix", str(target)]) == 0
    fixed = load(target)
    assert weight_norm_ops(fixed) == [] and sorted(fixed.state_dict) == ["weight"]
    x = torch.randn(2, 4)
    assert same_bits(run_program(program, x), run_program(fixed, x))


def test_an_ignored_code_is_neither_reported_nor_folded(fused_archive: Path, tmp_path: Path) -> None:
    target = _copy(fused_archive, tmp_path)
    before = target.read_bytes()
    assert run(["-q", "--fix", "--ignore", "WN401", str(target)]) == 0
    assert target.read_bytes() == before


def test_second_fix_changes_nothing_and_exits_0(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _copy(fused_archive, tmp_path)
    assert run(["-q", "--fix", str(target)]) == 0
    once, stat = target.read_bytes(), target.stat()
    capsys.readouterr()
    assert run(["--fix", str(target)]) == 0
    assert target.read_bytes() == once
    assert (target.stat().st_ino, target.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns), "the file was rewritten"
    assert "fixed" not in capsys.readouterr().out


def test_fix_with_output_writes_the_folded_archive_there_and_leaves_the_input(fused_archive: Path, tmp_path: Path) -> None:
    source = _copy(fused_archive, tmp_path)
    before = source.read_bytes()
    output = tmp_path / "folded.pt2"
    assert run(["-q", "--fix", "-o", str(output), str(source)]) == 0
    assert source.read_bytes() == before
    fixed = load(output)
    assert weight_norm_ops(fixed) == [] and set(FOLDED_NAMES) <= set(fixed.state_dict)
    x = sample_input()
    assert same_bits(run_program(load(source), x), run_program(fixed, x))
    again = tmp_path / "again.pt2"
    assert run(["-q", "--fix", "-o", str(again), str(output)]) == 0, "a clean input with -o is copied"
    assert again.read_bytes() == output.read_bytes()


class _DynamicVocoder(torch.nn.Module):
    """Whole-tensor norm (dim=None) on a ConvTranspose1d, exported with a dynamic time axis."""

    def __init__(self) -> None:
        super().__init__()
        from torch.nn.utils.parametrizations import weight_norm

        self.up = weight_norm(torch.nn.ConvTranspose1d(3, 2, 4, stride=2, padding=1), dim=None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


def test_dynamic_shapes_and_dim_none_fold_without_trust_pickle(tmp_path: Path) -> None:
    """Symbolic shapes that are plain sympy are not code: the fix loads them and the folded program stays dynamic."""
    import warnings

    torch.manual_seed(3)
    model = _DynamicVocoder().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(model, (torch.randn(1, 3, 8),), dynamic_shapes=({2: torch.export.Dim("T", min=2, max=64)},))
    target = save(program, tmp_path / "dynamic.pt2")
    assert run(["-q", str(target)]) == 1
    assert run(["-q", "--fix", str(target)]) == 0
    fixed = load(target)
    assert weight_norm_ops(fixed) == [] and sorted(fixed.state_dict) == ["up.bias", "up.weight"]
    assert fixed.range_constraints, "the folded program keeps its dynamic axis"
    for length in (5, 8, 40):
        x = torch.randn(1, 3, length, generator=torch.Generator().manual_seed(length))
        assert same_bits(run_program(program, x), run_program(fixed, x))


class _DerivedDims(torch.nn.Module):
    """A derived dynamic dimension: the program carries input guards and symbolic-size arithmetic nodes."""

    def __init__(self) -> None:
        super().__init__()
        from torch.nn.utils.parametrizations import weight_norm

        self.conv = weight_norm(torch.nn.Conv1d(4, 4, 3, padding=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        batch, channels, length = y.shape
        return y.reshape(batch, channels * length // 2, 2)[:, : length // 2 + 1] * (length * 1.0)


def test_plain_guards_and_size_arithmetic_fold_without_trust_pickle(tmp_path: Path) -> None:
    import json
    import warnings
    import zipfile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        length = torch.export.Dim("T", min=4, max=64)
        program = torch.export.export(_DerivedDims().eval(), (torch.randn(2, 4, 8),), dynamic_shapes=({2: 2 * length},))
    target = save(program, tmp_path / "derived.pt2")
    with zipfile.ZipFile(target) as archive:
        serialized = json.loads(archive.read(next(n for n in archive.namelist() if n.endswith("models/model.json"))))
    assert serialized["guards_code"], "this export carries guard code"
    assert any(str(node["target"]).startswith("_operator.mul") for node in serialized["graph_module"]["graph"]["nodes"])
    assert run(["-q", "--fix", str(target)]) == 0
    fixed = load(target)
    assert weight_norm_ops(fixed) == []
    for steps in (4, 6, 20):
        x = torch.randn(2, 4, 2 * steps, generator=torch.Generator().manual_seed(steps))
        assert same_bits(run_program(program, x), run_program(fixed, x))


class _EveryDim(torch.nn.Module):
    """Weight norm over the whole tensor (both spellings, dim=None), over the last axis (2 and -1)."""

    def __init__(self) -> None:
        super().__init__()
        import warnings

        from torch.nn.utils import weight_norm as legacy_weight_norm
        from torch.nn.utils.parametrizations import weight_norm

        self.a = weight_norm(torch.nn.ConvTranspose1d(3, 2, 4, stride=2, padding=1), dim=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            self.b = legacy_weight_norm(torch.nn.Conv1d(2, 2, 3), dim=None)
        self.c = weight_norm(torch.nn.Conv1d(2, 2, 3), dim=2)
        self.d = weight_norm(torch.nn.Conv1d(2, 2, 1), dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.d(self.c(self.b(self.a(x))))


def test_decomposed_norms_over_every_dim_are_found_and_folded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    torch.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(_EveryDim().eval(), (torch.randn(1, 3, 16),)).run_decompositions()
    target = save(program, tmp_path / "every_dim.pt2")
    assert run(["--format", "json", str(target)]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert sorted((f["code"], f["object"]) for f in found) == [("WN402", f"{name}.weight") for name in "abcd"]
    assert run(["-q", "--fix", str(target)]) == 0
    fixed = load(target)
    assert weight_norm_ops(fixed) == []
    x = torch.randn(1, 3, 16, generator=torch.Generator().manual_seed(6))
    assert same_bits(run_program(program, x), run_program(fixed, x))
