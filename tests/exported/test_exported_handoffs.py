"""The other entrances hand over: WN110 and the module inspector say an exported or compiled artifact keeps the norm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

from tests.source.source_helpers import GENERATOR
from wnaudit import audit_module
from wnaudit.cli.command import run

EXPORTING = "import torch\n" + GENERATOR + '''

def exported():
    model = Generator()
    return torch.export.export(model, (torch.randn(1, 80, 50),))
'''

#: The three inference sites that make an artifact, each as the served call of the example above.
ARTIFACT_CALLS = {
    "torch.export.export(model)": "torch.export.export(model, (torch.randn(1, 80, 50),))",
    "torch.compile(model)": "torch.compile(model)",
    "aoti_compile_and_package": "torch._inductor.aoti_compile_and_package(torch.export.export(model, (torch.randn(1, 80, 50),)))",
}


@pytest.mark.parametrize("site", sorted(ARTIFACT_CALLS))
def test_wn110_on_an_export_says_the_artifact_keeps_the_norm(site: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "serve.py"
    source.write_text(EXPORTING.replace(ARTIFACT_CALLS["torch.export.export(model)"], ARTIFACT_CALLS[site]))
    assert run(["--format", "json", "--select", "WN110", "--no-cache", str(source)]) == 1
    [found] = json.loads(capsys.readouterr().out)["findings"]
    assert ("torch.compile(model)" if site == "torch.compile(model)" else "torch.export.export(model)") in found["message"]
    assert "artifact" in found["message"] and "keeps computing the norm" in found["message"]


def test_module_finding_says_exported_artifacts_keep_the_norm() -> None:
    [found] = audit_module(nn.Sequential(weight_norm(nn.Conv1d(4, 4, 3))))
    assert found.code == "WN201"
    assert "torch.export program, AOTInductor package or torch.compile artifact" in found.message
