"""Builders shared by the reliability suite.

Hostile files are built here from code, never stored: each payload, if it ever
ran, would create a marker file, which the tests look for.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import pickle
import struct
import subprocess
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from wnaudit.common.atomic import TEMP_SUFFIX
from wnaudit.cli.command import run

# --------------------------------------------------------------------------
# Running the CLI in-process
# --------------------------------------------------------------------------

ERROR_PREFIX = "wnaudit: error: "


@dataclass
class CliRun:
    rc: int
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith(ERROR_PREFIX)]

    def errors_for(self, path: Path | str) -> list[str]:
        return [line for line in self.error_lines if line.startswith(f"{ERROR_PREFIX}{path}: ")]

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)


def run_cli(capsys: pytest.CaptureFixture[str], *args: Any) -> CliRun:
    """Run ``wnaudit ARGS`` in this process; return exit status and captured output."""
    capsys.readouterr()
    rc = run([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return CliRun(rc, out, err)


def assert_no_traceback(result: CliRun) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def leftover_temps(*directories: Path) -> list[Path]:
    return [p for d in directories for p in d.iterdir() if p.name.endswith(TEMP_SUFFIX)]


# --------------------------------------------------------------------------
# Pickle payloads
# --------------------------------------------------------------------------


class _Reduce:
    """Pickles as ``func(*args)``: the shape every pickle exploit takes."""

    def __init__(self, func: Any, *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self.func, self.args

    def __call__(self, *args: Any) -> Any:
        # Only so that pickle accepts a _Reduce as the callable of another _Reduce.
        raise NotImplementedError


def _touch_code(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').close()"


def _payload_os_system(marker: Path) -> Any:
    return _Reduce(os.system, f"touch '{marker}'")


def _payload_eval(marker: Path) -> Any:
    return _Reduce(builtins.eval, _touch_code(marker))


def _payload_exec(marker: Path) -> Any:
    return _Reduce(builtins.exec, _touch_code(marker))


def _payload_popen(marker: Path) -> Any:
    return _Reduce(subprocess.Popen, ["touch", str(marker)])


def _payload_run(marker: Path) -> Any:
    return _Reduce(subprocess.run, ["touch", str(marker)])


def _payload_import(marker: Path) -> Any:
    """``getattr(__import__("os"), "system")("touch MARKER")``, chained inside the pickle."""
    system = _Reduce(builtins.getattr, _Reduce(builtins.__import__, "os"), "system")
    return _Reduce(system, f"touch '{marker}'")


PAYLOADS: dict[str, Callable[[Path], Any]] = {
    "os.system": _payload_os_system,
    "eval": _payload_eval,
    "exec": _payload_exec,
    "subprocess.Popen": _payload_popen,
    "subprocess.run": _payload_run,
    "builtins.__import__": _payload_import,
}

#: Payloads whose effect may land after the loader returns (a child process).
ASYNC_PAYLOADS = {"subprocess.Popen"}


def nested_in_state_dict(payload: Any) -> dict[str, Any]:
    """Hide the payload where a real checkpoint keeps its tensors."""
    return {"generator": {"state_dict": {"conv_pre.weight_g": payload}}, "step": 500000}


def marker_appeared(marker: Path, payload: str) -> bool:
    """True once the marker exists; waits briefly for payloads that spawn a process."""
    deadline = time.monotonic() + (0.5 if payload in ASYNC_PAYLOADS else 0.0)
    while True:
        if marker.exists():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


# --------------------------------------------------------------------------
# Containers a payload can hide in
# --------------------------------------------------------------------------


def write_raw_pickle(path: Path, obj: Any) -> Path:
    path.write_bytes(pickle.dumps(obj, protocol=2))
    return path


def write_torch_zip(path: Path, obj: Any) -> Path:
    import torch

    torch.save(obj, path)
    return path


def write_torch_legacy(path: Path, obj: Any) -> Path:
    import torch

    torch.save(obj, path, _use_new_zipfile_serialization=False)
    return path


def write_handmade_zip(path: Path, data_pkl: bytes | Any) -> Path:
    """A torch-style zip archive written by hand around a ``data.pkl`` we choose."""
    if not isinstance(data_pkl, bytes):
        data_pkl = pickle.dumps(data_pkl, protocol=2)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", data_pkl)
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/version", "3\n")
    return path


CONTAINERS: dict[str, Callable[[Path, Any], Path]] = {
    "raw-pickle": write_raw_pickle,
    "torch-zip": write_torch_zip,
    "torch-legacy": write_torch_legacy,
    "handmade-zip": write_handmade_zip,
}


# --------------------------------------------------------------------------
# Deeply nested pickles, built opcode by opcode (pickle.dumps would recurse)
# --------------------------------------------------------------------------


def deep_dict_pickle(depth: int) -> bytes:
    """``{"a": {"a": ... {} ...}}`` nested ``depth`` times."""
    key = b"X" + struct.pack("<I", 1) + b"a"  # BINUNICODE "a"
    return b"\x80\x02" + (b"}" + key) * depth + b"}" + b"s" * depth + b"."


def deep_list_pickle(depth: int) -> bytes:
    """``[[[...]]]`` nested ``depth`` times."""
    return b"\x80\x02" + b"]" * (depth + 1) + b"a" * depth + b"."


# --------------------------------------------------------------------------
# Safetensors, by hand
# --------------------------------------------------------------------------


def safetensors_bytes(header: Any, data: bytes = b"", *, header_length: int | None = None) -> bytes:
    """A safetensors file with the header we choose (a dict, or raw bytes for a broken one)."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode("utf-8")
    length = len(raw) if header_length is None else header_length
    return struct.pack("<Q", length) + raw + data


