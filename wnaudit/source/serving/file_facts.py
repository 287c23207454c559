"""One file's serving facts, from the first place that has them: known, cached, the workers, or a parse.

This is the one place WN110's index gets a file's ``ServingFacts`` (``_find``):
facts the workers computed beside their analyses, then the cache, then the
workers parsing ahead (``ahead.py``), then a parse here.  The folds a
configuration flag guards are then kept only where the project may turn the
flag on (``flags.py``); the facts as read stay available for the fix.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Callable, Iterable

from ..project import Project
from ..facts.kinds import SERVING, ServingOf, digest_of, serving_key
from ..facts.store import FactStore
from .ahead import ServingAhead
from .facts import READ_ERRORS, Body, ClassFacts, ServingFacts
from .reader import read_serving_facts
from .flags import NOT_KNOWN, NotKnown, ProjectFlags
from .pools import ProjectPools
from .units import IndexHooks, Key

logger = logging.getLogger(__name__)


class FileFacts:
    """The serving facts of the project files a lint needs, each found once per run."""

    def __init__(
        self, project: Project, read: Callable[[Path], "bytes | None"], pools: ProjectPools,
        cache: "FactStore | None" = None, known: "dict[str, ServingFacts] | None" = None, ahead: "ServingAhead | None" = None,
        hooks: IndexHooks = IndexHooks(),
    ) -> None:
        self._project = project
        self._read = read
        self._pools = pools
        #: Where parsed facts are kept between runs (the summary cache; None: parse every run).
        self._cache = cache
        #: Facts computed beside the analyses, in the workers (``facts.kinds.serving_key`` -> facts).
        self._known = known if known is not None else {}  # the same dict: facts kept later are seen here too
        #: Workers parsing the files of a list the index is about to read (``ahead.py``; None: all parsed here).
        self._ahead = ahead
        #: Files ``read_ahead`` has handed to the workers or found known (not read and hashed again for a later list).
        self._announced: set[Path] = set()
        self._facts: dict[Path, ServingFacts | None] = {}
        #: The facts of files with flag-guarded folds as read: a fix must not add a fold beside a removal that a
        #: flag the configuration leaves off may still run (a second removal raises).
        self._unflagged: dict[Path, ServingFacts] = {}
        #: project root -> what its code and configs set its flags to (``flags.py``), read on the first flag asked.
        self._flags: dict[Path, ProjectFlags] = {}
        #: Files the index had to read as code and could not parse (the engine reports those it lints).
        self.failures: dict[Path, Exception] = {}
        self._parse_file = hooks.parse or self._parse
        self._adopt_analysis = hooks.adopt_analysis
        self._flag_configs = hooks.flag_configs

    def get(self, path: Path) -> ServingFacts | None:
        """The file's facts, flag-guarded folds the project never turns on left out (None: not read, or not code)."""
        if path in self._facts:
            return self._facts[path]
        self._facts[path] = None
        data = self._read(path)
        if data is None:
            return None
        found = self._find(path, data)
        if found is None:
            return None
        if found.flagged:
            self._unflagged[path] = found
            found = self._flags_applied(path, found)
        self._facts[path] = found
        return found

    def as_read(self, path: Path) -> ServingFacts | None:
        """The file's facts with every flag-guarded fold kept, as the code reads."""
        return self._unflagged.get(path, self.get(path))

    def _find(self, path: Path, data: bytes) -> ServingFacts | None:
        """Known, cached, from the workers, or parsed here (kept in the cache); None where the file does not parse."""
        key = self._key(path, data)
        found = self._kept(key) or self._from_ahead(path, data, key)
        if found is None:
            try:
                found = self._parse_file(path, data)
            except READ_ERRORS as error:
                logger.debug("%s: not read for the serving path: %s", path, error)
                self.failures[path] = error
                return None
            if self._cache is not None:
                self._cache.keep(SERVING, key, found)
        return found

    def _from_ahead(self, path: Path, data: bytes, key: str) -> ServingFacts | None:
        """The facts a worker parsed (waited for once started; kept), and its analysis adopted; None: parse here."""
        if self._ahead is None:
            return None
        found = self._ahead.take(key)
        analysed = self._ahead.analysis(key)
        if analysed is not None:
            self._adopt_analysis(path, data, analysed)
        if found is not None:
            self._known[key] = found  # the run's memory of serving facts: the index reads them later, with no cache too
            if self._cache is not None:
                self._cache.keep(SERVING, key, found)
        return found

    def read_ahead(self, files: Iterable[Path]) -> None:
        """Have the workers parse the files of a list about to be read one by one (the facts not known yet).

        Submitted last first: the workers work from the list's end while the index reads from its start,
        parsing itself what no worker has started, so neither waits for the other.
        """
        if self._ahead is None:
            return
        for path in reversed(list(files)):
            if path in self._facts or path in self._announced:
                continue
            self._announced.add(path)
            data = self._read(path)
            if data is None:
                continue
            key = self._key(path, data)
            if self._kept(key) is None:
                location = self._project.locate(path)
                self._ahead.submit(key, data, str(path), location.module, location.is_package)

    def _key(self, path: Path, data: bytes) -> str:
        """The file's facts key: its bytes' digest, and the module it is (its facts name it)."""
        location = self._project.locate(path)
        return serving_key(ServingOf(digest_of(data), location.module, location.is_package))

    def _kept(self, key: str) -> ServingFacts | None:
        """Facts already computed: by the workers beside their analyses, or in the cache."""
        return self._known.get(key) or (self._cache.lookup(SERVING, key) if self._cache is not None else None)

    def class_of(self, key: Key) -> ClassFacts | None:
        facts = self.get(key[0])
        return facts.classes.get(key[1]) if facts is not None else None

    def function_of(self, key: Key) -> Body | None:
        facts = self.get(key[0])
        return facts.functions.get(key[1]) if facts is not None else None

    def _flags_applied(self, path: Path, facts: ServingFacts) -> ServingFacts:
        """``facts`` with the folds under a configuration flag the project never turns on left out."""
        on = {flag: self._flag_on(path, flag) for flag in sorted({flag for flag, _, _ in facts.flagged})}
        drop = {(where, index) for flag, where, index in facts.flagged if not on[flag]}
        joined = {(where, index) for flag, where, index in facts.flagged if on[flag] and where.endswith("_scopes")}
        return dataclasses.replace(
            facts,
            folds=[u for i, u in enumerate(facts.folds) if ("folds", i) not in drop],
            helper_calls=[c for i, c in enumerate(facts.helper_calls) if ("helper_calls", i) not in drop],
            method_calls=[c for i, c in enumerate(facts.method_calls) if ("method_calls", i) not in drop],
            folding_scopes=facts.folding_scopes | {i for where, i in joined if where == "folding_scopes"},
            legacy_folding_scopes=facts.legacy_folding_scopes | {i for where, i in joined if where == "legacy_folding_scopes"},
        )

    def _flag_on(self, path: Path, flag: str) -> bool:
        """Does the project's own configuration turn ``flag`` on, or may it (``flags.py``)?"""
        pool = self._pools.pool(path)
        flags = self._flags.get(pool.root)
        if flags is None:
            python = ((f, data) for f in pool.files if (data := self._read(f)) is not None)
            flags = self._flags[pool.root] = ProjectFlags(python, self._flag_configs(pool.root), self._known_settings)
        return flags.on(flag)

    def _known_settings(self, path: Path, data: bytes) -> dict[str, bool] | None | NotKnown:
        """What the file's code sets (``flags.py``), from facts this run has read or kept: ``flags.NOT_KNOWN`` else.

        A file the index has read, or the workers or an earlier run, is not parsed again for its flags; nor is one
        a worker is parsing for the index (waited for).
        """
        if path in self._facts:
            found = self._unflagged.get(path, self._facts[path])
            if found is not None or path in self.failures:
                return found.settings if found is not None else None
        key = self._key(path, data)
        found = self._kept(key) or (self._from_ahead(path, data, key) if path in self._announced else None)
        return found.settings if found is not None else NOT_KNOWN

    def _parse(self, path: Path, data: bytes) -> ServingFacts:
        location = self._project.locate(path)
        return read_serving_facts(data, str(path), location.module, location.is_package)
