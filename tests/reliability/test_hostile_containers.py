"""Malformed and hostile checkpoint containers: safetensors headers, zip archives,
deep nesting and shard indexes.  Each gets one clear error line (or, for the
merely odd, a clean audit), never a traceback, a crash, a huge allocation, or a
read outside the directory it was given.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from .helpers import (
    CliRun,
    assert_no_traceback,
    deep_dict_pickle,
    deep_list_pickle,
    leftover_temps,
    load_checkpoint,
    run_cli,
    safetensors_bytes,
    same_tensors,
    write_checkpoint,
    write_handmade_zip,
    write_zip_bomb,
)

_F32_4 = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}


def _refused_in_one_line(capsys: pytest.CaptureFixture[str], broken: Path, good: Path) -> CliRun:
    """Audit ``broken`` beside ``good``: exit 2, one error line and it names ``broken``, no traceback."""
    result = run_cli(capsys, broken, good)
    assert_no_traceback(result)
    assert result.rc == 2
    assert len(result.error_lines) == 1 and len(result.errors_for(broken)) == 1, result.stderr
    return result


#: name -> file bytes.  Every one must be refused with one error line.
BROKEN_SAFETENSORS: dict[str, bytes] = {
    "offsets-beyond-file": safetensors_bytes({"w": {"dtype": "F32", "shape": [1024], "data_offsets": [0, 4096]}}, b"\0" * 16),
    "absurd-size": safetensors_bytes({"w": {"dtype": "F32", "shape": [1 << 40], "data_offsets": [0, 4 << 40]}}, b"\0" * 16),
    "absurd-size-matching-offsets-overflow": safetensors_bytes(
        {"w": {"dtype": "F32", "shape": [1 << 62, 1 << 62], "data_offsets": [0, 16]}}, b"\0" * 16
    ),
    "header-not-json": safetensors_bytes(b"{this is not json", b"\0" * 16),
    "header-not-utf8": safetensors_bytes(b'{"\xff\xfe": 1}', b"\0" * 16),
    "header-is-a-list": safetensors_bytes([1, 2, 3], b"\0" * 16),
    "header-longer-than-file": safetensors_bytes({"w": _F32_4}, b"\0" * 16, header_length=1 << 20),
    "header-length-2**63": safetensors_bytes({"w": _F32_4}, b"\0" * 16, header_length=1 << 63),
    "truncated-length-field": b"\x10\x00\x00",
    "empty-file": b"",
    "offsets-reversed": safetensors_bytes({"w": {"dtype": "F32", "shape": [4], "data_offsets": [16, 0]}}, b"\0" * 16),
    "offsets-not-matching-shape": safetensors_bytes({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}}, b"\0" * 16),
    "negative-shape": safetensors_bytes({"w": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}}, b"\0" * 16),
    "shape-not-a-list": safetensors_bytes({"w": {"dtype": "F32", "shape": "4", "data_offsets": [0, 16]}}, b"\0" * 16),
    "unknown-dtype": safetensors_bytes({"w": {"dtype": "F1024", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 16),
    "overlapping-tensors": safetensors_bytes(
        {"a": _F32_4, "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, b"\0" * 24
    ),
    "metadata-not-strings": safetensors_bytes({"__metadata__": {"a": {"b": 1}}, "w": _F32_4}, b"\0" * 16),
    "deeply-nested-header": safetensors_bytes(b'{"__metadata__": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", b""),
}


@pytest.mark.parametrize("case", sorted(BROKEN_SAFETENSORS))
def test_broken_safetensors_one_error_line_and_others_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(BROKEN_SAFETENSORS[case])
    good = write_checkpoint(tmp_path / "good.safetensors", "safetensors")

    _refused_in_one_line(capsys, path, good)
    report = run_cli(capsys, "--format", "json", path, good).json()
    assert [e["path"] for e in report["errors"]] == [str(path)]
    assert {f["path"] for f in report["findings"]} == {str(good)}


@pytest.mark.parametrize("case", ["offsets-beyond-file", "header-longer-than-file"])
def test_broken_safetensors_with_fix_is_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(BROKEN_SAFETENSORS[case])
    result = run_cli(capsys, "--fix", path)
    assert result.rc == 2 and len(result.errors_for(path)) == 1
    assert path.read_bytes() == BROKEN_SAFETENSORS[case]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.safetensors"]


# --------------------------------------------------------------------------
# Sizes that must not be allocated: measured in a fresh process
# --------------------------------------------------------------------------


def _zip_with_huge_declared_size(path: Path) -> Path:
    """A real torch.save archive of a weight-norm pair whose tensor records each claim 4 GiB."""
    import torch

    torch.save({"conv.weight_g": torch.ones(4, 1, 1), "conv.weight_v": torch.ones(4, 2, 3)}, path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        records = [i for i in archive.infolist() if "/data/" in i.filename and not i.filename.endswith("/")]
    huge = 0xFFFFFFF0
    for info in records:
        # Local file header: compressed and uncompressed sizes at offsets 18 and 22.
        struct.pack_into("<II", data, info.header_offset + 18, huge, huge)
        # Central directory entry: found by its signature and file name; sizes at 20 and 24.
        name = info.filename.encode()
        central = data.rfind(b"PK\x01\x02")
        while central != -1:
            name_length = struct.unpack_from("<H", data, central + 28)[0]
            if data[central + 46 : central + 46 + name_length] == name:
                struct.pack_into("<II", data, central + 20, huge, huge)
                break
            central = data.rfind(b"PK\x01\x02", 0, central)
        else:  # pragma: no cover - test bug
            raise AssertionError("central directory entry not found")
    assert records
    path.write_bytes(bytes(data))
    return path


_MEMORY_PROBE = r"""
import io, json, resource, sys
import torch  # imported before the baseline: its own footprint is not the input's
import wnaudit.cli
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
# Address space for what is loaded already plus 1 GiB: an attempt to allocate
# a claimed size fails instead of swapping the machine.
resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))
for extra in ([], ["--fix"]):
    sys.stderr = io.StringIO()
    rc = wnaudit.cli.run([*extra, *sys.argv[1:]])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sys.__stdout__.write(json.dumps({"rc": rc, "stderr": sys.stderr.getvalue(), "grown_kib": peak - baseline}) + "\n")
    sys.__stdout__.flush()
