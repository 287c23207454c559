"""Trees the flag reader parsed ahead are handed to the analysis once (``analysis/parsed_ahead.py``).

The handover saves a parse only if the analysis of a handed tree is the analysis
of a parse: a big file the analysis would parse in pieces gets the same summary
from one whole tree.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.source.test_derived_cache import BASE
from wnaudit.common.options import RunOptions
from wnaudit.source import engine, lint_run
from wnaudit.source.analysis import CHUNK_CHARS, parsed_ahead
from wnaudit.source.pipeline.analyse import summarize

#: One weight-normed class, repeated with its own names until the file is parsed in pieces.
LAYER = '''

class Layer{n}(nn.Module):
    """A layer whose docstring
starts a line at column 0, where a piece may not be cut."""

    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d({n}, 2, 3))
        self.up = torch.nn.utils.weight_norm(nn.ConvTranspose1d(2, 2, 4))

    def remove(self):
        remove_weight_norm(self.conv)
'''
HEAD = "import torch\nimport torch.nn as nn\nfrom torch.nn.utils import remove_weight_norm\n" \
       "from torch.nn.utils.parametrizations import weight_norm\n"


@pytest.fixture(autouse=True)
def nothing_waiting() -> Iterator[None]:
    parsed_ahead.forget()
    yield
    parsed_ahead.forget()


def _big_file() -> str:
    text, n = HEAD, 1
    while len(text) <= 3 * CHUNK_CHARS:
        text += LAYER.format(n=n)
        n += 1
    return text


def test_a_big_file_s_analysis_from_a_handed_tree_is_its_analysis_in_pieces() -> None:
    text = _big_file()
    in_pieces = summarize(text, "big.py", "voc.big")
    parsed_ahead.offer(text, ast.parse(text, "big.py"))
    handed = summarize(text, "big.py", "voc.big")
    assert not parsed_ahead.waits_for(text.encode())  # the analysis took the tree
    assert handed == in_pieces
    assert len(handed.applications) > 2 * (3 * CHUNK_CHARS // len(LAYER))  # both spellings of every layer


def test_a_tree_is_handed_over_once_and_only_for_its_own_text() -> None:
    text = HEAD + LAYER.format(n=1)
    tree = ast.parse(text)
    parsed_ahead.offer(text, tree)
    assert parsed_ahead.take(text + "\n") is None  # another text
    assert parsed_ahead.waits_for(text.encode())
    assert parsed_ahead.take(text) is tree
    assert parsed_ahead.take(text) is None  # the analysis may have changed it: never handed twice


def test_trees_wait_within_the_budget_oldest_dropped_first(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [HEAD + LAYER.format(n=n) for n in range(1, 5)]
    monkeypatch.setattr(parsed_ahead, "WAITING_CHARS", 2 * max(len(text) for text in texts))
    for text in texts:
        parsed_ahead.offer(text, ast.parse(text))
    assert [parsed_ahead.waits_for(text.encode()) for text in texts] == [False, False, True, True]
    parsed_ahead.forget()
    assert not any(parsed_ahead.waits_for(text.encode()) for text in texts)


def test_what_a_run_offered_and_did_not_take_goes_at_its_end() -> None:
    text = HEAD + LAYER.format(n=1)
    with parsed_ahead.for_one_run():
        parsed_ahead.offer(text, ast.parse(text))
        assert parsed_ahead.waits_for(text.encode())
    assert not parsed_ahead.waits_for(text.encode())


@pytest.mark.parametrize("entrance", ["lint_source", "fix_source", "lint_files"])
def test_every_entrance_drops_its_waiting_trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entrance: str) -> None:
    """An editor lints buffer after buffer in one process: what the flag reader offered and no analysis took goes."""
    path = tmp_path / "voc.py"
    path.write_text(BASE)
    dropped: list[bool] = []
    real = parsed_ahead.forget
    monkeypatch.setattr(parsed_ahead, "forget", lambda: dropped.append(True) or real())
    if entrance == "lint_files":
        lint_run.lint_files([path], RunOptions(jobs=1, cache=False))
    else:
        getattr(engine, entrance)(BASE, str(path))
    assert dropped == [True]
