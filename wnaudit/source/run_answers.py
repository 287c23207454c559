"""A whole lint run's answer, kept between runs and given again while nothing it rests on has changed.

A warm run over an unchanged tree took every file's facts from the store and
still ran every stage on them: the prefilter over each file, the rules, WN103's
migrations (0.36 s on 1,249 files, most of it after the record check).  Yet the
answer of a run that fixes nothing is a function of

- what was asked: the inputs as given, the configuration, the working
  directory (declared entries resolve from it) and the log level (the warnings
  the run logged are part of its answer);
- the inputs' bytes;
- what the run read of other files and asked of the file system.

The record of kept answers (``derived_cache``) observes the last of these:
every file-system question, and every file any stage read with the digest of
its bytes (``Observations.run_reads``).  This module keys the question and
keeps each input's stat key (``common/cache.stat_key``: its stat taken before
the run read anything, with the digest of its bytes).  The next run with the
same key gives the kept answer when every input has the bytes kept and every
observation of the record holds (``DerivedAnswers.runs``); otherwise it runs
the stages and keeps its own answer.

Not kept: a run that fixes or shows diffs; a run with an input that is missing
or no regular file, changed less than ``RACY_NS`` before the run, or changed
during it; a run with a file its analysis could not handle (a limit of this
process, not an answer of the code); a run that met a symbolic link in a
directory it listed or on the way to a directory it resolved (where a link
points is not observed).  Where each input path resolves is kept and compared
(a path may lead elsewhere while every file keeps its stat).
"""

from __future__ import annotations

import logging
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..common.cache import Stamp, StatKey, digest_of, is_stat_key, key_of, same_stat, stat_key, take_stamp
from ..common.findings import Applicability, Finding, InputError, Severity
from ..common.options import RunOptions
from .project import resolved_text

logger = logging.getLogger(__name__)

_FORMAT = 1

#: The loggers whose records a run's answer carries (the source lint's); the CLI's progress lines are not answers.
_LOGGER = "wnaudit.source"

def keeps_answers(options: RunOptions) -> bool:
    """Whether a run with these options gives and keeps a whole answer: it only reads, and the cache is on."""
    return options.cache and not (options.fix or options.diff or options.discard_journal)


def run_key(options: RunOptions, files: Sequence[Path]) -> str:
    """What was asked of the run: a key that differs whenever the answer could (the code's version is the store's)."""
    level = logging.getLogger(_LOGGER).getEffectiveLevel()
    return key_of(
        "run-answer", _FORMAT, repr(options.config), options.unsafe_fixes, os.getcwd(), level, [os.fspath(f) for f in files],
    )


@dataclass
class InputStamps:
    """The inputs as the run starts: each one's stamp, and the file each path resolves to (links followed)."""

    stamps: list[Stamp]
    identities: list[str]

    def by_identity(self) -> dict[str, Stamp]:
        """Each stamp by the path its input resolves to (as the record of derived answers names files)."""
        return dict(zip(self.identities, self.stamps))


def stamp_inputs(files: Sequence[Path]) -> InputStamps | None:
    """Each input's stamp and identity, taken before the run reads anything.

    None (no answer is kept): an input is missing or no regular file (its error names what it is, which no
    stat key vouches for), or changed too recently for its stat to vouch for its bytes.
    One ``lstat`` per input answers both (a link's target is stamped apart).
    """
    stamps: list[Stamp] = []
    identities: list[str] = []
    directories: dict[str, str] = {}
    for file in files:
        text = os.fspath(file)
        taken = take_stamp(text, follow_links=False)
        link = taken is not None and stat.S_ISLNK(taken.status.st_mode)
        if link:
            taken = take_stamp(text)
        if taken is None or not stat.S_ISREG(taken.status.st_mode) or stat_key(taken, "") is None:
            return None
        stamps.append(taken)
        identities.append(resolved_text(file, directories, link))
    return InputStamps(stamps, identities)


def identities(files: Sequence[Path]) -> list[str]:
    """The file each input path resolves to, as the scan resolves it (a link in the path followed)."""
    directories: dict[str, str] = {}
    return [resolved_text(file, directories) for file in files]


def input_keys(
    files: Sequence[Path], stamped: InputStamps, known: Callable[[str], str | None] = lambda path: None,
) -> list[StatKey] | None:
    """After the run: each input's stat key with the digest of its bytes (None: one changed during the run).

    ``known``: the digest of an absolute path's bytes as the run read them, where it has one (else they are
    read now).  Either is of the bytes the stamp vouches for when the stat taken after it is still the one
    taken before the run (``common/cache.stat_key``), and the path still resolves to the same file.
    """
    keys: list[StatKey] = []
    for file, taken in zip(files, stamped.stamps):
        digest = known(os.path.abspath(file)) or _digest(_raw_bytes(file))
        now = take_stamp(os.fspath(file))
        key = stat_key(taken, digest)
        if key is None or now is None or not same_stat(key, now.status):
            return None
        keys.append(key)
    return keys if identities(files) == stamped.identities else None