"""


def _run_memory_bounded(*args: Any) -> list[dict[str, Any]]:
    """Audit, then --fix, ``args`` in one fresh process; a signal death fails the test."""
    import subprocess
    import sys

    completed = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, *map(str, args)], capture_output=True, text=True, timeout=120
    )
    died = f"the process died (exit {completed.returncode}): {completed.stdout}{completed.stderr[-2000:]}"
    assert completed.returncode == 0, died
    return [json.loads(line) for line in completed.stdout.splitlines() if line.startswith('{"rc"')]


def _zero_size_pair(path: Path) -> Path:
    """A weight-norm pair with an empty dimension: torch's kernel divides by zero on it."""
    import torch

    torch.save({"conv.weight_g": torch.ones(0, 1, 1), "conv.weight_v": torch.ones(0, 3, 5)}, path)
    return path


def test_hostile_sizes_in_a_fresh_process(tmp_path: Path) -> None:
    """Absurd safetensors sizes, zip records claiming 4 GiB and a zip bomb (a 2 MiB file
    whose data.pkl inflates to 2 GiB), audited then fixed: refused without trying to
    allocate, little memory, the process survives, one line per refused file."""
    absurd = tmp_path / "absurd.safetensors"
    absurd.write_bytes(BROKEN_SAFETENSORS["absurd-size"])
    beyond = tmp_path / "beyond.safetensors"
    beyond.write_bytes(BROKEN_SAFETENSORS["offsets-beyond-file"])
    huge_zip = _zip_with_huge_declared_size(tmp_path / "huge.pt")
    huge_before = huge_zip.read_bytes()
    bomb = write_zip_bomb(tmp_path / "bomb.pt")
    outcomes = _run_memory_bounded(absurd, beyond, huge_zip, bomb)
    for fix, outcome in zip(("audit", "--fix"), outcomes):
        lines = [line for line in outcome["stderr"].splitlines() if line.startswith("wnaudit: error: ")]
        named = [line.split(": ")[2] for line in lines]
        assert "Traceback" not in outcome["stderr"], (fix, outcome["stderr"])
        assert not any("memory" in line.lower() or "alloc" in line.lower() for line in lines), lines
        assert outcome["grown_kib"] < 200 * 1024, f"{fix}: peak RSS grew by {outcome['grown_kib']} KiB"
        assert outcome["rc"] == 2 and len(named) == len(set(named)), (fix, lines)
        assert {str(absurd), str(beyond), str(bomb)} <= set(named), (fix, lines)
    # The lying archive cannot be folded (its records are unreadable): refused, untouched.
    assert huge_zip.read_bytes() == huge_before
    fix_errors = [line for line in outcomes[1]["stderr"].splitlines() if line.startswith("wnaudit: error: ")]
    assert any(line.split(": ")[2] == str(huge_zip) for line in fix_errors), fix_errors


