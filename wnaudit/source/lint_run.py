"""A lint run: the answer an identical earlier run kept, when everything it rests on holds; else the stages.

A warm run over an unchanged tree gives a kept answer (``run_answers``) after
the journal check, the record's check and one stat per input.  Importing the
stages, the rules and the analysis took longer than all of that (about 90 ms of
a 0.27 s run on 1,249 files), so this module imports none of them: the stages
(``engine``) are imported when the run needs them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..common.findings import RunResult
from ..common.gc_pause import fewer_collections, long_lived_heap
from ..common.options import RunOptions
from . import run_answers
from .derived_cache import DerivedAnswers, open_for_run
from .facts.store import FactStore
from .pipeline.inputs import gather_inputs
from .pipeline.journals import pending, recover


def lint_files(files: list[Path], options: RunOptions) -> RunResult:
    """Lint ``files`` (and fix them with ``options.fix``; show diffs with ``options.diff``)."""
    # Long-lived facts would be walked collection after collection (``gc_pause``).
    with fewer_collections(), long_lived_heap() as settle:
        return _lint_files(files, options, settle)


def _lint_files(files: list[Path], options: RunOptions, settle: Callable[[], None]) -> RunResult:
    config, result = options.config, RunResult()
    keeps = run_answers.keeps_answers(options)
    # Taken before anything reads an input: a later run gives this run's answer while they hold (``run_answers``).
    stamps = run_answers.stamp_inputs(files) if keeps else None
    inputs = gather_inputs(files, config.max_source_bytes)
    if options.fix or options.discard_journal:  # a fix an interruption left half-renamed is finished first
        result.errors.extend(recover(inputs.names, discard=options.discard_journal))
    else:
        # An audit says a fix was interrupted half-way (the inputs' real directories known from their stamps).
        result.errors.extend(pending(inputs.names, stamps.identities if stamps is not None else None))
    facts = FactStore.open(options.cache)
    record = open_for_run(config, facts, inputs.files, stamps.by_identity() if stamps is not None else None)
    key = run_answers.run_key(options, files) if keeps else None
    kept = _kept_answer(record, key, files, stamps)
    if kept is None:
        from . import engine

        return engine.run_stages(inputs, options, facts, record, result, settle, kept=(key, stamps))
    if record is not None and record.rekeyed():
        record.save_rekeyed()  # the stats of files touched since: a later check need not read them
        facts.save()
    kept.replay()
    result.errors.extend(kept.errors)
    result.findings, result.parsed_sources = inputs.placed(kept.findings), kept.parsed
    return result


def _kept_answer(
    record: DerivedAnswers | None, key: str | None, files: list[Path], stamps: run_answers.InputStamps | None,
) -> run_answers.RunAnswer | None:
    """The answer an earlier run with this key kept, when everything it rests on holds (None: run the stages)."""
    if key is None or record is None or stamps is None:
        return None
    document = record.kept_run(key)
    return run_answers.recall(document, files, stamps, record.stamp) if document is not None else None