# --------------------------------------------------------------------------
# Valid checkpoints with stored weight norm (the reference for every fold)
# --------------------------------------------------------------------------


def weight_normed_model(seed: int = 0) -> Any:
    """A small model with both weight-norm spellings and one plain layer."""
    import warnings

    import torch
    from torch import nn

    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model = nn.Sequential(
            nn.utils.weight_norm(nn.Conv1d(4, 6, 3)),  # noqa: WN103 - the legacy spelling under test
            nn.utils.parametrizations.weight_norm(nn.ConvTranspose1d(6, 4, 4, stride=2)),
            nn.Conv1d(4, 2, 1),
        )
    with torch.no_grad():  # move g away from ||v|| so a fold that ignores g shows
        for name, parameter in model.named_parameters():
            if name.endswith(("_g", "original0")):
                parameter.mul_(1.5)
    return model


def folded_reference(seed: int = 0) -> dict[str, Any]:
    """The state dict the live model has once folded: what every checkpoint fix must write."""
    import wnaudit

    model = weight_normed_model(seed)
    wnaudit.fold_weight_norm(model)
    return {key: value.detach().clone() for key, value in model.state_dict().items()}


def write_checkpoint(path: Path, fmt: str = "torch", seed: int = 0) -> Path:
    state = {k: v.detach().clone().contiguous() for k, v in weight_normed_model(seed).state_dict().items()}
    if fmt == "torch":
        import torch

        torch.save(state, path)
    elif fmt == "safetensors":
        from safetensors.torch import save_file

        save_file(state, str(path))
    else:  # pragma: no cover - test bug
        raise ValueError(fmt)
    return path


def load_checkpoint(path: Path) -> dict[str, Any]:
    if not path.read_bytes()[:4] == b"PK\x03\x04":
        from safetensors.torch import load_file

        return load_file(str(path))
    import torch

    return torch.load(path, weights_only=True)


def same_tensors(left: dict[str, Any], right: dict[str, Any]) -> bool:
    import torch

    return left.keys() == right.keys() and all(
        left[k].dtype == right[k].dtype and torch.equal(left[k], right[k]) for k in left
    )


# --------------------------------------------------------------------------
# Buggy source with a fix
# --------------------------------------------------------------------------

BUGGY_SOURCE = '''\
"""A vocoder fragment that applies the deprecated weight norm and removes it."""
import torch
from torch import nn
from torch.nn.utils import remove_weight_norm, weight_norm


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv_pre = weight_norm(nn.Conv1d(80, 64, 7, padding=3))
        self.ups = nn.ModuleList([weight_norm(nn.ConvTranspose1d(64, 32, 8, 4, padding=2))])

    def remove_weight_norm(self) -> None:
        remove_weight_norm(self.conv_pre)
        for up in self.ups:
            remove_weight_norm(up)
'''


# --------------------------------------------------------------------------
# Faults for the atomic writer
# --------------------------------------------------------------------------


class InjectedFault(OSError):
    """What the fault seam raises: an I/O error, as a real failure would be."""


def fault_at(step: str) -> Callable[[str], None]:
    def fault(current: str) -> None:
        if current == step:
            raise InjectedFault(errno.EIO, f"injected fault at {step}")

    return fault


class FillingDisk(io.FileIO):
    """A file on a disk that fills up after ``budget`` bytes: a partial write, then ENOSPC."""

    def __init__(self, fd: int, budget: int) -> None:
        super().__init__(fd, "w", closefd=True)
        self.budget = budget
        self.written = 0

    def write(self, data: Any) -> int:  # type: ignore[override]
        room = self.budget - self.written
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        count = super().write(bytes(memoryview(data)[:room]))
        self.written += count
        return count


