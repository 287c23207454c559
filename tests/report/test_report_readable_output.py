"""Output a person reads and machines match (issue 37, item 4): fix applicability in JSON, one path
form across formats, positions on error annotations, -o beside a sharded checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wnaudit.cli.command import run

LEGACY = (
    "import torch\nfrom torch.nn.utils import weight_norm\n\n"
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
)
WN101 = (
    "import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n\n"
    "conv = weight_norm(torch.nn.Conv1d(2, 2, 3))\ntorch.nn.utils.remove_weight_norm(conv)\n"
)
SYNTAX = "from torch.nn.utils import weight_norm\ndef f(:\n"


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    status = run([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "legacy.py").write_text(LEGACY)
    (tmp_path / "modern.py").write_text(WN101)
    (tmp_path / "broken.py").write_text(SYNTAX)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_json_carries_the_fix_applicability_and_fixable_for_either(capsys, project: Path):
    _, out, _ = _run(capsys, "--output-format", "json", "legacy.py", "modern.py")
    by_code = {f["code"]: f for f in json.loads(out)["findings"]}
    assert by_code["WN101"]["fix"] == {"applicability": "safe"} and by_code["WN101"]["fixable"] is True
    assert by_code["WN103"]["fix"] == {"applicability": "unsafe"} and by_code["WN103"]["fixable"] is True


def test_json_paths_are_relative_for_findings_and_errors_alike(capsys, project: Path):
    _, out, _ = _run(capsys, "--output-format", "json", project / "modern.py", project / "broken.py")
    report = json.loads(out)
    assert [f["path"] for f in report["findings"]] == ["modern.py"]
    assert report["errors"] == [
        {"path": "broken.py", "message": "syntax error at line 2, column 7: invalid syntax", "line": 2, "column": 7}
    ]


def test_github_annotation_and_sarif_notification_of_a_syntax_error_have_its_position(capsys, project: Path):
    _, out, _ = _run(capsys, "--output-format", "github", "broken.py")
    assert out.splitlines()[0].startswith("::error file=broken.py,line=2,col=7,title=")
    _, out, _ = _run(capsys, "--output-format", "sarif", "broken.py")
    (notification,) = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notification["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 7}


def test_output_beside_a_directory_holding_one_sharded_checkpoint_says_why_not(capsys, tmp_path: Path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 4, 3))
    state = conv.state_dict()
    shards = tmp_path / "model"
    shards.mkdir()
    keys = sorted(state)
    weight_map = {}
    for number, part in enumerate((keys[:1], keys[1:]), start=1):
        name = f"model-0000{number}-of-00002.safetensors"
        save_file({key: state[key] for key in part}, str(shards / name))
        weight_map.update({key: name for key in part})
    (shards / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    status, _, err = _run(capsys, "--fix", "-o", tmp_path / "out.safetensors", shards)
    assert status == 2
    assert "-o/--output is not supported for a sharded checkpoint" in err, err
    assert "exactly one checkpoint" not in err
