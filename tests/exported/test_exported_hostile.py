"""Hostile archives: every way torch 2.13 would unpickle code from a .pt2 is refused without --trust-pickle,
and every damaged archive is one honest line with exit 2; nothing from the file is ever run.

The payloads are pickles whose loading creates a marker directory (``os.makedirs``): the marker's
absence after the run is the proof that nothing was unpickled in full.
"""

from __future__ import annotations

import io
import json
import os
import re
import warnings
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
import torch
from exported_helpers import rewrite_model_json

from wnaudit.cli.command import run
from wnaudit.core import torch_api
from wnaudit.exported import archive as archive_module


class _Planted:
    """Unpickling it creates ``marker``: the smallest observable side effect."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.makedirs, (str(self.marker),))


def planted_pickle(marker: Path) -> bytes:
    buffer = io.BytesIO()
    torch.save({"weights": _Planted(marker)}, buffer)
    return buffer.getvalue()


def rewrite(
    source: Path, target: Path, *, edit: Callable[[str, bytes], bytes | None] = lambda name, data: data,
    before: Iterable[tuple[str, bytes]] = (), after: Iterable[tuple[str, bytes]] = (),
) -> Path:
    """Copy an archive member by member; ``edit`` may change a member's bytes or drop it (None)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name, data in before:
            new.writestr(name, data)
        for info in old.infolist():
            data = edit(info.filename, old.read(info))
            if data is not None:
                new.writestr(info, data)
        for name, data in after:
            new.writestr(name, data)
    return target


def _folder(archive: Path) -> str:
    with zipfile.ZipFile(archive) as opened:
        return opened.namelist()[0].partition("/")[0]


def _legacy_weights(src: Path, dst: Path, marker: Path) -> Path:
    return rewrite(src, dst, after=[(f"{_folder(src)}/data/weights/model.pt", planted_pickle(marker))])


def _legacy_constants(src: Path, dst: Path, marker: Path) -> Path:
    return rewrite(src, dst, after=[(f"{_folder(src)}/data/constants/model.pt", planted_pickle(marker))])


def _old_layout_fallback(src: Path, dst: Path, marker: Path) -> Path:
    """Top-level members make torch's pt2 reader raise RuntimeError; torch.export.load then unpickles them."""
    with zipfile.ZipFile(src) as opened:
        program = opened.read(f"{_folder(src)}/models/model.json")
    legacy = [("version", b"8.0"), ("serialized_exported_program.json", program),
              ("serialized_state_dict.pt", planted_pickle(marker)), ("serialized_constants.pt", b""),
              ("serialized_example_inputs.pt", b"")]
    return rewrite(src, dst, after=legacy)


def _second_folder(src: Path, dst: Path, marker: Path) -> Path:
    """A second top-level folder first: torch reads that one (pickled weight), a merged view would read the other."""
    with zipfile.ZipFile(src) as opened:
        shadow = []
        for info in opened.infolist():
            inner, data = info.filename.partition("/")[2], opened.read(info)
            if inner.endswith("weights_config.json"):
                config = json.loads(data)
                for payload in config["config"].values():
                    payload["use_pickle"] = True
                data = json.dumps(config).encode()
            elif inner.startswith("data/weights/weight_"):
                data = planted_pickle(marker)
            shadow.append((f"aaa/{inner}", data))
    return rewrite(src, dst, before=shadow)


def _pickled_sample_inputs(src: Path, dst: Path, marker: Path) -> Path:
    return rewrite(src, dst, edit=lambda name, data: planted_pickle(marker) if name.endswith("sample_inputs/model.pt") else data)


def _dunder_target(src: Path, dst: Path, marker: Path) -> Path:
    def edit(program: dict[str, Any]) -> None:
        program["graph_module"]["graph"]["nodes"][-1]["target"] = "torch.ops.aten.__class__.mro"

    return rewrite_model_json(src, dst, edit)


def _operator_argument(src: Path, dst: Path, marker: Path) -> Path:
    def edit(program: dict[str, Any]) -> None:
        node = program["graph_module"]["graph"]["nodes"][-1]
        node["inputs"].append({"name": "planted", "arg": {"as_operator": "builtins.exec"}, "kind": 1})

    return rewrite_model_json(src, dst, edit)


def _sympy_code(src: Path, dst: Path, marker: Path) -> Path:
    """A dynamic archive whose symbolic sizes are Python that sympify would evaluate."""
    planted = f"__import__('os').makedirs({str(marker)!r})"

    def edit(program: dict[str, Any]) -> None:
        text = json.dumps(program)
        expressions = set(re.findall(r'"expr_str": ("(?:[^"\\]|\\.)*")', text))
        assert expressions, "the source archive has symbolic sizes"
        for expression in expressions:
            text = text.replace(f'"expr_str": {expression}', f'"expr_str": {json.dumps(planted)}')
        program.clear()
        program.update(json.loads(text))

    return rewrite_model_json(src, dst, edit)