def test_empty_weight_norm_pair_does_not_kill_the_run(tmp_path: Path) -> None:
    """torch's kernel divides by zero on an empty dimension (SIGFPE): --fix must refuse
    the pair with one line and go on with the other inputs, not die."""
    empty = _zero_size_pair(tmp_path / "empty.pt")
    good = write_checkpoint(tmp_path / "good.pt")
    outcomes = _run_memory_bounded(empty, good)
    fixed = outcomes[1]
    lines = [line for line in fixed["stderr"].splitlines() if line.startswith("wnaudit: error: ")]
    assert fixed["rc"] == 2 and len(lines) == 1 and lines[0].startswith(f"wnaudit: error: {empty}: "), fixed
    from .helpers import folded_reference

    assert same_tensors(load_checkpoint(good), folded_reference())


@pytest.mark.parametrize("fix", [False, True], ids=["audit", "fix"])
def test_zip_with_huge_declared_size_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str], fix: bool) -> None:
    """Audited from its pickle alone or refused; a --fix that needs its data is refused, the file kept."""
    path = _zip_with_huge_declared_size(tmp_path / "huge.pt")
    before = path.read_bytes()
    result = run_cli(capsys, *(["--fix"] if fix else []), path)
    assert_no_traceback(result)
    assert result.rc in ((2,) if fix else (1, 2)), result.stderr
    assert len(result.error_lines) == (1 if result.rc == 2 else 0), result.stderr
    assert path.read_bytes() == before
    assert leftover_temps(tmp_path) == []


# --------------------------------------------------------------------------
# Deep nesting
# --------------------------------------------------------------------------

NESTED = {
    "dicts-10000": lambda: deep_dict_pickle(10_000),
    "lists-10000": lambda: deep_list_pickle(10_000),
    "dicts-100000": lambda: deep_dict_pickle(100_000),
}


@pytest.mark.parametrize("case", sorted(NESTED))
def test_deeply_nested_pickle_no_recursion_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    """Either audited cleanly or refused with one line: never a RecursionError traceback."""
    path = write_handmade_zip(tmp_path / "deep.pt", NESTED[case]())
    good = write_checkpoint(tmp_path / "good.pt")
    result = run_cli(capsys, path, good)
    assert_no_traceback(result)
    assert result.rc in (1, 2), result.stderr  # good.pt has findings
    assert not result.errors_for(good)
    if result.rc == 2:
        assert len(result.error_lines) == 1 and len(result.errors_for(path)) == 1, result.stderr
    report = run_cli(capsys, "--format", "json", path, good).json()
    assert str(good) in {f["path"] for f in report["findings"]}


BROKEN_INDEXES = {
    "deeply-nested": '{"weight_map": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "not-json": "{weight_map: nope",
    "weight-map-is-a-list": '{"weight_map": ["model.safetensors"]}',
    "nul-byte-in-shard-name": '{"weight_map": {"conv.weight_g": "model\\u0000.safetensors"}}',
    "missing-shard": '{"weight_map": {"conv.weight_g": "model-00001-of-00002.safetensors"}}',
}


@pytest.mark.parametrize("case", sorted(BROKEN_INDEXES))
def test_broken_shard_index_one_error_line_and_others_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(BROKEN_INDEXES[case])
    good = write_checkpoint(tmp_path / "good.pt")
    result = _refused_in_one_line(capsys, index, good)
    assert str(good) in result.stdout, "the valid input was not audited"


# --------------------------------------------------------------------------
# Shard indexes must not leave their directory
# --------------------------------------------------------------------------