def disk_fills_after(monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    """Make the atomic writer's temporary files hit ENOSPC after ``budget`` bytes."""
    real_fdopen = os.fdopen

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        link = os.readlink(f"/proc/self/fd/{fd}")
        if "w" in mode and (link.endswith(TEMP_SUFFIX) or link.endswith(" (deleted)")):  # named or O_TMPFILE
            return io.BufferedWriter(FillingDisk(fd, budget))
        return real_fdopen(fd, mode, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", fdopen)
    # Writers that bypass the Python stream (the streaming torch-zip fix writes
    # to the descriptor and copies records in the kernel) hit the same full disk.
    written: dict[int, int] = {}

    def is_temp(fd: int) -> bool:
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return False
        return link.endswith(TEMP_SUFFIX) or link.endswith(" (deleted)")

    def budgeted(real: Any, fd_position: int, size_of: Any) -> Any:
        def call(*args: Any) -> Any:
            fd = args[fd_position]
            if not is_temp(fd):
                return real(*args)
            room = budget - written.get(fd, 0)
            if room <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            args = size_of(args, room)
            count = real(*args)
            written[fd] = written.get(fd, 0) + count
            return count

        return call

    monkeypatch.setattr(os, "write", budgeted(os.write, 0, lambda a, room: (a[0], memoryview(a[1])[:room])))
    if hasattr(os, "copy_file_range"):
        monkeypatch.setattr(
            os, "copy_file_range", budgeted(os.copy_file_range, 1, lambda a, room: (a[0], a[1], min(a[2], room), *a[3:]))
        )
    monkeypatch.setattr(os, "sendfile", budgeted(os.sendfile, 0, lambda a, room: (*a[:3], min(a[3], room))))


def fsync_fails_with_enospc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Delayed allocation: the write succeeded, the flush to disk reports ENOSPC."""

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


def replace_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, "injected rename failure")

    monkeypatch.setattr(os, "replace", replace)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# --------------------------------------------------------------------------
# Running code without root's power over permissions
# --------------------------------------------------------------------------

#: Capabilities that let root ignore file and directory permission bits.
_PERMISSION_CAPS = {"CAP_DAC_OVERRIDE": 1, "CAP_DAC_READ_SEARCH": 2, "CAP_FOWNER": 3}
_PR_CAPBSET_DROP = 24


def _drop_permission_caps() -> None:
    """In the child before exec: drop the capabilities, so root obeys permission bits."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in _PERMISSION_CAPS.values():
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def run_unprivileged(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` so that read-only permission bits bind, even when we are root."""
    import sys

    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_drop_permission_caps if os.geteuid() == 0 else None,
    )


# --------------------------------------------------------------------------
# A zip bomb: 2 MiB on disk, a data.pkl that inflates to 2 GiB
# --------------------------------------------------------------------------


def _deflate_bomb(size: int) -> bytes:
    """Raw deflate of a pickle holding ``size`` zero bytes, built from one repeated flushed block."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(b"\x80\x02\x8e" + struct.pack("<Q", size)) + compressor.flush(zlib.Z_FULL_FLUSH)
    block_size = 1 << 20
    block = compressor.compress(bytes(block_size)) + compressor.flush(zlib.Z_FULL_FLUSH)
    # After a full flush the compressor starts afresh: every block compresses the same.
    assert compressor.compress(bytes(block_size)) + compressor.flush(zlib.Z_FULL_FLUSH) == block
    tail = compressor.compress(b".") + compressor.flush()
    return head + block * (size // block_size) + tail


def write_zip_bomb(path: Path, size: int = 2 << 30) -> Path:
    """A torch-shaped zip whose deflated ``data.pkl`` declares and inflates to ``size`` bytes.

    Written by hand (zipfile cannot store precompressed data); the CRC of the
    bomb is left 0: a reader that checks it only does so after inflating.
    """
    members = [
        ("archive/data.pkl", 8, _deflate_bomb(size), 3 + 8 + size + 1),
        ("archive/version", 0, b"3\n", 2),
    ]
    local = bytearray()
    central = bytearray()
    for name, method, payload, uncompressed in members:
        crc = zlib.crc32(payload) if method == 0 else 0
        offset = len(local)
        encoded = name.encode()
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(payload), uncompressed, len(encoded), 0)
        local += encoded + payload
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, len(payload), uncompressed, len(encoded),
            0, 0, 0, 0, 0, offset,
        )
        central += encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(local), 0)
    path.write_bytes(bytes(local + central + end))
    return path