def _guard_code(src: Path, dst: Path, marker: Path) -> Path:
    """A guard that is Python, not size arithmetic: ep.module() would exec it."""
    def edit(program: dict[str, Any]) -> None:
        program["guards_code"] = ["L['x'].size()[0] == 1", f"__import__('os').makedirs({str(marker)!r}) is None"]

    return rewrite_model_json(src, dst, edit)


def _guard_breaking_out(src: Path, dst: Path, marker: Path) -> Path:
    """A guard ending in a comment: pasted into torch._assert(GUARD, "...") it would swallow the rest of the line."""
    def edit(program: dict[str, Any]) -> None:
        program["guards_code"] = ["L['x'].size()[0] == 1 #"]

    return rewrite_model_json(src, dst, edit)


def _range_code(src: Path, dst: Path, marker: Path) -> Path:
    """A dynamic dimension whose bound is a string: loading hands it to sympy (today torch parses it as an int)."""
    def edit(program: dict[str, Any]) -> None:
        for bounds in program["range_constraints"].values():
            bounds["max_val"] = f"__import__('os').makedirs({str(marker)!r})"

    return rewrite_model_json(src, dst, edit)


def _source_fn_dunder(src: Path, dst: Path, marker: Path) -> Path:
    """Node metadata whose source function walks a dunder: loading getattrs along every ``torch.…`` name there."""
    def edit(program: dict[str, Any]) -> None:
        program["graph_module"]["graph"]["nodes"][0].setdefault("metadata", {})["source_fn_stack"] = "x,torch.__class__.__subclasses__"

    return rewrite_model_json(src, dst, edit)


UNTRUSTED = {
    "code as a range bound": (_range_code, "range constraints are not numbers"),
    "python as guard code": (_guard_code, "not plain size arithmetic"),
    "guard ending in a comment": (_guard_breaking_out, "not plain size arithmetic"),
    "legacy weights file": (_legacy_weights, "data/weights/model.pt"),
    "legacy constants file": (_legacy_constants, "data/constants/model.pt"),
    "pre-2.8 layout fallback": (_old_layout_fallback, "outside its top-level folder"),
    "second top-level folder": (_second_folder, "outside its top-level folder"),
    "pickled sample inputs": (_pickled_sample_inputs, "sample inputs"),
    "dunder node target": (_dunder_target, "__class__"),
    "operator argument": (_operator_argument, "builtins.exec"),
    "code as a symbolic shape": (_sympy_code, "not a plain sympy expression"),
    "dunder in a source function": (_source_fn_dunder, "through a dunder"),
}


@pytest.mark.parametrize("case", sorted(UNTRUSTED))
def test_fix_never_unpickles_nor_evaluates_code_from_the_file(
    case: str, fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    build, reason = UNTRUSTED[case]
    marker = tmp_path / "ran"
    source = request.getfixturevalue("dynamic_archive") if build in (_sympy_code, _range_code) else fused_archive
    target = build(source, tmp_path / "hostile.pt2", marker)
    before = target.read_bytes()
    status = run(["-q", "--fix", str(target)])
    assert not marker.exists(), "code from the archive ran"
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and reason in err and "unexpected" not in err, err
    assert target.read_bytes() == before


def test_the_loader_never_takes_torchs_fallback_to_the_pickled_layout(fused_archive: Path, tmp_path: Path) -> None:
    """Even trusted, wnaudit loads with the pt2 loader: torch.export.load would unpickle the old layout's members."""
    marker = tmp_path / "ran"
    data = _old_layout_fallback(fused_archive, tmp_path / "fallback.pt2", marker).read_bytes()
    with pytest.raises(RuntimeError):
        torch_api.export_load(data)
    assert not marker.exists(), "the pre-2.8 layout was unpickled"


def _nested_json(src: Path, dst: Path) -> Path:
    return rewrite(src, dst, edit=lambda name, data: b"[" * 200_000 + b"]" * 200_000 if name.endswith("models/model.json") else data)


def _duplicate_member(src: Path, dst: Path) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile: "Duplicate name", the point of this archive
        return rewrite(src, dst, after=[(f"{_folder(src)}/models/model.json", b"{}")])


def _flag_member(src: Path, dst: Path, *, flag: int = 0, method: int | None = None) -> Path:
    """Patch models/model.json's local and central headers: the encryption bit, or the compression method."""
    data = bytearray(src.read_bytes())
    name = f"{_folder(src)}/models/model.json".encode()
    at = data.find(name)
    while at >= 0:
        for offset, signature, flag_at, method_at in ((30, b"PK\x03\x04", 6, 8), (46, b"PK\x01\x02", 8, 10)):
            header = at - offset
            if header >= 0 and data[header : header + 4] == signature:
                data[header + flag_at] |= flag
                if method is not None:
                    data[header + method_at : header + method_at + 2] = method.to_bytes(2, "little")
        at = data.find(name, at + 1)
    dst.write_bytes(bytes(data))
    return dst


def _corrupt_deflate(src: Path, dst: Path) -> Path:
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, old.read(info))
    data = bytearray(dst.read_bytes())
    start = data.find(f"{_folder(src)}/models/model.json".encode()) + 60
    for index in range(start, start + 200):
        data[index] ^= 0x55
    dst.write_bytes(bytes(data))
    return dst


