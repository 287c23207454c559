"""Remember what a file's bytes alone decide, so warm runs neither parse nor scan them again.

Every file read is parsed to report syntax errors, but most files name no
weight-norm API and are parsed only for that verdict; every file is also
scanned for its imports (``content.py``).  Both depend on nothing but the
file's bytes, the parser and wnaudit's code, so they are cached under a
128-bit SHA-256 digest of the bytes, in a directory named after the wnaudit
and Python versions and a fingerprint of wnaudit's own source (the grammar,
its messages and the scan).  Only verdicts a parse gives for the same bytes
every time are stored: ``"ok"`` and the one-line syntax error message; the
scan's facts are flags and the import statements' module and bound names.
No source text is stored.

Layout: ``<cache dir>/syntax/<key>/<xx>.json``, 256 shards by the digest's
first byte, so a run over a few files (pre-commit) reads only a few small
files.  A shard is only ever replaced whole (temporary file + ``os.replace``):
concurrent runs never see a partial shard; two runs writing one shard at once
may lose one run's new entries (they are misses next time, never wrong
answers).  A shard that cannot be read or parsed, or an entry that is not a
verdict, is ignored and rewritten.  Any failure to create or write the cache
disables it for the run, with a debug log line, never an error.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from . import content
from .content import ContentFacts

logger = logging.getLogger(__name__)

#: The verdict of a file that parses.
OK = "ok"
#: How every cached error message starts (``engine._syntax_message``).
SYNTAX_ERROR_PREFIX = "syntax error at "
#: Shard files may hold about this many bytes together; the oldest entries of a shard go first.
MAX_TOTAL_BYTES = 64 << 20
SHARDS = 256
MAX_SHARD_BYTES = MAX_TOTAL_BYTES // SHARDS
#: Cache directories of other wnaudit/Python versions untouched this long are removed.
STALE_SECONDS = 30 * 24 * 3600
_FORMAT = 2
_TEMP_SUFFIX = ".tmp"


def digest_of(data: bytes) -> bytes:
    """The cache key of a file's content (SHA-256 is hardware-accelerated where blake2b is not)."""
    return hashlib.sha256(data).digest()[:16]


