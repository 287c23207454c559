"""The discovery walk's directory listings and sniff verdicts, kept between runs (the ``walk`` kind of the one cache).

Why: a warm lint of a large tree spent about a quarter of its time walking
it: every directory listed again, every file that is not source opened for
its first bytes.  Two things are kept per walked root, both trusted only
through a stat taken *before* the read, under the one racily-clean rule of
``common/cache.py`` (``stat_key``):

- a directory's **listing** (names, which are directories, which regular
  files), reused while the directory's stat is the recorded one: adding,
  removing or renaming an entry sets the directory's mtime and ctime.  A
  listing with a symbolic link is never kept (a link's target changes without
  its directory);
- a file **ruled out by its first bytes** (no sniffer can say yes), ruled out
  again while its stat is the recorded one, so it is not opened.

Exclusions (``[tool.wnaudit] exclude``, ``--exclude``) are applied to the
listing at every run, never stored, so a changed exclusion is seen at once.
A damaged record is a miss (``common/cache.py``); ``tests/cli/test_walk_cache.py``
changes trees between warm runs and compares them with cold ones.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable

from ..common.cache import CacheStore, Kind, Stamp, StatKey, is_stat_key, key_of, same_stat, stat_key, take_stamp

logger = logging.getLogger(__name__)

_FORMAT = 1

#: (directory names, (file name, is a link, is a regular file)) as ``discovery._list`` gives them.
Listing = tuple[list[str], list[tuple[str, bool, bool]]]


def _parse(document: Any) -> dict[str, list] | None:
    """A stored record: directory -> [stat key, directory names, [[file name, regular]...], {file name: stat key}]."""
    if not isinstance(document, dict) or document.get("format") != _FORMAT or not isinstance(document.get("dirs"), dict):
        return None
    for entry in document["dirs"].values():
        if not (isinstance(entry, list) and len(entry) == 4 and (entry[0] is None or is_stat_key(entry[0]))
                and isinstance(entry[1], list) and all(isinstance(d, str) for d in entry[1])
                and isinstance(entry[2], list) and all(_is_file_entry(f) for f in entry[2])
                and isinstance(entry[3], dict) and all(is_stat_key(v) for v in entry[3].values())):
            raise ValueError("not a walk record")
    return document["dirs"]  # type: ignore[no-any-return]


def _is_file_entry(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], bool)


WALKS = Kind("walk", sharded=False, check=_parse)


class WalkMemo:
    """What one root's earlier walks saw (``known``) and what this walk sees (written back by ``save``)."""

    def __init__(self, store: CacheStore | None, key: str, known: dict[str, list] | None) -> None:
        self._store = store
        self._key = key
        self._known = known or {}
        self._seen: dict[str, list] = {}

    @classmethod
    def open(cls, store: CacheStore | None, root: str) -> WalkMemo:
        """The memo of ``root`` as walked from the current directory (empty without a store or a record)."""
        key = key_of("walk", _FORMAT, os.path.abspath(root))
        return cls(store, key, store.get(WALKS, key) if store is not None else None)

    def listing(self, directory: str, list_directory: Callable[[str], Listing | None]) -> Listing | None:
        """``list_directory(directory)``, or the recorded listing while the directory's stat is the recorded one."""
        taken = take_stamp(directory)
        known = self._known.get(directory)
        if taken is not None and known is not None and known[0] is not None and same_stat(known[0], taken.status):
            self._seen[directory] = list(known)  # a copy: its verdicts may change below
            return known[1], [(name, False, regular) for name, regular in known[2]]
        listed = list_directory(directory)
        if listed is None:
            return None
        dirs, files = listed
        key = stat_key(taken, "") if taken is not None and not any(link for _, link, _ in files) else None
        if key is not None and self._links_among(directory, dirs):
            key = None
        names = {name for name, _, _ in files}
        ruled = {name: key for name, key in known[3].items() if name in names} if known is not None else {}
        self._seen[directory] = [key, dirs, [[name, regular] for name, _, regular in files], ruled]
        return listed

    @staticmethod
    def _links_among(directory: str, dirs: list[str]) -> bool:
        return any(os.path.islink(os.path.join(directory, name)) for name in dirs)

    def ruled_out(self, directory: str, name: str, path: str) -> tuple[bool, Stamp | None]:
        """(whether ``path`` was ruled out by its first bytes and its stat is unchanged, its stamp taken now)."""
        taken = take_stamp(path)
        entry = self._seen.get(directory)
        recorded: StatKey | None = entry[3].get(name) if entry is not None else None
        if recorded is None:
            return False, taken
        if taken is not None and same_stat(recorded, taken.status):
            return True, taken
        assert entry is not None
        entry[3] = {k: v for k, v in entry[3].items() if k != name}  # no longer vouched for
        return False, taken

    def rule_out(self, directory: str, name: str, taken: Stamp | None) -> None:
        """``name`` (stamped before its first bytes were read) is ruled out: keep that while its stat holds."""
        entry = self._seen.get(directory)
        key = stat_key(taken, "") if taken is not None and entry is not None else None
        if key is not None and entry is not None and entry[3].get(name) != key:
            entry[3] = {**entry[3], name: key}

    def save(self) -> None:
        """Keep this walk's record when it differs from the one read (only what this walk saw: gone directories drop)."""
        if self._store is None or self._seen == self._known:
            return
        self._store.put(WALKS, self._key, {"format": _FORMAT, "dirs": self._seen})
