"""Hostile ``.pt2`` archives never give an ``unexpected ...`` line, a traceback, or run code (issue 36).

Two seeds: a torch.export archive of a small weight-normed model, and an AOTInductor-package-shaped
zip built by hand (the layout ``aoti_compile_and_package`` writes: ``archive_format``, a generated
``*.wrapper.cpp`` naming the constants, a weights config, a shared library and its metadata), so the
fuzzer needs no compiler.  Mutations: bytes (flipped, cut, inserted, deleted, a word, zip flags), one
JSON value of the graph or a config replaced by a hostile one, the wrapper source edited, a member
added or dropped.  Each mutant is audited and fixed in-process; any payload that ran would create a
marker directory.  ``WNAUDIT_FUZZ_EXAMPLES=N`` runs N examples per property (see ``fuzzing.py``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

from wnaudit.cli.command import run

from .fuzzing import fuzz_settings
from .test_fuzz_hostile_checkpoints import CATCH_ALL, _mutate

_BYTE_OPS = ["flip", "cut", "insert", "delete", "word", "flags"]
_AOTI_FOLDER = "package"
_AOTI_MODEL = f"{_AOTI_FOLDER}/data/aotinductor/model"
_CONSTANTS = ["conv.parametrizations.weight.original0", "conv.parametrizations.weight.original1", "conv.bias", "proj.weight_g", "proj.weight_v"]


class _Planted:
    """Unpickling it creates ``marker``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.makedirs, (self.marker,))


def _pickled(marker: Path) -> bytes:
    buffer = io.BytesIO()
    torch.save({"x": _Planted(str(marker))}, buffer)
    return buffer.getvalue()


def _hostile_values(marker: Path) -> list[Any]:
    code = f"__import__('os').makedirs({str(marker)!r})"
    return [
        None, 0, -1, 2**70, 1.5, True, "", "x", [], {}, [1, 2], {"as_int": 3}, code, "9**9**9**9",
        "torch.ops.aten.__class__.mro", "builtins.exec", {"as_expr": {"expr_str": code}}, {"as_operator": "builtins.eval"},
        {"use_pickle": True, "path_name": "weight_0"}, "opaque_obj_0", "../../outside",
    ]


def _exported_seed(directory: Path) -> bytes:
    torch.manual_seed(0)
    model = nn.Sequential(weight_norm(nn.Conv1d(2, 3, 3, padding=1)), nn.ReLU(), weight_norm(nn.Conv1d(3, 2, 1))).eval()
    path = directory / "seed.pt2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.export.save(torch.export.export(model, (torch.randn(1, 2, 5),)), path)
    return path.read_bytes()


