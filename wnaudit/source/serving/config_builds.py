"""Which project classes a project builds from its configs (hydra, hyperpyyaml), and which files do so.

A model built by ``instantiate(cfg.model)`` is named in a YAML file, not in
code: the index reads the configs under the project root and in the
directories its Hydra calls name, only where project code instantiates from
configs at all, and resolves each dotted name to a project class.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from ...core import catalogue
from .file_facts import FileFacts
from .pools import Pool, ProjectPools
from .resolver import Resolver
from .units import Key

#: The word of a type check on a config entry (``isinstance(configs["hift"], HiFTGenerator)``).
_TYPE_CHECK = b"isinstance("
#: Last parts of ``catalogue.CONFIG_INSTANTIATORS``: a file that calls one is read when a config builds a carrier.
INSTANTIATE_WORDS = tuple(sorted({name.rpartition(".")[2] for name in catalogue.CONFIG_INSTANTIATORS}))


class ConfigBuilds:
    """The classes a project's configs build, by key path, and the files that instantiate from them, kept per root."""

    def __init__(
        self, pools: ProjectPools, facts: FileFacts, resolver: Resolver, read: Callable[[Path], "bytes | None"],
        targets: Callable[[Path], dict[str, set[str]]],
    ) -> None:
        self._pools = pools
        self._facts = facts
        self._resolver = resolver
        self._read = read
        #: What the YAML configs under a directory build (``configs.config_targets``; the workspace's keeps it).
        self._targets = targets
        #: Per project root: the classes its YAML configs build, by key path (shape d).
        self._configs: dict[Path, dict[str, set[Key]]] = {}
        #: (project root, config key) -> the files that check such an entry's type (``isinstance(c["hift"], ...)``).
        self._entry_checkers: dict[tuple[Path, str], list[Path]] = {}

    def configured(self, file: Path) -> dict[str, set[Key]]:
        """The project classes the YAML configs under the file's project root build, by key path (``configs.py``)."""
        pool = self._pools.pool(file)
        found = self._configs.get(pool.root)
        if found is None:
            found = self._configs[pool.root] = {}
            for path, names in self._config_names(pool).items():
                for dotted in sorted(names):
                    key = self._config_class(file, dotted)
                    if key is not None:
                        found.setdefault(path, set()).add(key)
        return found

    def _config_names(self, pool: Pool) -> dict[str, set[str]]:
        """The dotted class names the configs build, read only where project code instantiates from configs:
        the YAML files under the project root and in the directories its Hydra calls name (``config_path``)."""
        self._pools.search(pool, INSTANTIATE_WORDS)
        users = self._pools.mentioning(pool, set(INSTANTIATE_WORDS))
        if not users:
            return {}
        directories = {pool.root}
        for user in users:
            data = self._read(user) or b""
            facts = self._facts.get(user) if b"config_path" in data or b"config_dir" in data else None
            for written in facts.config_dirs if facts is not None else ():
                directory = Path(os.path.normpath(user.parent / written))
                if directory != pool.root and pool.root not in directory.parents:
                    directories.add(directory)
        names: dict[str, set[str]] = {}
        for directory in sorted(directories):
            for path, found in self._targets(directory).items():
                names.setdefault(path, set()).update(found)
        return names

    def _config_class(self, file: Path, dotted: str) -> Key | None:
        """The project class a config's dotted name stands for; its tails are tried too, since a namespace
        package (no ``__init__.py``: ``fish_speech/models/dac``) is located by its inner package's name."""
        parts = dotted.split(".")
        for start in range(len(parts) - 1):
            hit = self._resolver.lookup(file, ".".join(parts[start:]))
            if hit is not None and not hit[1] and self._facts.class_of(hit[0]) is not None:
                return hit[0]
        return None

    def entry_checkers(self, file: Path, key: str) -> list[Path]:
        """The project files that check the type of a config entry under ``key`` (``isinstance(configs["hift"], ...)``)."""
        pool = self._pools.pool(file)
        checkers = self._entry_checkers.get((pool.root, key))
        if checkers is None:  # the key is a string there, which the name search does not count as code
            quoted = (f'"{key}"'.encode(), f"'{key}'".encode())
            checkers = self._entry_checkers[(pool.root, key)] = [
                f for f in pool.files
                if _TYPE_CHECK in (data := self._read(f) or b"") and any(q in data for q in quoted)
            ]
        return checkers

    def entry_typing_users(self, pool: Pool, names: set[str], known: set[Key]) -> list[Path]:
        """The files that instantiate from configs, where a file naming a carrier checks a config entry against it
        (``isinstance(configs["hift"], HiFTGenerator)``): they build it, by that check, from a config not shipped."""
        for file in self._pools.mentioning(pool, names):
            facts = self._facts.get(file) if _TYPE_CHECK in (self._read(file) or b"") else None
            for types in facts.entry_types.values() if facts is not None else ():
                if self._resolver.resolved_all(file, types) & known:
                    self._pools.search(pool, INSTANTIATE_WORDS)
                    return self._pools.mentioning(pool, set(INSTANTIATE_WORDS))
        return []

    def users(self, file: Path, carriers: set[Key]) -> list[Path]:
        """The project files that instantiate from configs, where the configs build a carrier (else none)."""
        if not any(carriers & keys for keys in self.configured(file).values()):
            return []
        return self._pools.mentioning(self._pools.pool(file), set(INSTANTIATE_WORDS))
