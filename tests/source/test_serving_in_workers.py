"""WN110's serving facts of a file are computed beside its analysis, from the same parse (issues 21, 38), never twice.

The scan computes them in the analysis workers for the files it analyses, and
the workspace beside its own analyses; the index takes them instead of parsing
the file again, and a file no one analysed yet is analysed by the index's own
parse.  The answer is the same as when the index parses every file itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.source.test_derived_cache import _answer, _voc
from wnaudit.source import analyses
from wnaudit.source.pipeline.analyse import summarize_serving
from wnaudit.source.project import Project
from wnaudit.source.reading import SourceError
from wnaudit.source.serving import file_facts
from wnaudit.source.serving.reader import ServingReader
from wnaudit.source.serving.index import ServingIndex

SERVE_EVAL = "from .mid import Mid\n\n\ndef serve():\n    model = Mid()\n    model.eval()\n    return model\n"


def _parsed_by_the_index(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    modules: list[str] = []
    real = file_facts.read_serving_facts

    def counted(data: bytes, path: str, module: str, is_package: bool) -> object:
        modules.append(module)
        return real(data, path, module, is_package)

    monkeypatch.setattr(file_facts, "read_serving_facts", counted)
    monkeypatch.setattr(analyses, "read_serving_facts", counted)  # the index's own parse, through the workspace's analyses
    return modules


def test_the_index_does_not_parse_a_file_the_analysis_gave_facts_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _voc(tmp_path)
    (package / "serve.py").write_text(SERVE_EVAL)
    paths = sorted(package.glob("*.py"))
    parsed = _parsed_by_the_index(monkeypatch)
    found = _answer(paths, cache=False)
    assert any(code == "WN110" for _, code, _, _ in found)
    assert parsed == []  # every file's facts came from a parse that analysed it too
    monkeypatch.undo()
    monkeypatch.setattr(ServingReader, "facts", lambda self: None)  # nothing beside the analyses: the index parses
    parsed = _parsed_by_the_index(monkeypatch)
    assert _answer(paths, cache=False) == found  # the same answer when the index parses everything itself
    assert "voc.base" in parsed and "voc.serve" in parsed


def test_the_facts_are_the_ones_the_index_computes(tmp_path: Path) -> None:
    package = _voc(tmp_path)
    base = package / "base.py"
    project = Project([tmp_path])
    location = project.locate(base)
    own = ServingIndex(project, lambda path: path.read_bytes(), lambda path: []).facts(base)
    assert own is not None
    assert summarize_serving(base.read_bytes(), str(base), location)[1] == own
    with pytest.raises(SourceError):
        summarize_serving(b"def broken(:\n", str(base), location)
