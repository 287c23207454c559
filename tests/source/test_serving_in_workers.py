"""WN110's serving facts of a weight-normed file are computed beside its analysis (issue 21), never twice.

The index reads the serving facts of every file that applies weight norm in
a class or function; the scan computes those in the analysis workers, and the
index takes them instead of parsing the file again.  The answer is the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.source.test_derived_cache import _answer, _voc
from wnaudit.source.pipeline.analyse import serving_facts_of
from wnaudit.source.project import Project
from wnaudit.source.serving import index
from wnaudit.source.serving.index import ServingIndex

SERVE_EVAL = "from .mid import Mid\n\n\ndef serve():\n    model = Mid()\n    model.eval()\n    return model\n"


def _parsed_by_the_index(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    modules: list[str] = []
    real = index.read_serving_facts

    def counted(data: bytes, path: str, module: str, is_package: bool) -> object:
        modules.append(module)
        return real(data, path, module, is_package)

    monkeypatch.setattr(index, "read_serving_facts", counted)
    return modules


def test_the_index_does_not_parse_a_file_the_analysis_gave_facts_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _voc(tmp_path)
    (package / "serve.py").write_text(SERVE_EVAL)
    paths = sorted(package.glob("*.py"))
    parsed = _parsed_by_the_index(monkeypatch)
    found = _answer(paths, cache=False)
    assert any(code == "WN110" for _, code, _, _ in found)
    assert "voc.base" not in parsed  # the weight-normed file: its facts came from the scan
    assert "voc.serve" in parsed  # a serving file the scan did not analyse is read by the index
    monkeypatch.undo()
    monkeypatch.setattr("wnaudit.source.pipeline.scan.serves", lambda summary: False)
    assert _answer(paths, cache=False) == found  # the same answer when the index parses everything itself


def test_the_facts_are_the_ones_the_index_computes(tmp_path: Path) -> None:
    package = _voc(tmp_path)
    base = package / "base.py"
    project = Project([tmp_path])
    location = project.locate(base)
    own = ServingIndex(project, lambda path: path.read_bytes(), lambda path: []).facts(base)
    assert own is not None
    assert serving_facts_of(base.read_bytes(), str(base), location) == own
    assert serving_facts_of(b"def broken(:\n", str(base), location) is None