def _aoti_seed() -> bytes:
    """An AOTInductor-package-shaped zip: what the audit reads, and a library it must never load."""
    wrapper = "\n".join(
        f'    constants_info_[{index}].original_fqn = "{name}";' for index, name in enumerate(_CONSTANTS)
    )
    members = {
        f"{_AOTI_FOLDER}/archive_format": b"pt2",
        f"{_AOTI_FOLDER}/archive_version": b"0",
        f"{_AOTI_MODEL}/cabc.wrapper.cpp": f"// generated\nvoid init() {{\n{wrapper}\n}}\n".encode(),
        f"{_AOTI_MODEL}/cabc_metadata.json": json.dumps({"AOTI_DEVICE_KEY": "cpu"}).encode(),
        f"{_AOTI_MODEL}/weights_config.json": json.dumps({name: {"path": f"w{i}"} for i, name in enumerate(_CONSTANTS[3:])}).encode(),
        f"{_AOTI_MODEL}/cabc.wrapper.so": b"\x7fELF" + bytes(60),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


_SEEDS: dict[str, bytes] = {}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    if not _SEEDS:
        _SEEDS.update(exported=_exported_seed(tmp_path_factory.mktemp("seed")), aoti=_aoti_seed())
    return _SEEDS


@pytest.fixture(scope="module")
def seeded(seeds: dict[str, bytes]) -> None:
    """For the properties: a failing example then prints ``seeded=None``, not the seed archives' bytes."""


def _json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in a JSON document, iteratively."""
    paths, stack = [], [(prefix, value)]
    while stack:
        path, item = stack.pop()
        paths.append(path)
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        stack.extend((path + (key,), child) for key, child in children)
    return paths


def _replace_json(data: bytes, where: float, value: Any) -> bytes:
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return data
    paths = _json_paths(document)[1:]
    if not paths:
        return json.dumps(value).encode()
    path = paths[int(where * (len(paths) - 1))]
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return json.dumps(document).encode()


def _edit_members(data: bytes, edit: Any) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as old, zipfile.ZipFile(out, "w") as new, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a duplicate name is one of the mutations
        names = [info.filename for info in old.infolist()]
        for name, content in edit(names, {name: old.read(name) for name in names}):
            new.writestr(name, content)
    return out.getvalue()


def _mutate_member(data: bytes, suffix: str, where: float, value: Any) -> bytes:
    def edit(names: list[str], contents: dict[str, bytes]) -> list[tuple[str, bytes]]:
        return [(name, _replace_json(contents[name], where, value) if name.endswith(suffix) else contents[name]) for name in names]

    return _edit_members(data, edit)


def _add_or_drop(data: bytes, where: float, inner: str, payload: bytes) -> bytes:
    def edit(names: list[str], contents: dict[str, bytes]) -> list[tuple[str, bytes]]:
        folder = names[0].partition("/")[0]
        kept = [(name, contents[name]) for name in names]
        if where < 0.3:  # drop one member
            del kept[int(where / 0.3 * (len(kept) - 1))]
            return kept
        return [*kept, (f"{folder}/{inner}", payload)]

    return _edit_members(data, edit)


def _edit_wrapper(data: bytes, where: float, text: str) -> bytes:
    def edit(names: list[str], contents: dict[str, bytes]) -> list[tuple[str, bytes]]:
        out = []
        for name in names:
            content = contents[name]
            if name.endswith(".wrapper.cpp"):
                at = int(where * len(content))
                content = content[:at] + text.encode("utf-8", "surrogatepass") + content[at:]
            out.append((name, content))
        return out

    return _edit_members(data, edit)


_MEMBER_NAMES = [
    "models/model.json.bak", "models/hidden", "models/other.json", "data/weights/model.pt", "data/constants/model.pt",
    "data/sample_inputs/model.pt", "data/weights/stray", "extra/notes", "data/aotinductor/model/x.so", "serialized_state_dict.pt",
]


def _check(path: Path, marker: Path, aoti: bool) -> None:
    before = path.read_bytes()
    for args in ((), ("--fix",)):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = run(["-q", *args, str(path)])
        assert not marker.exists(), f"code from the archive ran ({args})"
        assert status in (0, 1, 2), err.getvalue()
        assert not CATCH_ALL.search(err.getvalue()) and "Traceback" not in err.getvalue(), err.getvalue()
        if aoti or status == 2:
            assert path.read_bytes() == before, "a refused or compiled archive was rewritten"
        before = path.read_bytes()


@st.composite
def _mutant(draw: Any, seed: bytes, marker: Path, aoti: bool) -> bytes:
    where = draw(st.floats(0, 1))
    kinds = ["bytes", "json", "member"] + (["wrapper", "config"] if aoti else ["config", "json"])
    kind = draw(st.sampled_from(kinds))
    if kind == "bytes":
        return _mutate(seed, draw(st.sampled_from(_BYTE_OPS)), where, draw(st.binary(min_size=1, max_size=16)))
    if kind == "member":
        payload = draw(st.sampled_from([_pickled(marker), b"", b"{}", b"\x00" * 8]))
        return _add_or_drop(seed, where, draw(st.sampled_from(_MEMBER_NAMES)), payload)
    if kind == "wrapper":
        text = draw(st.one_of(st.sampled_from(['constants_info_[9].original_fqn = "x.weight_g";', '"', "\\", "\n", "\x00"]), st.text(max_size=12)))
        return _edit_wrapper(seed, where, text)
    suffix = {"json": "models/model.json", "config": "weights_config.json"}[kind]
    return _mutate_member(seed, suffix, where, draw(st.sampled_from(_hostile_values(marker))))


def _fuzz_once(directory: Path, data: st.DataObject, kind: str) -> None:
    """One mutant of the ``kind`` seed, audited and fixed."""
    marker = directory / "ran"
    path = directory / "m.pt2"
    path.write_bytes(data.draw(_mutant(_SEEDS[kind], marker, aoti=kind == "aoti")))
    _check(path, marker, aoti=kind == "aoti")


@fuzz_settings(8, long_share=0.2)
@given(data=st.data())
def test_a_mutated_exported_program_never_runs_code_nor_gives_an_unexpected_line(
    tmp_path_factory: pytest.TempPathFactory, seeded: None, data: st.DataObject,
) -> None:
    _fuzz_once(tmp_path_factory.mktemp("fuzz"), data, "exported")


@fuzz_settings(20)
@given(data=st.data())
def test_a_mutated_aoti_package_never_runs_code_nor_gives_an_unexpected_line(
    tmp_path_factory: pytest.TempPathFactory, seeded: None, data: st.DataObject,
) -> None:
    _fuzz_once(tmp_path_factory.mktemp("fuzz"), data, "aoti")


def test_the_aoti_seed_is_audited_as_a_package(tmp_path: Path, capsys: pytest.CaptureFixture[str], seeds: dict[str, bytes]) -> None:
    """The control: the hand-built package reads as an AOTInductor package with two weight-norm pairs."""
    path = tmp_path / "p.pt2"
    path.write_bytes(seeds["aoti"])
    assert run(["-q", "--output-format", "json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    found = [(f["code"], f["object"]) for f in report["findings"]]
    assert found == [("WN403", "conv.weight"), ("WN403", "proj.weight")] and "AOTInductor package" in report["findings"][0]["message"], report


def test_a_sample_inputs_member_with_a_bad_crc_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], seeds: dict[str, bytes]) -> None:
    """Found by this fuzzer at 19 examples: the trust screen read the sample inputs unguarded:
    ``unexpected BadZipFile: Bad CRC-32``."""
    data = bytearray(seeds["exported"])
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = next(info for info in archive.infolist() if info.filename.endswith("sample_inputs/model.pt"))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    path = tmp_path / "crc.pt2"
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    assert run(["-q", "--fix", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot be read" in err and not CATCH_ALL.search(err), err
    assert path.read_bytes() == before


def test_a_weight_stored_with_other_sizes_than_its_graph_records_is_refused_before_running(
    tmp_path: Path, seeds: dict[str, bytes],
) -> None:
    """Found by this fuzzer (seed 3 of a 2000-example run): a weights config giving v the sizes [0, 2, 3]
    while the graph records [3, 2, 3]; torch loads it as declared and its weight-norm kernel divides by
    zero: the process died of SIGFPE.  A child process, so a crash fails the test."""
    def edit(config: dict[str, Any]) -> None:
        config["config"]["0.parametrizations.weight.original1"]["tensor_meta"]["sizes"][0] = {"as_int": 0}

    def rewrite(names: list[str], contents: dict[str, bytes]) -> list[tuple[str, bytes]]:
        out = []
        for name in names:
            content = contents[name]
            if name.endswith("model_weights_config.json"):
                config = json.loads(content)
                edit(config)
                content = json.dumps(config).encode()
            out.append((name, content))
        return out

    path = tmp_path / "empty.pt2"
    path.write_bytes(_edit_members(seeds["exported"], rewrite))
    before = path.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "WNAUDIT_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-m", "wnaudit", "-q", "--fix", str(path)], capture_output=True, text=True, env=env, timeout=120, check=False)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "does not match its graph" in lines[0], (done.returncode, done.stderr)
    assert path.read_bytes() == before
