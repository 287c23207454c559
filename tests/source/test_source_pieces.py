"""Big files are parsed in pieces (memory follows the piece): same facts as one parse.

The cuts fall where a top-level statement may start; these files put
column-0 text inside strings, decorators, ``else``/``except`` branches and
continuations right at candidate cuts, so a wrong cut would show.
"""

from __future__ import annotations

import ast

import pytest

from wnaudit.source import engine
from wnaudit.source.analysis import pieces as parsing

UNIT = '''\
import torch.nn as nn
from torch.nn.utils import remove_weight_norm
try:
    from torch.nn.utils.parametrizations import weight_norm
except ImportError:
    from torch.nn.utils import weight_norm

NOTE = """
def not_code():
class Nope:
    remove_weight_norm(x)
"""


@staticmethod
def helper_{i}(layer):
    return weight_norm(layer)


if nn is None:
    pass
else:
    CHOICE_{i} = remove_weight_norm


class Block{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = helper_{i}(nn.Conv1d(2, 2, 3))

    def fold(self):
        remove_weight_norm(self.conv)


total_{i} = (1 +
2)
value_{i} = 1 + \\
3
'''


def _source(count: int) -> str:
    return "".join(UNIT.replace("{i}", str(i)) for i in range(count))


def _facts(text: str) -> tuple:
    summary = engine.summarize(text, "big.py", "big")
    return (summary.applications, summary.removals, summary.units, summary.exports, summary.noqa)


def test_pieces_give_the_facts_of_one_parse(monkeypatch):
    text = _source(500)
    assert len(text) > 4 * parsing.CHUNK_CHARS
    pieces = _facts(text)
    monkeypatch.setattr(parsing, "CHUNK_CHARS", len(text) + 1)
    whole = _facts(text)
    assert pieces == whole
    assert len(pieces[1]) == 500  # one removal per class, found in every piece


def test_pieces_are_really_used(monkeypatch):
    seen = []
    original = ast.parse
    monkeypatch.setattr(parsing.ast, "parse", lambda text, **kw: seen.append(len(text)) or original(text, **kw))
    _facts(_source(500))
    assert len(seen) > 4 and max(seen) < 3 * parsing.CHUNK_CHARS


def test_syntax_error_in_a_big_file_is_reported_at_its_line():
    text = _source(200)
    lines = text.splitlines(keepends=True)
    lines[3001] = "def broken(:\n"
    broken = "".join(lines)
    with pytest.raises(SyntaxError) as expected:
        ast.parse(broken)
    with pytest.raises(engine.SourceError) as error:
        engine.summarize(broken, "big.py", "big")
    assert f"line {expected.value.lineno}" in str(error.value)
