"""Turn one file's source text into a FileSummary: applications, removals, units.

One pass over CPython's ``ast`` records scopes, bindings and every call with
the context the rules need (enclosing function, ``try`` bodies, ``if`` tests);
a second step resolves only the calls' callees.  Each job has its module:
``pieces`` (the parse, piece by piece), ``collector`` (the walk) with
``classes`` (what construction code does), ``calls`` (applications and
removals), ``bindings`` (exports, flag choices), ``class_summary`` (the facts
WN109 follows), ``aliases``, ``guards``, ``noqa``.  A new syntactic fact a
rule needs is a provider (``providers/``), walked here on the same trees.
"""

from __future__ import annotations

from typing import Iterable

from ...common.gc_pause import cyclic_gc_paused
from ..model import FileSummary
from ..providers import Provider, Running
from ..resolve import Resolver, module_package
from .aliases import Aliases, is_api_name, names_of
from .bindings import exports, module_choices
from .calls import CallReader
from .class_summary import summarize_classes
from .collector import Collector
from .guards import SWALLOWS, walk_try
from .noqa import parse_noqa
from .pieces import CHUNK_CHARS, PieceReader, Positions, deep_recursion, parse_pieces, split_lines

__all__ = [
    "CHUNK_CHARS", "SWALLOWS", "Aliases", "PieceReader", "analyze", "deep_recursion", "parse_noqa", "parse_pieces",
    "split_lines", "walk_try",
]


def analyze(
    text: str, path: str, module: str, is_package: bool = False, aliases: Aliases | None = None,
    providers: Iterable[type[Provider]] = (), also: PieceReader | None = None,
) -> FileSummary:
    """Facts of one file. Raises SyntaxError (and ValueError for NUL bytes) from ``ast``.

    ``aliases`` maps names this file imports from the project to the torch
    APIs they stand for there (``from .compat import weight_norm`` where
    ``compat`` picks the spelling): calls through them count as API calls.
    ``providers``: the fact providers the rules declare; each walks the same
    trees (one parse) and its fact goes into ``FileSummary.provided``.
    """
    lines = split_lines(text)
    positions = Positions(lines)
    collector = Collector(module, module_package(module, is_package), positions)
    running = Running(providers, module)
    with deep_recursion(), cyclic_gc_paused():
        for offset, tree in parse_pieces(text, path):
            positions.offset = offset
            collector.walk(tree)
            running.walk(tree, positions)
            if also is not None:
                also(offset, tree)  # after the analysis: the other reader may change the tree
            del tree
        summary = _summarize(collector, lines, path, module, aliases or {})
        summary.provided = running.facts()
        return summary


def _summarize(collector: Collector, lines: list[str], path: str, module: str, aliases: Aliases) -> FileSummary:
    """The walk's records resolved, once the whole module's bindings are known."""
    module_scope = collector.module_scope
    resolver = Resolver(module_scope, collector.star_modules)
    summary = FileSummary(path=path, module=module, noqa=parse_noqa(lines))
    summary.torch_bound = "torch" in module_scope.bindings and resolver.name("torch", module_scope) == frozenset({"torch"})
    reader = CallReader(collector, resolver, summary, aliases)
    for call in collector.calls:
        reader.read(call)
    reader.finish_removals()
    reader.finish_units()
    summary.imports = tuple(sorted({t for t in collector.import_targets if not is_api_name(t)}))
    summarize_classes(collector.classes, collector.bases, module_scope, resolver, names_of(resolver, aliases), summary)
    summary.exports = exports(module_scope, resolver)
    summary.choices = module_choices(module_scope, resolver, collector.choice_sites)
    summary.star_modules = tuple(collector.star_modules)
    summary.applications.sort(key=lambda a: a.site.key)
    summary.removals.sort(key=lambda r: r.site.key)
    return summary
