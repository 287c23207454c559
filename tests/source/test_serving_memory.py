"""WN110's serving walk holds a big file's kept nodes lean (issue 21: at most 50 bytes of memory per source byte).

The walk keeps the calls, values and annotations the linker reads, about two
in five of a file's nodes, until the whole file is walked.  These tests pin
the three things that keep that small: the nodes of a line share one line
number, the kept nodes lose their end positions, and the linker releases each
record once linked.
"""

from __future__ import annotations

import dataclasses

import ast
import copy
import weakref

from wnaudit.source.serving.fact_walker import FactWalker
from wnaudit.source.serving.link_calls import CallLinker
from wnaudit.source.serving.linker import Linker
from wnaudit.source.serving.reader import serving_facts
from wnaudit.source.serving.slim_trees import shift_lines

SOURCE = """\
class Model(nn.Module):
    def __init__(self, dec: Decoder):
        super().__init__()
        self.dec = weight_norm(nn.Conv1d(2, 2, 3))

def serve(model):
    model.eval()
    model.dec.remove_weight_norm()
    remove_weight_norm(model.dec)
"""


def test_shifted_lines_are_those_of_increment_lineno_and_shared_per_line():
    tree = ast.parse(SOURCE)
    expected = ast.increment_lineno(copy.deepcopy(tree), 10_000)
    shift_lines(tree, 10_000)
    assert ast.dump(tree, include_attributes=True) == ast.dump(expected, include_attributes=True)
    call = tree.body[1].body[2].value  # remove_weight_norm(model.dec), line 10_009
    assert isinstance(call, ast.Call)
    assert call.lineno is call.func.lineno is call.args[0].value.lineno  # one number for the line, not one per node
    assert call.end_lineno is call.lineno


def test_kept_nodes_lose_their_end_positions():
    tree = ast.parse(SOURCE)
    call = tree.body[1].body[2].value
    serving_facts([(0, tree)], "m", False)
    for node in ast.walk(call):
        if node._attributes:
            assert "end_lineno" not in vars(node) and "end_col_offset" not in vars(node), ast.dump(node)
    assert ast.unparse(call) == "remove_weight_norm(model.dec)"


def test_slimmed_facts_are_the_facts_of_the_whole_tree():
    """Slimming and the shared numbers change nothing the facts say (pieces with an offset)."""
    pieces = [(0, ast.parse(SOURCE)), (9, ast.parse(SOURCE.replace("Model", "Other")))]
    slim = serving_facts(pieces, "m", False)
    walker = FactWalker("m", False)
    for offset, tree in [(0, ast.parse(SOURCE)), (9, ast.increment_lineno(ast.parse(SOURCE.replace("Model", "Other")), 9))]:
        walker.walk(tree)
    walker.note_smoke_tests()
    assert slim.settings == {"dec": True}  # the reader's own (``flags.Settings``): not the walker's
    assert dataclasses.replace(slim, settings={}) == Linker(walker).run()


def test_the_linker_releases_each_record_once_linked(monkeypatch):
    tree = ast.parse(SOURCE)
    calls = [node for node in ast.walk(tree.body[1]) if isinstance(node, ast.Call)]
    walker = FactWalker("m", False)
    walker.walk(tree)
    refs = [weakref.ref(node) for node in calls]
    del tree, calls
    alive_when_linked: list[int] = []
    original = CallLinker.call

    def counting(self, node, frame, guard=""):
        alive_when_linked.append(sum(ref() is not None for ref in refs))
        return original(self, node, frame, guard)

    monkeypatch.setattr(CallLinker, "call", counting)
    Linker(walker).run()
    assert alive_when_linked[0] == len(refs) and alive_when_linked[-1] == 1  # the last call is the only one left
    assert all(ref() is None for ref in refs) and walker.pending == []