def _index(directory: Path, weight_map: dict[str, str]) -> Path:
    path = directory / "model.safetensors.index.json"
    path.write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A valid, weight-normed checkpoint outside the model directory: never to be read or touched."""
    secret = tmp_path / "secret"
    secret.mkdir()
    return write_checkpoint(secret / "outside.safetensors", "safetensors")


ESCAPES = {
    "dotdot-etc-passwd": "../../etc/passwd",
    "absolute-etc-passwd": "/etc/passwd",
    "dotdot-to-outside": "../secret/outside.safetensors",
    "subdir-dotdot": "sub/../../secret/outside.safetensors",
    "absolute-outside": "{outside}",
}


@pytest.mark.parametrize("case", sorted(ESCAPES))
@pytest.mark.parametrize("fix", [False, True], ids=["audit", "fix"])
def test_shard_index_pointing_outside_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outside: Path, case: str, fix: bool
) -> None:
    model = tmp_path / "model"
    (model / "sub").mkdir(parents=True)
    index = _index(model, {"conv.weight_g": ESCAPES[case].format(outside=outside)})
    before = outside.read_bytes()
    result = run_cli(capsys, *(["--fix"] if fix else []), "--format", "json", index)
    report = result.json()
    assert result.rc == 2
    assert len(report["errors"]) == 1, report
    assert report["findings"] == [], "a file outside the index's directory was audited"
    assert outside.read_bytes() == before
    assert sorted(p.name for p in outside.parent.iterdir()) == ["outside.safetensors"]


@pytest.mark.parametrize("fix", [False, True], ids=["audit", "fix"])
def test_shard_symlink_leaving_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outside: Path, fix: bool
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "model-00001-of-00001.safetensors").symlink_to(outside)
    index = _index(model, {"0.weight_g": "model-00001-of-00001.safetensors"})
    before = outside.read_bytes()
    text = run_cli(capsys, *(["--fix"] if fix else []), index)
    assert_no_traceback(text)
    assert text.rc == 2 and len(text.error_lines) == 1, text.stderr
    assert outside.read_bytes() == before
    assert (model / "model-00001-of-00001.safetensors").is_symlink()


def test_shard_symlink_inside_the_directory_is_fine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Control for the test above: a link that stays inside is followed and fixed."""
    model = tmp_path / "model"
    (model / "blobs").mkdir(parents=True)
    real = write_checkpoint(model / "blobs" / "abc123", "safetensors")
    link = model / "model-00001-of-00001.safetensors"
    link.symlink_to(Path("blobs") / "abc123")
    keys = list(load_checkpoint(real))
    index = _index(model, {key: link.name for key in keys})
    result = run_cli(capsys, "--fix", index)
    assert result.rc == 0, result.stderr
    assert link.is_symlink()
    from .helpers import folded_reference

    assert same_tensors(load_checkpoint(real), folded_reference())


# --------------------------------------------------------------------------
# Special files: a checkout may hold links to devices, a working tree a FIFO
# --------------------------------------------------------------------------


def _run_cli_subprocess(args: list[str], timeout: float = 15) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from wnaudit.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    "case", ["fifo-named-pt", "fifo-extensionless-in-a-directory", "link-to-dev-zero", "link-to-dev-urandom"]
)
def test_special_files_never_hang(tmp_path: Path, case: str) -> None:
    """Reading a FIFO blocks until a writer comes (never, in CI); a device never ends.
    Each must be refused (or skipped in a directory walk) promptly."""
    model = tmp_path / "model"
    model.mkdir()
    good = write_checkpoint(model / "good.pt")
    if case == "fifo-named-pt":
        special = model / "weights.pt"
        os.mkfifo(special)
    elif case == "fifo-extensionless-in-a-directory":
        special = model / "g_00500000"
        os.mkfifo(special)
    elif case == "link-to-dev-zero":
        special = model / "weights.pt"
        special.symlink_to("/dev/zero")
    else:
        special = model / "model.safetensors"
        special.symlink_to("/dev/urandom")
    target = [str(model)] if case.endswith("in-a-directory") else [str(special), str(good)]
    try:
        completed = _run_cli_subprocess(target)
    except subprocess.TimeoutExpired:
        pytest.fail(f"wnaudit hung on {case}")
    assert "Traceback" not in completed.stderr, completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("wnaudit: error: ")]
    assert len(errors) <= 1 and all(line.startswith(f"wnaudit: error: {special}: ") for line in errors), completed.stderr
    assert completed.returncode == (2 if errors else 1)
    assert str(good) in completed.stdout, "the valid checkpoint was not audited"


def test_fix_never_overwrites_an_existing_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A checkpoint holding both ``w.weight`` and ``w.weight_g``/``w.weight_v``: folding
    would replace the stored ``w.weight``.  --fix must refuse and keep the file."""
    import torch

    path = tmp_path / "clash.pt"
    torch.save({"w.weight": torch.zeros(2, 3), "w.weight_g": torch.ones(2, 1), "w.weight_v": torch.ones(2, 3)}, path)
    before = path.read_bytes()
    result = run_cli(capsys, "--fix", path)
    assert_no_traceback(result)
    assert result.rc == 2 and len(result.errors_for(path)) == 1, result.stderr + result.stdout
    assert path.read_bytes() == before
