"""Hostile checkpoints never give an ``unexpected ...`` line (issue 23, item 5).

Every internal error a damaged or hostile file can reach gets its own
message; ``unexpected TypeName`` is the catch-all for bugs.  Valid torch zip,
nested zip, legacy and safetensors checkpoints are mutated (bytes flipped,
cut, inserted, deleted; zip flags; ``data.pkl`` bytes), then audited and
fixed in-process.
"""

from __future__ import annotations

import contextlib
import io
import re
import struct
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from safetensors.torch import save_file

from wnaudit.cli.command import run

from .fuzzing import fuzz_settings
from .helpers import run_cli

#: wnaudit's catch-all for an error type nobody gave a message (torch's own "unexpected EOF" is fine).
CATCH_ALL = re.compile(r": unexpected [A-Z][A-Za-z]*(:|$)")


def _seeds(directory: Path) -> dict[str, bytes]:
    torch.manual_seed(0)
    state = {
        "c.weight_g": torch.rand(3, 1, 1) + 0.5, "c.weight_v": torch.randn(3, 2, 3), "c.bias": torch.randn(3),
        "m.parametrizations.weight.original0": torch.rand(2, 1) + 0.5, "m.parametrizations.weight.original1": torch.randn(2, 4),
    }
    files = {"zip": directory / "z.pt", "nested": directory / "n.pt", "legacy": directory / "l.pt", "safetensors": directory / "s.safetensors"}
    torch.save(state, files["zip"])
    torch.save({"generator": state, "steps": 3}, files["nested"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.save(state, files["legacy"], _use_new_zipfile_serialization=False)
    save_file(state, files["safetensors"])
    return {kind: path.read_bytes() for kind, path in files.items()}


_SEEDS: dict[str, bytes] = {}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    if not _SEEDS:
        _SEEDS.update(_seeds(tmp_path_factory.mktemp("seeds")))
    return _SEEDS


def _rezip(data: bytes, edit: Any) -> bytes:
    try:
        source = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            new_info, content = edit(info, source.read(info.filename))
            target.writestr(new_info, content)
    return out.getvalue()


def _mutate(data: bytes, op: str, where: float, payload: bytes) -> bytes:
    at = int(where * max(len(data) - 1, 0))
    if op == "flip":
        return data[:at] + payload[:1] + data[at + 1 :]
    if op == "cut":
        return data[:at]
    if op == "insert":
        return data[:at] + payload + data[at:]
    if op == "delete":
        return data[:at] + data[at + len(payload) :]
    if op == "word":
        return data[:at] + struct.pack("<I", int.from_bytes(payload[:4].ljust(4, b"\0"), "little")) + data[at + 4 :]
    if op == "pickle":
        def edit(info: zipfile.ZipInfo, content: bytes) -> tuple[zipfile.ZipInfo, bytes]:
            if info.filename.endswith("data.pkl") and content:
                spot = int(where * (len(content) - 1))
                content = content[:spot] + payload[:1] + content[spot + 1 :]
            return info, content

        return _rezip(data, edit)

    return _set_flags(data, where, payload[0] & 0x0F or 1)  # "flags"


def _set_flags(data: bytes, where: float, bits: int) -> bytes:
    """OR ``bits`` into the general-purpose flags of one central-directory entry (e.g. 1: encrypted)."""
    entries = [m.start() for m in re.finditer(re.escape(b"PK\x01\x02"), data)]
    if not entries:
        return data
    at = entries[int(where * (len(entries) - 1))] + 8
    (flags,) = struct.unpack("<H", data[at : at + 2])
    return data[:at] + struct.pack("<H", flags | bits) + data[at + 2 :]


@fuzz_settings(30)
@given(
    kind=st.sampled_from(["zip", "nested", "legacy", "safetensors"]),
    op=st.sampled_from(["flip", "cut", "insert", "delete", "word", "pickle", "flags"]),
    where=st.floats(0, 1),
    payload=st.binary(min_size=1, max_size=32),
)
def test_a_mutated_checkpoint_never_gives_an_unexpected_line(
    tmp_path_factory: pytest.TempPathFactory, seeds: dict[str, bytes], kind: str, op: str, where: float, payload: bytes,
) -> None:
    directory = tmp_path_factory.mktemp("fuzz")
    path = directory / ("f.safetensors" if kind == "safetensors" else "f.pt")
    path.write_bytes(_mutate(seeds[kind], op, where, payload))
    for args in ((), ("--fix",)):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = run(["-q", *args, str(path)])
        assert status in (0, 1, 2), err.getvalue()
        assert not CATCH_ALL.search(err.getvalue()) and "Traceback" not in err.getvalue(), err.getvalue()


def test_an_encrypted_record_is_named_not_unexpected(tmp_path: Path, capsys: pytest.CaptureFixture[str], seeds: dict[str, bytes]) -> None:
    """Found by this fuzzer: zipfile's RuntimeError for an encrypted record reached the catch-all."""
    path = tmp_path / "encrypted.pt"
    path.write_bytes(_set_flags(seeds["nested"], 0.5, 1))
    for args in ((), ("--fix",)):
        done = run_cli(capsys, *args, path)
        assert done.rc == 2 and "encrypted" in done.stderr and not CATCH_ALL.search(done.stderr), done.stderr


def test_a_tensor_whose_backward_hooks_are_no_dict_is_one_line_on_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str], seeds: dict[str, bytes]) -> None:
    """Found by this fuzzer at 3000 examples: ``data.pkl`` handing a tensor the OrderedDict *class* as its
    backward hooks loads (torch.load accepts it), then torch.save fails: ``unexpected TypeError``."""

    def edit(info: zipfile.ZipInfo, content: bytes) -> tuple[zipfile.ZipInfo, bytes]:
        if info.filename.endswith("data.pkl"):  # c.bias (kept by the fix): its hooks' EMPTY_TUPLE, REDUCE dropped
            call = content.index(b")R", content.index(b"c.bias"))
            content = content[:call] + content[call + 2 :]
        return info, content

    for kind in ("zip", "nested"):
        path = tmp_path / f"{kind}.pt"
        path.write_bytes(_rezip(seeds[kind], edit))
        loaded = torch.load(path, weights_only=True)  # torch accepts it
        assert isinstance((loaded if kind == "zip" else loaded["generator"])["c.bias"]._backward_hooks, type)
        before = path.read_bytes()
        done = run_cli(capsys, "--fix", path)
        assert done.rc == 2 and not CATCH_ALL.search(done.stderr) and "Traceback" not in done.stderr, done.stderr
        assert "backward hooks of type type" in done.stderr and path.read_bytes() == before, done.stderr
