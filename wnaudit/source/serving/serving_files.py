"""The files that may serve or fold a carrier: those WN110 parses to find inference sites and folds.

Files naming a carrier or a removal method, instantiating from configs that
build one, fetching one by name from a module (``getattr(models, name)``), or
building one from a registry they fill; tests are not a serving path.
"""

from __future__ import annotations

from pathlib import Path

from .config_builds import ConfigBuilds
from .file_facts import FileFacts
from .instances import Carried
from .pools import Pool, ProjectPools
from .resolver import Resolver
from .units import Key, short
from .walk import is_test_file

#: The builtin that fetches a class from a module by a string (``getattr(models, cfg.name)``).
_FETCH = "getattr"


class ServingFiles:
    """The files to read for a start's verdict, parsed ahead in the workers where there are."""

    def __init__(self, pools: ProjectPools, facts: FileFacts, resolver: Resolver, configs: ConfigBuilds, carried: Carried) -> None:
        self._pools = pools
        self._facts = facts
        self._resolver = resolver
        self._configs = configs
        self._carried = carried

    def of(self, start: Key, pool: Pool, carriers: set[Key], classes: set[Key], folding: set[str]) -> list[Path]:
        """The files that may serve or fold a carrier, tests left out, parsed (ahead, in the workers, where there are).

        Those that name a carrier or a removal method, instantiate from configs
        that build one, or fetch one by name from a module; then, once those are
        read, the files that build one from a registry they fill.
        """
        names = {short(k[1]) for k in carriers} | folding
        names |= {a for n in list(names) for a in self._carried.aliases.get(n, ())}
        files = [
            start[0], *self._pools.mentioning(pool, names), *self._configs.users(start[0], carriers), *self._choosers(pool, classes),
        ]
        files = [f for f in dict.fromkeys(files) if not is_test_file(f)]
        self._facts.read_ahead(files)
        extra = [f for f in self._registry_users(pool, classes, files) if f not in files and not is_test_file(f)]
        self._facts.read_ahead(extra)
        return files + list(dict.fromkeys(extra))

    def _choosers(self, pool: Pool, classes: set[Key]) -> list[Path]:
        """Files that may build a carrier class by name from a module it is in (``getattr(models, cfg.name)(...)``).

        Only files that can reach the class through imports and call ``getattr``:
        they name the module, not the class, so the name search misses them.
        """
        out: list[Path] = []
        for key in sorted(classes):
            out.extend(f for f in self._pools.reaching_and_naming(pool, key[0], short(key[1]), _FETCH) if f != key[0])
        return list(dict.fromkeys(out))

    def _registry_users(self, pool: Pool, classes: set[Key], files: list[Path]) -> list[Path]:
        """Files that may build a carrier class from a registry (``VOCODERS[name](...)``): one a decorator of the
        class stores it in, or one a file naming the class (``files``) stores it in at module level.

        They name the table, not the class, so the name search misses them.
        """
        homes: list[Key] = []
        for key in sorted(classes):
            cls = self._facts.class_of(key)
            homes.extend(h for name in (cls.decorators if cls is not None else ()) if (h := self._resolver.registry_of(key[0], name)))
        for file in files:
            facts = self._facts.get(file)
            for table, names in sorted(facts.table_entries.items()) if facts is not None else ():
                if self._resolver.resolved_all(file, names) & classes and (home := self._resolver.table_home(file, table)):
                    homes.append(home)
            for called, given in facts.registered_calls if facts is not None else ():
                if self._resolver.resolved_all(file, given) & classes:
                    homes.extend(h for name in called if (h := self._resolver.registry_of(file, name)))
        out: list[Path] = []
        for home in dict.fromkeys(homes):
            out.extend(self._pools.reaching_and_naming(pool, home[0], short(home[1]), short(home[1])))
        return list(dict.fromkeys(out))
