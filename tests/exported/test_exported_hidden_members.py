"""Everything torch reads or evaluates from a ``.pt2`` is checked before torch sees it (issue 36).

torch 2.13 loads *every* member below ``models/`` as a program, whatever its suffix (it cuts the
length of ``.json`` off the name), and reads that program's payloads under the mangled name.  A
second program hidden that way, with a pickled legacy weights member or a symbolic shape that is
Python, must be refused in one line by the audit, ``--fix`` and ``wnaudit bench``, without running.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from test_exported_hostile import planted_pickle, rewrite

from wnaudit.cli.command import run

#: How torch names the program of a member below models/ (``_load_exported_programs``).
_HIDDEN_MEMBER = "models/shadow_program"
_HIDDEN_NAME = _HIDDEN_MEMBER[len("models/") : -len(".json")]


def _hidden_program(src: Path, dst: Path, *, legacy_weights: bytes | None = None, expression: str | None = None) -> Path:
    """Copy ``src`` adding a copy of its program under a name that does not end in ``.json``, with its payloads."""
    with zipfile.ZipFile(src) as opened:
        folder = opened.namelist()[0].partition("/")[0]
        program = opened.read(f"{folder}/models/model.json")
        copies = {
            f"data/sample_inputs/{_HIDDEN_NAME}.pt": opened.read(f"{folder}/data/sample_inputs/model.pt"),
            f"data/constants/{_HIDDEN_NAME}_constants_config.json": opened.read(f"{folder}/data/constants/model_constants_config.json"),
        }
        if legacy_weights is not None:
            copies[f"data/weights/{_HIDDEN_NAME}.pt"] = legacy_weights
        else:
            copies[f"data/weights/{_HIDDEN_NAME}_weights_config.json"] = opened.read(f"{folder}/data/weights/model_weights_config.json")
    if expression is not None:
        text = program.decode()
        found = set(re.findall(r'"expr_str": ("(?:[^"\\]|\\.)*")', text))
        assert found, "the source archive has symbolic sizes"
        for old in found:
            text = text.replace(f'"expr_str": {old}', f'"expr_str": {json.dumps(expression)}')
        program = text.encode()
    extra = [(f"{folder}/{_HIDDEN_MEMBER}", program), *((f"{folder}/{name}", data) for name, data in copies.items())]
    return rewrite(src, dst, after=extra)


def _cases(fused: Path, dynamic: Path, tmp_path: Path, marker: Path) -> dict[str, Path]:
    return {
        "pickled legacy weights": _hidden_program(fused, tmp_path / "pickled.pt2", legacy_weights=planted_pickle(marker)),
        "code as a shape": _hidden_program(dynamic, tmp_path / "shape.pt2", expression=f"__import__('os').makedirs({str(marker)!r})"),
    }


@pytest.mark.parametrize("case", ["pickled legacy weights", "code as a shape"])
@pytest.mark.parametrize("arguments", [["-q"], ["-q", "--fix"], ["bench"]], ids=["audit", "fix", "bench"])
def test_a_program_hidden_under_models_never_runs(
    case: str, arguments: list[str], fused_archive: Path, dynamic_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    marker = tmp_path / "ran"
    target = _cases(fused_archive, dynamic_archive, tmp_path, marker)[case]
    before = target.read_bytes()
    extra = ["--input-shape", "1,4,7", "--iterations", "2", "--warmup", "0"] if arguments == ["bench"] else []
    status = run([*arguments, str(target), *extra])
    assert not marker.exists(), "code from the archive ran"
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and str(target) in err and _HIDDEN_MEMBER in err, err
    assert target.read_bytes() == before


def test_an_unknown_member_is_refused_before_torch_loads(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A member the screen does not account for (a payload no config names) is refused, not guessed at."""
    with zipfile.ZipFile(fused_archive) as opened:
        folder = opened.namelist()[0].partition("/")[0]
    target = rewrite(fused_archive, tmp_path / "unknown.pt2", after=[(f"{folder}/data/weights/stray_payload", b"\0" * 16)])
    before = target.read_bytes()
    assert run(["-q", "--fix", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "data/weights/stray_payload" in err and "--trust-pickle" in err, err
    assert target.read_bytes() == before


def test_every_programs_sample_inputs_are_screened(fused_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """torch reads the sample inputs of every program, not only of the one it returns."""
    marker = tmp_path / "ran"
    with zipfile.ZipFile(fused_archive) as opened:
        folder = opened.namelist()[0].partition("/")[0]
        members = {info.filename.partition("/")[2]: opened.read(info) for info in opened.infolist()}
    second = [
        (f"{folder}/models/other.json", members["models/model.json"]),
        (f"{folder}/data/sample_inputs/other.pt", planted_pickle(marker)),
        (f"{folder}/data/weights/other_weights_config.json", members["data/weights/model_weights_config.json"]),
        (f"{folder}/data/constants/other_constants_config.json", members["data/constants/model_constants_config.json"]),
    ]
    target = rewrite(fused_archive, tmp_path / "two.pt2", after=second)
    from wnaudit.exported.archive import read_archive
    from wnaudit.exported.errors import ExportedProgramError
    from wnaudit.exported.fix import check_trusted

    with pytest.raises(ExportedProgramError, match="sample inputs"):
        check_trusted(target.read_bytes(), read_archive(target), trust_pickle=False)
    assert not marker.exists()
