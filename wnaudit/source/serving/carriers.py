"""Which project classes and functions carry a start's weight norm: those that build it, directly or not.

A class carries weight norm applied in a start when it builds a carrier in
its body (an attribute, a ``ModuleList`` member, a helper it calls), keeps
one given to its constructor, or inherits from one; a function carries it
when it calls or returns one.  The searches run from all starts of a run at
once, and what is found goes into the run's ``Carried``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from .config_builds import ConfigBuilds
from .facts import ServingFacts
from .file_facts import FileFacts
from .instances import Carried, Instances
from .pools import Pool, ProjectPools, annotates
from .resolver import Resolver
from .units import CONSTRUCTION, Key, short

#: A project base more files than this annotate parameters with is too general to say which model is kept.
_MAX_TYPED_FILES = 8


class Carriers:
    """The builders of each start, found once per run, and the methods building one runs."""

    def __init__(
        self, pools: ProjectPools, facts: FileFacts, resolver: Resolver, instances: Instances, configs: ConfigBuilds,
        carried: Carried, read: Callable[[Path], "bytes | None"],
    ) -> None:
        self._pools = pools
        self._facts = facts
        self._resolver = resolver
        self._instances = instances
        self._configs = configs
        self._carried = carried
        self._read = read
        #: (project root, a carrier's direct base) -> the files that annotate parameters with it (shape d).
        self._typed_memo: dict[tuple[Path, Key], list[Path]] = {}
        self._construction: dict[Key, set[str]] = {}

    def prepare(self, starts: Iterable[Key]) -> None:
        """Find, for all ``starts`` at once, the project classes and functions that build them.

        All starts of a run share the byte searches: a name is searched
        once per project, whichever start asked.  Which carriers a start has
        does not depend on the other starts (``of`` walks from it alone).
        """
        by_pool: dict[Path, tuple[Pool, list[Key]]] = {}
        for start in starts:
            if start not in self._carried.prepared:
                pool = self._pools.pool(start[0])
                by_pool.setdefault(pool.root, (pool, []))[1].append(start)
        for pool, group in by_pool.values():
            self._prepare_pool(pool, group)

    def _prepare_pool(self, pool: Pool, group: list[Key]) -> None:
        """``prepare`` for the starts of one project root: search for their names, then for their builders' names."""
        carried = self._carried
        known: set[Key] = set(group)
        pending = {short(k[1]) for k in group}
        carried.interesting.update(pending)
        for key in group:
            carried.prepared.add(key)
        names = set(pending)
        defined = {(k[0], short(k[1])) for k in group}
        while pending:
            sources = [(f, n) for f, n in defined if n in pending]
            within = set().union(*(self._pools.reach(pool, f, n) for f, n in sources))
            for f, n in sources:
                aliases = pool.aliases.get((f, n), set())
                carried.aliases.setdefault(n, set()).update(aliases)
                pending |= aliases - names  # ``S3Token2Wav as S3Gen``: the importers name it so
                names |= aliases
                carried.interesting |= aliases
            self._pools.search(pool, pending, within)
            pending = set()
            files = [
                *(k[0] for k in group), *self._pools.mentioning(pool, names), *self._configs.users(group[0][0], known),
                *self._typed_files(pool, known),
            ]
            files = list(dict.fromkeys(files))
            self._facts.read_ahead(files)
            typing_users = [f for f in self._configs.entry_typing_users(pool, names, known) if f not in files]
            self._facts.read_ahead(typing_users)
            files += typing_users
            changed = True
            while changed:  # chains inside the files found so far, before searching for the new names
                changed = False
                for file in files:
                    changed |= self._adopt_builders(file, names, known, defined, pending)

    def _adopt_builders(self, file: Path, names: set[str], known: set[Key], defined: set[tuple[Path, str]], pending: set[str]) -> bool:
        """Link the file's units that build a known carrier to it; new carriers join ``known`` and their names ``pending``.

        True: a carrier was added (the files found so far are walked again).
        """
        carried = self._carried
        changed = False
        for key, reached in [*(((file, q), r) for q, r in self._units(file, names)), *self._holders(file, known)]:
            qual = key[1]
            children = reached & known
            for child in children:
                carried.parents.setdefault(child, set()).add(key)
            if children and key not in known:
                known.add(key)
                defined.add((key[0], short(qual)))
                carried.prepared.add(key)
                name = short(qual)
                if name not in names:
                    names.add(name)
                    pending.add(name)
                    carried.interesting.add(name)
                changed = True
        return changed

    def _units(self, file: Path, names: set[str]) -> list[tuple[str, set[Key]]]:
        """The file's classes and functions, each with the project units named ``names`` it builds, inherits or returns."""
        facts = self._facts.get(file)
        if facts is None:
            return []
        units: list[tuple[str, set[Key]]] = []
        for qual, cls in facts.classes.items():
            units.append((qual, self._resolver.resolved_all(file, (*cls.builds, *cls.bases), names)))
        for qual, body in facts.functions.items():
            reached = self._resolver.resolved_all(file, body.callees, names)
            for returned in body.returns:
                reached |= self._instances.of(file, returned)
            units.append((qual, reached))
        return units

    def _typed_files(self, pool: Pool, known: set[Key]) -> list[Path]:
        """Files that may keep a carrier as a constructor argument typed with a project base of it (shape d).

        A base that more than :data:`_MAX_TYPED_FILES` files annotate with (``PreTrainedModel``) says
        nothing about which model is kept, and is not followed: that also bounds the cost.
        """
        bases = {b for k in known if self._facts.class_of(k) is not None for b in self._resolver.bases(k)} - known
        new = sorted(b for b in bases if (pool.root, b) not in self._typed_memo)
        if new:
            self._pools.search(pool, {short(b[1]) for b in new}, set().union(*(self._pools.reach(pool, b[0], short(b[1])) for b in new)))
            for base in new:
                name = short(base[1])
                files = [f for f in self._pools.mentioning(pool, {name}) if f != base[0] and annotates(self._read(f) or b"", name)]
                self._typed_memo[(pool.root, base)] = files if len(files) <= _MAX_TYPED_FILES else []
        return [f for b in sorted(bases) for f in self._typed_memo[(pool.root, b)]]

    def _holders(self, file: Path, known: set[Key]) -> list[tuple[Key, set[Key]]]:
        """Classes the file constructs with a carrier as an ``__init__`` argument they keep (``Model(hift=HiFT())``),
        and classes that keep an ``__init__`` argument typed with a carrier's project base (``backbone: Backbone``)."""
        facts = self._facts.get(file)
        if facts is None:
            return []
        out = self._typed_holders(file, facts, known)
        for call in facts.helper_calls:
            children = {k for r in call.refs for k in self._instances.of(file, r)} & known
            for key in sorted(self._resolver.resolved_all(file, call.callee)) if children else ():
                if self._keeps(key, call.position, call.keyword):
                    out.append((key, children))
        return out

    def _keeps(self, key: Key, position: int, keyword: str) -> bool:
        """The class's ``__init__`` keeps the argument passed at ``position`` / as ``keyword`` (``self.hift = hift``)."""
        cls = self._facts.class_of(key)
        init = cls.methods.get("__init__") if cls is not None else None
        if cls is None or init is None:
            return False
        param = keyword or (init.params[position + 1] if 0 <= position < len(init.params) - 1 else "")
        return bool(param) and any(("arg", key[1], param) in refs for refs in cls.attrs.values())

    def _typed_holders(self, file: Path, facts: ServingFacts, known: set[Key]) -> list[tuple[Key, set[Key]]]:
        """Classes of the file keeping an ``__init__`` argument typed with a carrier's class or base."""
        out: list[tuple[Key, set[Key]]] = []
        for qual, cls in facts.classes.items():
            for names in cls.attr_types.values():  # ``hift: HiFTGenerator``: it holds one, wherever it comes from
                children = self._resolver.resolved_all(file, names) & known  # the class named, not a base's every subclass
                if children:
                    out.append(((file, qual), children))
            init = cls.methods.get("__init__")
            if init is None or not init.annotations:
                continue
            kept = {r[2] for refs in cls.attrs.values() for r in refs if r[0] == "arg" and r[1] == qual}
            for param in sorted(kept & set(init.annotations)):
                children = self._resolver.typed(file, init.annotations[param], known)
                if children:
                    out.append(((file, qual), children))
        return out

    def of(self, start: Key) -> set[Key]:
        """``start`` and every project class or function that builds it, directly or through others."""
        self.prepare([start])
        out = {start}
        queue = [start]
        while queue:
            for parent in self._carried.parents.get(queue.pop(), ()):
                if parent not in out:
                    out.add(parent)
                    queue.append(parent)
        return out

    def constructed(self, start: Key) -> set[str]:
        """Names of the methods that building ``start`` or a class holding it runs (``__init__`` and what it calls)."""
        memo = self._construction.get(start)
        if memo is not None:
            return memo
        carriers = self.of(start)
        builders = {k for k in carriers if self._facts.class_of(k) is not None}
        family = self._resolver.family(builders)
        reached: set[str] = set()
        pending = set(CONSTRUCTION)
        for key in carriers - builders:  # a factory building it: ``return CausalConvNet(...).weight_norm()``
            function = self._facts.function_of(key)
            calls = function.calls - function.guarded if function is not None else set()
            reached |= calls
            pending |= calls
        while pending:
            name = pending.pop()
            for key in family:
                facts = self._facts.class_of(key)
                body = facts.methods.get(name) if facts is not None else None
                if body is not None:
                    for called in body.calls - reached:
                        reached.add(called)
                        pending.add(called)
        self._construction[start] = reached
        return reached