def _large_member(src: Path, dst: Path) -> Path:
    padding = b" " * (2 * 1024 * 1024)
    return rewrite(src, dst, edit=lambda name, data: data + padding if name.endswith("models/model.json") else data)


DAMAGED = {
    "JSON nested past the recursion limit": (_nested_json, "nested too deeply"),
    "member named twice": (_duplicate_member, "appears twice"),
    "encrypted member": (lambda s, d: _flag_member(s, d, flag=1), "encrypted"),
    "unknown compression method": (lambda s, d: _flag_member(s, d, method=99), "compression method"),
    "corrupt deflate stream": (_corrupt_deflate, "cannot be read"),
    "member over the inflate limit": (_large_member, "zip bomb"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_damaged_archive_is_one_line_and_exit_2(
    case: str, fused_archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(archive_module, "MAX_JSON_BYTES", 1024 * 1024)  # the real limit is 512 MB: keep the test small
    build, reason = DAMAGED[case]
    target = build(fused_archive, tmp_path / "damaged.pt2")
    for arguments in (["-q"], ["-q", "--fix"]):
        assert run([*arguments, str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and reason in err and "unexpected" not in err, err


def test_missing_payload_member_refuses_the_fix_in_one_line(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = rewrite(fused_archive, tmp_path / "missing.pt2", edit=lambda name, data: None if name.endswith("data/weights/weight_2") else data)
    before = target.read_bytes()
    assert run(["-q", "--fix", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not fixed" in err and "unexpected" not in err, err
    assert target.read_bytes() == before


def test_absurd_recorded_input_shape_is_refused_not_allocated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No sample inputs and a recorded input of 10^12 elements: nothing is generated, one line."""
    from exported_helpers import exported_program, save

    program = exported_program()
    program._example_inputs = None
    source = save(program, tmp_path / "no_samples.pt2")

    def edit(serialized: dict[str, Any]) -> None:
        for meta in serialized["graph_module"]["graph"]["tensor_values"].values():
            if [size.get("as_int") for size in meta["sizes"]] == [1, 4, 7]:
                meta["sizes"] = [{"as_int": 1}, {"as_int": 4}, {"as_int": 10**12}]

    target = rewrite_model_json(source, tmp_path / "absurd.pt2", edit)
    assert run(["-q", "--fix", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "elements; not generated" in err, err


def _malformed(edit: Callable[[dict[str, Any]], None], member: str = "models/model.json") -> Callable[[Path, Path], Path]:
    def build(src: Path, dst: Path) -> Path:
        def change(name: str, data: bytes) -> bytes:
            if not name.endswith(member):
                return data
            value = json.loads(data)
            edit(value)
            return json.dumps(value).encode()

        return rewrite(src, dst, edit=change)

    return build


MALFORMED = {
    "graph_module is a list": _malformed(lambda p: p.update(graph_module=[])),
    "input_specs is a number": _malformed(lambda p: p["graph_module"]["signature"].update(input_specs=3)),
    "node inputs are a float": _malformed(lambda p: [n.update(inputs=1.5) for n in p["graph_module"]["graph"]["nodes"]]),
    "node outputs are a string": _malformed(lambda p: [n.update(outputs="x") for n in p["graph_module"]["graph"]["nodes"]]),
    "a spec's arg is a number": _malformed(lambda p: [s.get("user_input", {}).update(arg=7) for s in p["graph_module"]["signature"]["input_specs"]]),
    "weights config is a string": _malformed(lambda c: c.update(config="x"), "weights_config.json"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_json_is_never_an_unexpected_error(case: str, fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by mutating the graph and configs at random: a wrong JSON type reads as absent or is one line."""
    target = MALFORMED[case](fused_archive, tmp_path / "malformed.pt2")
    for arguments in (["-q"], ["-q", "--fix"]):
        status = run([*arguments, str(target)])
        err = capsys.readouterr().err.strip()
        assert status in (0, 1, 2) and "unexpected" not in err and len(err.splitlines()) <= 1, err


def test_a_program_torch_loads_but_cannot_run_is_refused_in_one_line(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The graph transposes the wrong axes: torch loads it, then fails running it; the fix says so and writes nothing."""
    def edit(program: dict[str, Any]) -> None:
        for node in program["graph_module"]["graph"]["nodes"]:
            if node["target"] == "torch.ops.aten.transpose.int":
                node["inputs"][1]["arg"] = {"as_int": 0}

    target = rewrite_model_json(fused_archive, tmp_path / "norun.pt2", edit)
    before = target.read_bytes()
    assert run(["-q", "--fix", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not run on its sample inputs" in err and "unexpected" not in err, err
    assert target.read_bytes() == before
