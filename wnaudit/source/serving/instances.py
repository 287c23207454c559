"""What an instance reference in a file may be an instance of: the project classes behind ``Ref``.

``facts.py`` records how a model is reached (built by a call, an attribute, an
argument, a method's return, a config entry, a registry); here each is
followed to the classes it can hold.  Only names that can be carriers (the
run's ``Carried.interesting``) are resolved: the rest cannot matter to WN110.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..project import Project
from .config_builds import ConfigBuilds
from .facts import Ref
from .file_facts import FileFacts
from .pools import ProjectPools
from .resolver import Resolver
from .units import MAX_DEPTH, Key, is_container, short


@dataclass
class Carried:
    """What the run has found to carry weight norm so far (``carriers.py`` fills it; the instance answers read it)."""

    #: Units found to carry some start's weight norm (``prepare`` has searched from them), and who builds each.
    prepared: set[Key] = field(default_factory=set)
    parents: dict[Key, set[Key]] = field(default_factory=dict)
    #: Last parts of the names of every unit found to carry weight norm: only such names are resolved.
    interesting: set[str] = field(default_factory=set)
    #: Short name of a unit -> the names importers bind it as (searched for and resolved like it; shape d).
    aliases: dict[str, set[str]] = field(default_factory=dict)

    def generation(self) -> int:
        """Grows whenever a carrier name is added: an answer filtered by the names holds while it is the same."""
        return len(self.interesting) + len(self.prepared)


class Instances:
    """Kept answers to "which project classes may ``ref`` in ``file`` be an instance of?"."""

    def __init__(
        self, project: Project, pools: ProjectPools, facts: FileFacts, resolver: Resolver, configs: ConfigBuilds,
        carried: Carried,
    ) -> None:
        self._project = project
        self._pools = pools
        self._facts = facts
        self._resolver = resolver
        self._configs = configs
        self._carried = carried
        #: (file, ref) -> (the carrier names' generation, the classes it may be an instance of).
        self._instances: dict[tuple[Path, Ref], tuple[int, frozenset[Key]]] = {}

    def of(self, file: Path, ref: Ref, depth: int = 0) -> frozenset[Key]:
        """The project classes an instance reference may be an instance of."""
        memo = (file, ref)
        cached = self._instances.get(memo)
        # An answer holds while the carrier names it was filtered by are the same: the set only grows.
        if cached is not None and cached[0] == self._carried.generation():
            return cached[1]
        if depth > MAX_DEPTH:
            return frozenset()
        self._instances[memo] = (self._carried.generation(), frozenset())  # a loader returning what it loads resolves to nothing more
        result = frozenset(self._follow(file, ref, depth))
        self._instances[memo] = (self._carried.generation(), result)
        return result

    def _follow(self, file: Path, ref: Ref, depth: int) -> set[Key]:
        """One step of ``of``, by the kind of reference."""
        if ref[0] == "new":
            return self._built(file, ref[1], depth)
        if ref[0] == "sub":
            return self._member(file, ref, depth)
        if ref[0] == "attr":
            return self._attribute(file, ref[1], ref[2], depth)
        if ref[0] == "self":
            return {(file, ref[1])} if self._facts.class_of((file, ref[1])) is not None else set()
        if ref[0] == "ret":
            return self._returned(file, ref[1], ref[2], depth)
        if ref[0] == "arg":
            return self._argument(file, ref[1], ref[2], depth)
        if ref[0] == "conf":
            return set(self._config(file, ref[1]))
        if ref[0] == "members":
            return self._module_members(file, ref[1], depth)
        if ref[0] == "registry":
            return self._registered(file, ref[1], depth)
        return set()

    def reaches(self, file: Path, refs: Iterable[Ref], carriers: set[Key]) -> bool:
        """Some of ``refs`` may be an instance of a carrier."""
        return any(self.of(file, r) & carriers for r in refs)

    def unresolved(self, file: Path, ref: Ref) -> bool:
        """No project class or function is known to stand behind ``ref`` (not merely: none that carries weight norm)."""
        if ref[0] == "new":
            return self._resolver.lookup(file, ref[1]) is None
        if ref[0] == "attr":
            facts = self._facts.get(file)
            owner = facts.classes.get(ref[1]) if facts is not None else None
            values = owner.attrs.get(ref[2]) if owner is not None else None
            # ``self.model = model`` in ``__init__``: unresolved while no construction shows what it is given
            return not values or all(v[0] == "arg" and not self.of(file, v) for v in values)
        if ref[0] == "sub":
            return self.unresolved(file, tuple(ref[2:]))
        return True

    def _built(self, file: Path, dotted: str, depth: int) -> set[Key]:
        """What calling ``dotted`` builds: the class (or what one of its classmethods builds), or what a function returns."""
        out: set[Key] = set()
        if not self._carried.interesting.intersection(dotted.split(".")):  # only names that can be carriers
            return out
        found = self._resolver.lookup(file, dotted)
        if found is None:
            return out
        key, rest = found
        if self._facts.class_of(key) is not None:
            out.add(key)  # the class, or what one of its classmethods builds (``from_pretrained``)
        elif not rest:
            body = self._facts.function_of(key)
            for returned in body.returns if body is not None else ():
                out |= self.of(key[0], returned, depth + 1)
        return out

    def _module_members(self, file: Path, module: str, depth: int) -> set[Key]:
        """``getattr(module, name)(...)`` with a name the code does not show: any class the module defines or imports."""
        resolved = self._project.resolve(module, self._project.locate(file))
        facts = self._facts.get(resolved[0]) if resolved is not None and not resolved[1] else None
        if facts is None:
            return set()
        own = {qual.rpartition(".")[2] for qual in facts.classes if "<" not in qual}
        out: set[Key] = set()
        for name in sorted((own | facts.exports.keys()) & self._carried.interesting):
            out |= self._built(file, f"{module}.{name}", depth + 1)
        return out

    def _registered(self, file: Path, table: str, depth: int) -> set[Key]:
        """``VOCODERS[name](...)``: the classes stored in the table where it lives, and those its registrars decorate."""
        home = self._resolver.table_home(file, table)
        facts = self._facts.get(home[0]) if home is not None else None
        if home is None or facts is None:
            return set()
        out: set[Key] = set()
        for name in facts.table_entries.get(home[1], ()):
            out |= self._built(home[0], name, depth + 1)
        registrars = {(home[0], q) for q, t in facts.registrars.items() if self._resolver.table_home(home[0], t) == home}
        return out | self._registered_by(home[0], registrars) if registrars else out

    def _registered_by(self, home: Path, registrars: set[Key]) -> set[Key]:
        """The classes the registrars are applied to: as decorators, or called by hand at module level."""
        pool = self._pools.pool(home)
        words = {short(q) for _, q in registrars}
        self._pools.search(pool, words)
        out: set[Key] = set()
        for user in sorted({home, *self._pools.mentioning(pool, words)}):
            found = self._facts.get(user)
            if found is None:
                continue
            for qual, cls in sorted(found.classes.items()):
                if any(self._resolver.resolves_to(user, name, registrars) for name in cls.decorators):
                    out.add((user, qual))
            for called, given in found.registered_calls:
                if any(self._resolver.resolves_to(user, name, registrars) for name in called):
                    out |= {k for k in self._resolver.resolved_all(user, given) if self._facts.class_of(k) is not None}
        return out

    def _member(self, file: Path, ref: Ref, depth: int) -> set[Key]:
        """``model.<attribute>``: what the owner's class assigns to it, or the owner itself where its code does not show.

        A mapping of parts holds nothing but its entries: a key it was not
        built with is any entry whose key is not written (``"*"``), else nothing.
        """
        out: set[Key] = set()
        if ref[2] == "conf":  # ``configs["hift"]``: what the config builds under that key
            return set(self._config(file, f"{ref[3]}.{ref[1]}" if ref[3] else ref[1]))
        for owner_key in self.of(file, tuple(ref[2:]), depth + 1):
            owner = self._facts.class_of(owner_key)
            container = is_container(owner_key)
            values = owner.attrs.get(ref[1], []) if owner is not None else []
            if container and not values and owner is not None and ref[1] not in owner.attrs:
                values = owner.attrs.get("*", [])
            found: set[Key] = set()
            for value in values:
                found |= self.of(owner_key[0], value, depth + 1)
            out |= found
            if not container and not found and all(v[0] == "arg" for v in values):
                out.add(owner_key)  # a member the class's code does not show: the model itself
        return out

    def _argument(self, file: Path, class_qual: str, param: str, depth: int) -> set[Key]:
        """What the project's constructions of the class pass as ``__init__``'s ``param`` (by position or keyword)."""
        key = (file, class_qual)
        cls = self._facts.class_of(key)
        body = cls.methods.get("__init__") if cls is not None else None
        if body is None or param not in body.params:
            return set()
        position = body.params.index(param) - 1
        pool = self._pools.pool(file)
        name = short(class_qual)
        names = {name, *self._carried.aliases.get(name, ())}
        self._pools.search(pool, names, self._pools.reach(pool, file, name))
        out: set[Key] = set()
        callers = self._pools.mentioning(pool, names)
        self._facts.read_ahead(callers)
        for caller in callers:
            facts = self._facts.get(caller)
            for call in facts.helper_calls if facts is not None else ():
                if (call.position == position if call.position >= 0 else call.keyword == param) and (
                    key in self._resolver.resolved_all(caller, call.callee, names)
                ):
                    for ref in call.refs:
                        out |= self.of(caller, ref, depth + 1)
        if not out and param in body.annotations:  # no construction shows it (a config shipped with the weights)
            out = self._resolver.typed(file, body.annotations[param], self._carried.prepared)
        return out

    def _returned(self, file: Path, class_qual: str, method: str, depth: int) -> set[Key]:
        """``self.<method>(...)``: what the method returns, as the class or its nearest project base defines it."""
        key = (file, class_qual)
        for owner in (key, *self._resolver.bases(key)):
            cls = self._facts.class_of(owner)
            body = cls.methods.get(method) if cls is not None else None
            if body is not None:
                out: set[Key] = set()
                for returned in body.returns:
                    out |= self.of(owner[0], returned, depth + 1)
                return out
        return set()

    def _attribute(self, file: Path, class_qual: str, attribute: str, depth: int) -> set[Key]:
        """``self.<attribute>`` in a class of ``file``: what the class assigns to it."""
        out: set[Key] = set()
        facts = self._facts.get(file)
        owner = facts.classes.get(class_qual) if facts is not None else None
        for value in owner.attrs.get(attribute, ()) if owner is not None else ():
            out |= self.of(file, value, depth + 1)
        if not out and owner is not None and attribute in owner.attr_types:  # typed; the value is in a config
            out = self._resolver.resolved_all(file, owner.attr_types[attribute]) & self._carried.prepared
        return out

    def _config(self, file: Path, path: str) -> frozenset[Key]:
        """What ``instantiate(cfg.<path>)`` builds: the classes at that key path, or at its tail (``self.cfg.model``).

        Where the path holds no class but keys below it do (hyperpyyaml's
        ``configs = load_hyperpyyaml(f)``), any class one level down.
        """
        configured = self._configs.configured(file)
        parts = path.split(".") if path else []
        for start in range(len(parts) + 1):
            tail = ".".join(parts[start:])
            if tail in configured:
                return frozenset(configured[tail])
        below = [keys for key, keys in configured.items() if key and key.rpartition(".")[0] == path]
        if below:
            return frozenset().union(*below)
        return frozenset(self._entry_typed(file, parts[-1])) if parts else frozenset()

    def _entry_typed(self, file: Path, key: str) -> set[Key]:
        """The carrier classes the project's own ``isinstance(configs["<key>"], Cls)`` checks say an entry holds,
        for a config the package does not ship (it comes with the weights: cosyvoice's ``hift``)."""
        out: set[Key] = set()
        for checker in self._configs.entry_checkers(file, key):
            facts = self._facts.get(checker)
            for name in facts.entry_types.get(key, ()) if facts is not None else ():
                out |= self._built(checker, name, MAX_DEPTH)
        return out