def inputs_hold(
    files: Sequence[Path], keys: Sequence[StatKey], kept_identities: Sequence[str], now: InputStamps,
    stamp: Callable[[str], Stamp | None] = take_stamp,
) -> bool:
    """Every input is the file kept (the same path resolves to it now) and has the bytes kept.

    A stat that is the kept one vouches for the bytes; any other input is read.  When many were (a checkout
    touched them), the run is done again instead, so that its answer is kept with their new stats.
    ``now``: the inputs as this run started; ``stamp``: how an absolute path's stamp is taken (the record's
    check took most of them).
    """
    if len(files) != len(keys) or now.identities != list(kept_identities):
        return False
    read = 0
    for file, key in zip(files, keys):
        taken = stamp(os.path.abspath(file))
        if taken is None:
            return False
        if same_stat(key, taken.status):
            continue
        read += 1
        if _digest(_raw_bytes(file)) != key[5]:
            return False
    return read * 16 < len(files)


def _digest(data: bytes | None) -> str:
    return "-" if data is None else digest_of(data).hex()  # "-": unreadable


def _raw_bytes(file: Path) -> bytes | None:
    """The file's bytes as they are on disk (None: not a regular file, or unreadable)."""
    try:
        return Path(file).read_bytes() if os.path.isfile(file) else None
    except OSError:
        return None


@dataclass
class RunAnswer:
    """What a run that fixes nothing answered, before notebook findings are placed in cells."""

    findings: list[Finding]
    #: The inputs' errors the run found after the journal check (that one is asked again every run).
    errors: list[InputError]
    parsed: int
    #: (logger name, level, message) of each warning the run logged, given again in order.
    logs: list[tuple[str, int, str]]

    def replay(self) -> None:
        for name, level, message in self.logs:
            logging.getLogger(name).log(level, "%s", message)


def encode(answer: RunAnswer, keys: Sequence[StatKey], stamped: InputStamps) -> dict[str, Any]:
    return {
        "format": _FORMAT,
        "inputs": list(keys),
        "identities": list(stamped.identities),
        "findings": [_encode_finding(f) for f in answer.findings],
        "errors": [[e.path, e.message] for e in answer.errors],
        "parsed": answer.parsed,
        "logs": [list(entry) for entry in answer.logs],
    }


def recall(
    document: Any, files: Sequence[Path], now: InputStamps, stamp: Callable[[str], Stamp | None] = take_stamp,
) -> RunAnswer | None:
    """The kept answer, when its inputs are as they were (None: changed, or a damaged document).

    ``now``: the inputs as this run started (``stamp_inputs``).
    """
    try:
        keys, kept_identities = [_input_key(key) for key in document["inputs"]], [str(path) for path in document["identities"]]
        if document.get("format") != _FORMAT or not inputs_hold(files, keys, kept_identities, now, stamp):
            return None
        return RunAnswer(
            [_decode_finding(item) for item in document["findings"]],
            [InputError(str(path), str(message)) for path, message in document["errors"]],
            int(document["parsed"]),
            [(str(name), int(level), str(message)) for name, level, message in document["logs"]],
        )
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as error:
        logger.debug("run answers: ignoring a damaged answer: %s", error)
        return None


def _input_key(value: Any) -> StatKey:
    if not is_stat_key(value):
        raise ValueError("not a stat key")
    return value  # type: ignore[no-any-return]


def _encode_finding(finding: Finding) -> list[Any]:
    applicability = finding.applicability.value if finding.applicability is not None else None
    return [
        finding.path, finding.code, finding.message, finding.fixable, Severity(finding.severity).value, finding.line,
        finding.column, finding.object, applicability, finding.cell,
    ]


def _decode_finding(item: list[Any]) -> Finding:
    path, code, message, fixable, severity, line, column, name, applicability, cell = item
    for value in (line, column, cell):
        if value is not None and type(value) is not int:
            raise ValueError("not a position")
    if not (isinstance(path, str) and isinstance(code, str) and isinstance(message, str) and type(fixable) is bool):
        raise ValueError("not a finding")
    return Finding(
        path, code, message, fixable, Severity(severity), line, column, None if name is None else str(name),
        None if applicability is None else Applicability(applicability), cell,
    )


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.entries: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.entries.append((record.name, record.levelno, record.getMessage()))


@contextmanager
def logged_warnings() -> Iterator[list[tuple[str, int, str]]]:
    """The warnings the source lint logs meanwhile (they are part of the run's answer), as they are logged."""
    handler = _Kept()
    source = logging.getLogger(_LOGGER)
    source.addHandler(handler)
    try:
        yield handler.entries
    finally:
        source.removeHandler(handler)
