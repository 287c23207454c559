"""Rules declare the per-file facts they read as providers (issue 38, item 2), as Fixit rules declare metadata.

WN109's ``self.<attr>.remove_...()`` calls are such a fact
(``providers/method_calls.py``): computed from the same parse as the file's
summary, only because a rule declares it, carried and cached with the summary.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wnaudit.common.cache import CacheStore, digest_of
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.analysis.pieces import CHUNK_CHARS
from wnaudit.source.context import Context
from wnaudit.source.engine import new_workspace
from wnaudit.source.pipeline.analyse import summarize
from wnaudit.source.providers import gather
from wnaudit.source.providers.method_calls import RemovalMethodCalls
from wnaudit.source.rules import RULES, declared_providers
from wnaudit.source.facts.kinds import SUMMARY, SummaryOf
from wnaudit.source.facts.store import FactStore
from wnaudit.source.project import Project

CALLS = textwrap.dedent('''
    import torch.nn as nn


    class Decoder(nn.Module):
        def fold(self, eval=False):
            self.dec.remove_weight_norm()
            try:
                self.post.remove_weight_norm()
            except ValueError:
                pass
            if hasattr(self.pre, "weight_g"):
                self.pre.remove_weight_norm()
            self.dec.remove_weight_norm(self.dec)
            self.dec.keep()

            def inner(self):
                self.shadowed.remove_weight_norm()

            def outer():
                self.nested.remove_weight_norm()
            return lambda: self.lam.remove_weight_norm()

        @staticmethod
        def static(self):
            self.nope.remove_weight_norm()

        class Inner(nn.Module):
            def fold(self):
                self.inner_class.remove_weight_norm()


    def top(self):
        self.module_level.remove_weight_norm()
''')
#: (line, attribute, method, guarded) of each call the provider must keep, in file order.
EXPECTED = [
    (7, "dec", "remove_weight_norm", False),
    (9, "post", "remove_weight_norm", True),
    (13, "pre", "remove_weight_norm", True),
    (21, "nested", "remove_weight_norm", False),
    (22, "lam", "remove_weight_norm", False),
]


def _calls(source: str) -> list[tuple[int, str, str, bool]]:
    summary = summarize(source, "decoder.py", "voc.decoder")
    context = Context([summary], workspace=new_workspace())
    return [(c.site.line, c.self_attr, c.method, c.guarded) for c in context.fact(summary, RemovalMethodCalls)]


def test_the_provider_keeps_the_removal_method_calls_of_methods():
    assert _calls(CALLS) == EXPECTED
    assert summarize(CALLS, "decoder.py", "voc.decoder").provided  # computed with the summary


def test_a_big_file_parsed_in_pieces_gives_lines_of_the_whole_file():
    filler = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(CHUNK_CHARS // 20))
    lines_before = filler.count("\n")
    assert len(filler) > CHUNK_CHARS
    shifted = [(line + lines_before, *rest) for line, *rest in EXPECTED]
    assert _calls(filler + CALLS) == shifted


def test_every_declared_provider_is_registered_and_computed_once():
    registered = gather()
    assert set(declared_providers()) <= set(registered.values())
    assert RemovalMethodCalls in {p for rule in RULES for p in rule.PROVIDERS}
    assert [p.name for p in declared_providers()] == sorted({p.name for r in RULES for p in r.PROVIDERS})


def test_a_fact_no_rule_declares_is_an_error_not_an_empty_answer(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("wnaudit.source.pipeline.analyse.declared_providers", lambda: ())
    summary = summarize(CALLS, "decoder.py", "voc.decoder")
    with pytest.raises(LookupError, match="removal_method_calls"):
        Context([summary], workspace=new_workspace()).fact(summary, RemovalMethodCalls)


def test_the_fact_is_cached_with_the_summary(tmp_path: Path):
    summary = summarize(CALLS, "decoder.py", "voc.decoder", file="/x/voc/decoder.py")
    ask = SummaryOf(digest_of(CALLS.encode()), "decoder.py", Project([Path("/x")]).locate(Path("/x/voc/decoder.py")))
    cache = FactStore(CacheStore(tmp_path / "store"))
    cache.put(SUMMARY, ask, summary)
    cache.save()
    again = FactStore(CacheStore(tmp_path / "store")).known(SUMMARY, ask)
    assert again is not None and again.provided == summary.provided
    assert RemovalMethodCalls.decode(again.provided[RemovalMethodCalls.name]) == RemovalMethodCalls.decode(
        summary.provided[RemovalMethodCalls.name]
    )


GENERATOR = '''
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
from torch.nn.utils.parametrize import remove_parametrizations


class Generator(nn.Module):
    def __init__(self, pre_norm=True):
        super().__init__()
        self.conv_pre = weight_norm(nn.Conv1d(2, 2, 3))
        if not pre_norm:
            remove_parametrizations(self.conv_pre, "weight")

    def remove_weight_norm(self):
        remove_parametrizations(self.conv_pre, "weight")
'''

DECODER = '''
import torch.nn as nn
from generator import Generator


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = Generator(pre_norm=False)

    def fold(self):
        self.gen.remove_weight_norm()
'''


def test_a_warm_run_reads_the_fact_from_the_cache_and_finds_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """WN109 at a removal method call, cold then warm (the summary, and its fact, from the store)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (tmp_path / "generator.py").write_text(GENERATOR.lstrip())
    (tmp_path / "decoder.py").write_text(DECODER.lstrip())
    monkeypatch.setenv("WNAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WNAUDIT_NO_CACHE", raising=False)
    files = [tmp_path / "generator.py", tmp_path / "decoder.py"]
    runs = [[(Path(f.path).name, f.line, f.code) for f in lint_files(files, RunOptions()).findings] for _ in range(2)]
    assert runs[0] == runs[1]
    assert ("decoder.py", 11, "WN109") in runs[0]