@functools.lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """A digest of wnaudit's own source: a changed scan or analysis never reads what older code stored."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def version_key() -> str:
    """What else an entry depends on: the parser (full Python version, messages change in patch releases) and wnaudit."""
    major, minor, micro = sys.version_info[:3]
    return f"wnaudit-{__version__}-{code_fingerprint()}-{sys.implementation.name}-{major}.{minor}.{micro}"


def cache_root() -> Path:
    """``$WNAUDIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/wnaudit``, else ``~/.cache/wnaudit``."""
    explicit = os.environ.get("WNAUDIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "wnaudit"
    return Path.home() / ".cache" / "wnaudit"


def disabled_by_env() -> bool:
    return os.environ.get("WNAUDIT_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


def _is_verdict(value: object) -> bool:
    return isinstance(value, str) and (value == OK or (value.startswith(SYNTAX_ERROR_PREFIX) and "\n" not in value))


@dataclass
class _Shard:
    verdicts: dict[str, str] = field(default_factory=dict)
    #: digest -> ``content.encode`` form (decoded, and checked, when asked for).
    facts: dict[str, object] = field(default_factory=dict)


class SyntaxCache:
    """Verdicts and content facts by digest, loaded per shard on first use and written back once per run (``save``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._shards: dict[int, _Shard] = {}
        self._dirty: set[int] = set()
        self.hits = 0
        self.misses = 0

    @classmethod
    def open(cls, enabled: bool = True) -> SyntaxCache | None:
        """The cache for this run, or None when ``enabled`` is False or ``WNAUDIT_NO_CACHE`` is set."""
        if not enabled or disabled_by_env():
            return None
        try:
            root = cache_root()
        except (RuntimeError, KeyError) as error:  # no home directory to default to
            logger.debug("syntax cache disabled: no cache directory: %s", error)
            return None
        return cls(root / "syntax" / version_key())

    def _path(self, shard: int) -> Path:
        return self.directory / f"{shard:02x}.json"

    def _shard(self, shard: int) -> _Shard:
        entries = self._shards.get(shard)
        if entries is None:
            entries = self._shards[shard] = self._load(shard)
        return entries

    def _load(self, shard: int) -> _Shard:
        path = self._path(shard)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return _Shard()
        except OSError as error:
            logger.debug("syntax cache: cannot read %s: %s", path, error)
            return _Shard()
        try:
            document = json.loads(raw)
            if (
                not isinstance(document, dict) or document.get("format") != _FORMAT
                or not isinstance(document.get("entries"), dict) or not isinstance(document.get("facts"), dict)
            ):
                raise ValueError("not a syntax cache shard")
            stored, stored_facts = document["entries"], document["facts"]
        except ValueError as error:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
            logger.debug("syntax cache: ignoring damaged %s (%s); it is rewritten", path, error)
            self._dirty.add(shard)
            return _Shard()
        entries = {key: value for key, value in stored.items() if _is_key(key) and _is_verdict(value)}
        facts = {key: value for key, value in stored_facts.items() if _is_key(key)}
        if len(entries) != len(stored) or len(facts) != len(stored_facts):
            logger.debug("syntax cache: dropped damaged entries of %s", path)
            self._dirty.add(shard)
        return _Shard(entries, facts)

    def get(self, digest: bytes) -> str | None:
        """``"ok"``, the syntax error message, or None when this content was never parsed."""
        verdict = self._shard(digest[0]).verdicts.get(digest.hex())
        if verdict is None:
            self.misses += 1
        else:
            self.hits += 1
        return verdict

    def put(self, digest: bytes, verdict: str) -> None:
        if not _is_verdict(verdict):
            raise ValueError(f"not a cacheable syntax verdict: {verdict!r}")
        self._set(digest, self._shard(digest[0]).verdicts, verdict)

    def get_facts(self, digest: bytes) -> ContentFacts | None:
        """The byte-level facts of this content (``content.facts_of``), or None when never scanned or damaged."""
        shard = self._shard(digest[0])
        key = digest.hex()
        value = shard.facts.get(key)
        if value is None:
            return None
        facts = content.decode(value)
        if facts is None:  # a damaged entry is never believed; it goes at the next save
            del shard.facts[key]
            self._dirty.add(digest[0])
        return facts

    def put_facts(self, digest: bytes, facts: ContentFacts) -> None:
        self._set(digest, self._shard(digest[0]).facts, content.encode(facts))

    def _set(self, digest: bytes, entries: dict[str, Any], value: object) -> None:
        key = digest.hex()
        if entries.get(key) != value:
            entries.pop(key, None)  # re-insert last: the newest entries survive pruning
            entries[key] = value
            self._dirty.add(digest[0])

    def save(self) -> None:
        """Write the shards this run changed (merged with what other runs wrote since); silent on failure."""
        if not self._dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for shard in sorted(self._dirty):
                self._write(shard)
        except OSError as error:
            logger.debug("syntax cache disabled: cannot write under %s: %s", self.directory, error)
            return
        finally:
            self._dirty.clear()
        self._prune_stale()

    def _write(self, shard: int) -> None:
        ours = self._shards.get(shard, _Shard())
        theirs = self._load(shard)  # another run may have added entries since we read
        merged = _Shard({**theirs.verdicts, **ours.verdicts}, {**theirs.facts, **ours.facts})
        text = _serialize(merged)
        while len(text) > MAX_SHARD_BYTES and (merged.verdicts or merged.facts):
            for entries in (merged.verdicts, merged.facts):
                for key in list(entries)[: max(1, len(entries) // 4)]:  # oldest quarter first
                    del entries[key]
            text = _serialize(merged)
        replace_whole(self._path(shard), text, f".{shard:02x}.")
        self._shards[shard] = merged

    def _prune_stale(self) -> None:
        prune_stale(self.directory)


def replace_whole(target: Path, data: bytes, prefix: str) -> None:
    """Write ``data`` to a temporary file beside ``target``, then rename it over ``target``.

    A reader sees the old file or the new one, never a part; a failure leaves
    no temporary file behind (a cache needs no fsync: a lost entry is a miss).
    """
    handle, temp = tempfile.mkstemp(prefix=prefix, suffix=_TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def prune_stale(directory: Path, temp_suffix: str = _TEMP_SUFFIX) -> None:
    """Remove other versions' cache directories nobody used for ``STALE_SECONDS``, and old temporary files."""
    now = time.time()
    with contextlib.suppress(OSError):
        for sibling in directory.parent.iterdir():
            if sibling != directory and sibling.is_dir() and now - sibling.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(sibling, ignore_errors=True)
        for temp in directory.glob(f"*{temp_suffix}"):
            if now - temp.stat().st_mtime > 3600:  # left by a killed run
                temp.unlink()


def _serialize(shard: _Shard) -> bytes:
    document = {"format": _FORMAT, "entries": shard.verdicts, "facts": shard.facts}
    return json.dumps(document, separators=(",", ":")).encode("utf-8")


_KEY = re.compile(r"[0-9a-f]{32}")


def _is_key(text: object) -> bool:
    return isinstance(text, str) and _KEY.fullmatch(text) is not None
