"""Session-wide archives: exporting takes seconds, an AOTInductor compile tens of seconds, so each is built once."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from exported_helpers import Vocoder, exported_program, sample_input, save


@pytest.fixture(scope="session")
def fused_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A torch.export archive recording aten._weight_norm, saved under a name that says nothing."""
    return save(exported_program(), tmp_path_factory.mktemp("fused") / "vocoder_serving")


@pytest.fixture(scope="session")
def decomposed_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save(exported_program(decomposed=True), tmp_path_factory.mktemp("decomposed") / "vocoder.pt2")


@pytest.fixture(scope="session")
def aoti_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small AOTInductor package (CPU compile: slow, so once per session)."""
    path = tmp_path_factory.mktemp("aoti") / "vocoder_aoti.pt2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch._inductor.aoti_compile_and_package(exported_program(), package_path=str(path))
    return path


@pytest.fixture(scope="session")
def dynamic_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vocoder exported with a dynamic time axis: its sizes are symbolic expressions in the graph JSON."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        length = torch.export.Dim("T", min=4, max=64)
        program = torch.export.export(Vocoder().eval(), (sample_input(),), dynamic_shapes=({2: length},))
    return save(program, tmp_path_factory.mktemp("dynamic") / "dynamic.pt2")
