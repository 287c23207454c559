"""Link the serving-path facts of a project: who builds, serves and folds a weight-normed class.

The question WN110 asks runs against the direction of imports: the class
that applies weight norm sits in a model file, while the code that puts it in
eval mode (and may fold it) sits in files that import it.  So the answer for
a file cannot come from what it imports alone; it comes from its *project*:
the directory tree its package belongs to (up to the nearest ``pyproject.toml``,
``setup.py``, ``setup.cfg`` or ``.git``), read from disk whatever files the
command line names.  Within it, only files that mention a name that matters
(the classes holding the weight norm, the functions returning them, the
methods that fold them) are parsed; the rest is a byte search.

Test code (``tests/``, ``test_*.py``, ``conftest.py``) is not a serving path
and is left out: a test that evaluates a model, or calls its removal method,
says nothing about what the project does when it serves.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Generic, Hashable, Iterable, TypeVar

from ...core import catalogue
from ..model import FileSummary
from ..project import ImportBinding, Project
from ..provisional import provisional
from ..summary_cache import SummaryCache
from ..syntax_cache import digest_of
from . import facts_cache
from .ahead import ServingAhead
from .configs import config_targets
from .effects import ClassView, FoldSummaries
from .flags import config_files, flag_on
from .facts import READ_ERRORS, Body, ClassFacts, HelperCall, Ref, ServingFacts, Use
from .entries import module_of
from .entries import split as split_entry
from .names import ModuleNames
from .reader import read_serving_facts
from .selection import Selection
from .walk import is_test_file, project_files, skipped

logger = logging.getLogger(__name__)
_T = TypeVar("_T", bound=Hashable)

#: A class or function of the project: (file, qualified name).
Key = tuple[Path, str]
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_MARKER_LEVELS = 8
_MAX_DEPTH = 24
#: The methods that building an instance runs.
_CONSTRUCTION = frozenset({"__init__", "__post_init__", "__new__"})
#: Words a fold helper's file must contain: the removers' names, ``wnaudit`` (its folds) and ``onnx.export``.
_FOLD_WORDS = tuple(sorted({
    api.rpartition(".")[2] for s in catalogue.SPELLINGS if s.kind is not catalogue.Kind.SPECTRAL_NORM
    for api in s.remove_apis
} | {"fold_weight_norm", "wnaudit", "onnx.export"}))


#: The builtin that fetches a class from a module by a string (``getattr(models, cfg.name)``).
_FETCH = "getattr"
#: Members of ``self`` that reach every part it holds: a removal method using one folds whatever the model holds.
_SELF_WHOLE = frozenset({"modules()", "children()", "named_modules()", "named_children()", "apply()", "parameters()", "named_parameters()"})
#: The word of a type check on a config entry (``isinstance(configs["hift"], HiFTGenerator)``).
_TYPE_CHECK = b"isinstance("


@dataclass(frozen=True)
class Served:
    """Where a class holding weight norm is put to inference, and the removal nobody calls."""

    file: Path
    site: Use
    #: ``Class.method`` of a removal method defined for the model that nothing calls ("": none).
    uncalled: str = ""
    #: The class the application belongs to, as the message names it.
    owner: str = ""
    #: Why a candidate fold does not count (``Vocoder.remove_weight_norm()`` folds it, but nothing calls that).
    why: str = ""
    #: The model a fold should name where the site's is a mapping of parts (``model["decoder"]``; "": the site's).
    target: str = ""
    #: Further inference sites of the model that no fold covers, each as its own ``Served``: every site
    #: is folded by the fix or reported, not only the first one found.
    others: tuple["Served", ...] = ()
    #: A removal that already runs at the site on the model (``model.remove_weight_norm()`` that cannot fold):
    #: a fold added beside it would make one of the two raise, so the fix adds none there ("": none runs).
    removal: str = ""


@dataclass
class _Pool:
    """The parsed files of one project root, and the names searched for so far."""

    root: Path
    files: tuple[Path, ...]
    searched: set[str] = field(default_factory=set)
    #: file -> the searched names it mentions.
    mentions: dict[Path, set[str]] = field(default_factory=dict)
    #: file -> the pool files importing it (built on first need), and the transitive closure per file.
    importers: "dict[Path, set[tuple[Path, str, str]]] | None" = None
    reach: dict[tuple[Path, str], set[Path]] = field(default_factory=dict)
    #: (file, name) -> the other names importers bind it as (``from .s3gen import S3Token2Wav as S3Gen``).
    aliases: dict[tuple[Path, str], set[str]] = field(default_factory=dict)


class ServingIndex:
    """The serving-path facts of the project files a lint needs, parsed once per run."""

    def __init__(
        self, project: Project, read: Callable[[Path], "bytes | None"],
        imports: Callable[[Path], "Iterable[tuple[ImportBinding, Path]]"], cache: "SummaryCache | None" = None,
        walk: "Callable[[Path, bool], tuple[Path, ...]] | None" = None, known: "dict[str, ServingFacts] | None" = None,
        configs: "Callable[[Path], dict[str, set[str]]] | None" = None, ahead: "ServingAhead | None" = None,
    ) -> None:
        #: What the YAML configs under a directory build (``configs.config_targets``; the workspace's keeps it).
        self._config_targets = configs or config_targets
        self.project = project
        #: Facts computed beside the analyses, in the workers (``facts_cache.facts_key`` -> facts).
        self._known = known if known is not None else {}  # the same dict: facts kept later are seen here too
        #: Workers parsing the files of a list the index is about to read (``ahead.py``; None: all parsed here).
        self._ahead = ahead
        #: Files ``_read_ahead`` has handed to the workers or found known (not read and hashed again for a later list).
        self._announced: set[Path] = set()
        #: The project's files under a root (``walk.project_files``; the workspace's keeps what it found).
        self._walk = walk or (lambda root, whole: tuple(project_files(root, whole)))
        #: Where parsed facts are kept between runs (the summary cache; None: parse every run).
        self._cache = cache
        self._read = read
        #: A file's import bindings with the project file each reaches (modules and package ``__init__``).
        self._imports = imports
        self._facts: dict[Path, ServingFacts | None] = {}
        self._pools: dict[Path, _Pool] = {}
        #: file -> the pool of its project root (``_pool``): the markers the run saw do not change during it.
        self._pool_of: dict[Path, _Pool] = {}
        self._lookups: dict[tuple[Path, str], tuple[Key, str] | None] = {}
        #: What each name bound in a project module stands for (``_member``), resolved once per run.
        self._names = ModuleNames(project, self.facts, self._mentions, _MAX_DEPTH)
        #: (file, ref) -> (how many carrier names there were, the classes it may be an instance of).
        self._instances: dict[tuple[Path, Ref], tuple[int, frozenset[Key]]] = {}
        self._verdicts: dict[Key, Served | None] = {}
        #: Units found to carry some start's weight norm (``prepare`` has searched from them), and who builds each.
        self._prepared: set[Key] = set()
        self._parents: dict[Key, set[Key]] = {}
        #: Last parts of the names of every unit found to carry weight norm: only such names are resolved.
        self._interesting: set[str] = set()
        #: (project root, a carrier's direct base) -> the files that annotate parameters with it (shape d).
        self._typed_memo: dict[tuple[Path, Key], list[Path]] = {}
        #: Per project root: the classes its YAML configs build, by key path (shape d).
        self._configs: dict[Path, dict[str, set[Key]]] = {}
        #: (project root, flag) -> whether its configuration turns the flag on; root -> its YAML/JSON files.
        self._flags: dict[tuple[Path, str], bool] = {}
        self._config_files: dict[Path, list[Path]] = {}
        #: The facts of files with flag-guarded folds as read: a fix must not add a fold beside a removal that a
        #: flag the configuration leaves off may still run (a second removal raises).
        self._unflagged: dict[Path, ServingFacts] = {}
        #: (project root, config key) -> the files that check such an entry's type (``isinstance(c["hift"], ...)``).
        self._entry_checkers: dict[tuple[Path, str], list[Path]] = {}
        #: Short name of a unit -> the names importers bind it as (searched for and resolved like it; shape d).
        self._aliases: dict[str, set[str]] = {}
        self._bases: dict[Key, list[Key]] = {}
        self._lineages: dict[Key, frozenset[Key]] = {}
        self._mentioned: dict[tuple[Path, str], bool] = {}
        self._construction: dict[Key, set[str]] = {}
        #: Per project root: last parts of the names of the functions that fold (a remover, ``wnaudit.fold*``).
        self._fold_helpers: dict[tuple[Path, bool], frozenset[str]] = {}
        #: Files the index had to read as code and could not parse (the engine reports those it lints).
        self.failures: dict[Path, Exception] = {}
        #: Whether a start applies only the modern weight norm (the context's styles): then a fold by the legacy
        #: remover alone folds nothing (it raises, and WN101 reports it).
        self.modern_only: Callable[[Key], bool] = lambda key: False
        #: Declared serving entries (``declare``), each (its file, its qualified name there, its body); None: not read.
        self._entries: "list[tuple[Path, str, Body]] | None" = None
        self._declared: tuple[tuple[str, ...], Path] = ((), Path.cwd())
        self._modern = False
        #: ``exclude`` patterns in force (``Config.is_path_excluded``): an excluded file is never an inference site.
        self.excluded: Callable[[Path], bool] = lambda path: False
        #: How a file no one gave facts for is parsed (the workspace's ``read_serving``: its analysis from the same
        #: parse); raises ``READ_ERRORS``.
        self.parse_facts: Callable[[Path, bytes], ServingFacts] = self._parse_facts
        #: Takes the analysis a worker made of a file beside its facts (the workspace's ``adopt_analysis``).
        self.adopt_analysis: Callable[[Path, bytes, FileSummary], None] = lambda path, data, summary: None
        #: A whole-file tree the analysis kept, by the digest of the bytes (``kept_trees``; None: parse the file).
        self.kept_tree: Callable[[bytes], ast.Module | None] = lambda digest: None
        #: What each project function does to the models it is given (``effects.py``).
        self.summaries = FoldSummaries(self._function, self._resolved_all)
        #: Which guarded applications the project's constructions select (``selection.py``).
        self.selection = Selection(self.facts, read, self.lookup, self._files_mentioning, lambda digest: self.kept_tree(digest))

    def declare(self, entries: tuple[str, ...], root: Path) -> None:
        """``[tool.wnaudit] serving``: the entry points WN110 checks and fixes (resolved from ``root`` on first need)."""
        self._declared, self._entries = (entries, root), None

    def entry_bodies(self) -> list[tuple[Path, str, Body]]:
        """The declared entries the project defines: (file, qualified name, body); the others are config errors."""
        if self._entries is None:
            self._entries = []
            entries, root = self._declared
            for entry in entries:
                module, qualname = split_entry(entry)
                file = module_of(self.project, root, module)
                facts = self.facts(file) if file is not None else None
                if file is None or facts is None:
                    continue
                head, _, method = qualname.partition(".")
                prefix = f"{facts.module}." if facts.module else ""
                cls = facts.classes.get(prefix + head) if method else None
                body = cls.methods.get(method) if cls is not None else facts.functions.get(prefix + qualname)
                if body is not None:
                    self._entries.append((file, prefix + qualname, body))
        return self._entries

    def _entry_sites(self, carriers: set[Key]) -> list[tuple[Path, Use, frozenset[Key]]]:
        """Each ``return`` of a carrier in a declared entry: the model leaves for inference there."""
        sites: list[tuple[Path, Use, frozenset[Key]]] = []
        for file, _, body in self.entry_bodies():
            for use in body.returned_at:
                reached = frozenset(k for r in use.refs for k in self.instances(file, r) if k in carriers)
                if reached:
                    sites.append((file, use, reached))
        return sites

    # -- files ----------------------------------------------------------------------
    def facts(self, path: Path) -> ServingFacts | None:
        if path in self._facts:
            return self._facts[path]
        self._facts[path] = None
        data = self._read(path)
        if data is None:
            return None
        location = self.project.locate(path)
        key = facts_cache.facts_key(digest_of(data), location.module, location.is_package)
        found = self._known.get(key) or (facts_cache.load(self._cache, key) if self._cache is not None else None)
        if found is None and self._ahead is not None:
            found = self._ahead.take(key)
            analysed = self._ahead.analysis(key)
            if analysed is not None:
                self.adopt_analysis(path, data, analysed)
            if found is not None and self._cache is not None:
                facts_cache.store(self._cache, key, found)
        if found is None:
            try:
                found = self.parse_facts(path, data)
            except READ_ERRORS as error:
                logger.debug("%s: not read for the serving path: %s", path, error)
                self.failures[path] = error
                return None
            if self._cache is not None:
                facts_cache.store(self._cache, key, found)
        if found.flagged:
            self._unflagged[path] = found
            found = self._flags_applied(path, found)
        self._facts[path] = found
        return found

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
        pool = self._pool(path)
        found = self._flags.get((pool.root, flag))
        if found is None:
            configs = self._config_files.get(pool.root)
            if configs is None:
                configs = self._config_files[pool.root] = config_files(pool.root)
            python = ((f, data) for f in pool.files if (data := self._read(f)) is not None)
            found = self._flags[(pool.root, flag)] = flag_on(flag, python, configs)
        return found

    def _parse_facts(self, path: Path, data: bytes) -> ServingFacts:
        location = self.project.locate(path)
        return read_serving_facts(data, str(path), location.module, location.is_package)

    def _read_ahead(self, files: Iterable[Path]) -> None:
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
            location = self.project.locate(path)
            key = facts_cache.facts_key(digest_of(data), location.module, location.is_package)
            if key not in self._known and (self._cache is None or facts_cache.load(self._cache, key) is None):
                self._ahead.submit(key, data, str(path), location.module, location.is_package)

    def root_of(self, path: Path) -> tuple[Path, bool]:
        """The project directory of a file, and whether it was found by a marker (then walked whole)."""
        location = self.project.locate(path)
        top = location.home.parent if location.home != location.path else location.path.parent
        current = top
        for _ in range(_MARKER_LEVELS):
            if any(self.project.exists(os.path.join(current, marker)) for marker in _MARKERS):
                return current, True
            parent = current.parent
            if parent == current or skipped(current.name):
                break  # a walk from above would not enter this directory (``.cache``, ``site-packages``)
            current = parent
        return top, False

    def _pool(self, path: Path) -> _Pool:
        """The pool of the file's project root (kept per file: ``root_of`` asks up to eight directories for markers)."""
        pool = self._pool_of.get(path)
        if pool is None:
            root, marked = self.root_of(path)
            pool = self._pools.get(root)
            if pool is None:
                pool = self._pools[root] = _Pool(root, self._walk(root, marked))
            self._pool_of[path] = pool
        return pool

    def _search(self, pool: _Pool, names: Iterable[str], within: "set[Path] | None" = None) -> None:
        """Record which pool files mention any of ``names`` as code (one pass per file for the whole batch).

        ``within``: only these files (the ones that can import where the names are defined).
        A mention that is a whole string literal (``"EncodecModel"`` in a
        lazy-import table or an auto mapping) is not code the rule can follow,
        and does not make the file worth parsing.
        """
        new = sorted({n for n in names if n and n not in pool.searched})
        if not new:
            return
        pool.searched.update(new)
        words = [(n, n.encode("utf-8")) for n in new]
        for file in pool.files if within is None else [f for f in pool.files if f in within]:
            data = self._read(file)
            if data is None:
                continue
            found = {name for name, word in words if word in data and _names_in_code(data, word)}
            if found:
                pool.mentions.setdefault(file, set()).update(found)

    def _reach(self, pool: _Pool, file: Path, name: str) -> set[Path]:
        """``file`` and the pool files that can name its ``name`` through imports the resolver follows.

        A file importing the name (or ``*``) from ``file`` binds it, and so
        may re-export it to its own importers; a file importing ``file`` as
        a module can use ``module.name`` but re-exports nothing.  Names are
        searched for in these files alone: elsewhere they cannot stand for
        what ``file`` defines.
        """
        if pool.importers is None:
            pool.importers = {}
            for importer in pool.files:
                for binding, target in self._imports(importer):
                    pool.importers.setdefault(target, set()).add((importer, binding.bound, binding.attribute))
        found = pool.reach.get((file, name))
        if found is None:
            found = {file}
            queue = [(file, name)]
            seen = set(queue)
            while queue:
                current, bound_as = queue.pop()
                for importer, bound, attribute in pool.importers.get(current, ()):
                    if attribute == "*" and bound != "*":
                        found.add(importer)  # ``import pkg.model`` / ``from pkg import model``: ``model.Name``
                        continue
                    if attribute == bound_as or attribute == "*":
                        found.add(importer)
                        step = (importer, bound_as if attribute == "*" else bound)
                        if step not in seen:
                            seen.add(step)
                            queue.append(step)
            pool.reach[(file, name)] = found
            pool.aliases[(file, name)] = {bound for _, bound in seen} - {name, "*"}
        return found

    def _files_mentioning(self, file: Path, name: str) -> list[Path]:
        """The files of ``file``'s project that mention ``name`` as code."""
        pool = self._pool(file)
        self._search(pool, [name])
        return self._mentioning(pool, {name})

    def _mentioning(self, pool: _Pool, names: set[str]) -> list[Path]:
        """The pool files that mention any of ``names`` (searched before), in path order.

        ``pool.mentions`` fills in the order the run's searches came, which
        depends on what else it linted: the order here must not.
        """
        return sorted((file for file, found in pool.mentions.items() if found & names), key=str)

    def imports(self, file: Path, module: str) -> bool:
        """Does a file of ``file``'s project (its walk leaves tests out) import ``module``? WN110's fix: is wnaudit a dependency."""
        pool = self._pool(file)
        self._search(pool, [module])
        for path in self._mentioning(pool, {module}):
            data = self._read(path)
            if data is not None and module in _imported_modules(data):
                return True
        return False

    # -- names ------------------------------------------------------------------------
    def lookup(self, file: Path, dotted: str, depth: int = 0) -> tuple[Key, str] | None:
        """The project class or function a qualified name used in ``file`` stands for, and the rest of the name."""
        if depth > _MAX_DEPTH or not dotted or dotted.partition(".")[0] in ("torch", "wnaudit"):
            return None
        memo = (file, dotted)
        if memo in self._lookups:
            return self._lookups[memo]
        with provisional(self._lookups, memo, None):  # a cycle of re-exports resolves to nothing
            result = self._lookup(file, dotted, depth)
        self._lookups[memo] = result
        return result

    def _lookup(self, file: Path, dotted: str, depth: int) -> tuple[Key, str] | None:
        facts = self.facts(file)
        if facts is None:
            return None
        module = facts.module
        if module and dotted.startswith(module + "."):
            found = self._member(file, facts, dotted[len(module) + 1 :], depth)
            if found is not None:
                return found
        location = self.project.locate(file)
        resolved = self.project.resolve(dotted, location)
        if resolved is None:
            return None
        target, inner = resolved
        target_facts = self.facts(target)
        if target_facts is None or not inner:
            return None
        return self._member(target, target_facts, inner, depth)

    def _member(self, file: Path, facts: ServingFacts, inner: str, depth: int) -> tuple[Key, str] | None:
        """``inner`` inside the module ``file`` (whose facts are ``facts``), each of its names resolved once per run (``names.py``)."""
        found = self._names.member(file, inner, depth)
        if found is None or not found[1]:
            return None
        return (found[0], found[1]), found[2]

    def _mentions(self, path: Path, name: str) -> bool:
        key = (path, name)
        found = self._mentioned.get(key)
        if found is None:
            data = self._read(path) or b""
            found = self._mentioned[key] = re.search(rb"\b" + re.escape(name.encode("utf-8")) + rb"\b", data) is not None
        return found

    def _class(self, key: Key) -> ClassFacts | None:
        facts = self.facts(key[0])
        return facts.classes.get(key[1]) if facts is not None else None

    def _function(self, key: Key) -> Body | None:
        facts = self.facts(key[0])
        return facts.functions.get(key[1]) if facts is not None else None

    def instances(self, file: Path, ref: Ref, depth: int = 0) -> frozenset[Key]:
        """The project classes an instance reference may be an instance of."""
        memo = (file, ref)
        cached = self._instances.get(memo)
        # An answer holds while the carrier names it was filtered by are the same: the set only grows.
        if cached is not None and cached[0] == len(self._interesting) + len(self._prepared):
            return cached[1]
        if depth > _MAX_DEPTH:
            return frozenset()
        self._instances[memo] = (len(self._interesting) + len(self._prepared), frozenset())  # a loader returning what it loads resolves to nothing more
        if ref[0] == "new":
            out = self._built_instances(file, ref[1], depth)
        elif ref[0] == "sub":
            out = self._member_instances(file, ref, depth)
        elif ref[0] == "attr":
            out = self._attribute_instances(file, ref[1], ref[2], depth)
        elif ref[0] == "self":
            out = {(file, ref[1])} if self._class((file, ref[1])) is not None else set()
        elif ref[0] == "ret":
            out = self._returned_instances(file, ref[1], ref[2], depth)
        elif ref[0] == "arg":
            out = self._argument_instances(file, ref[1], ref[2], depth)
        elif ref[0] == "conf":
            out = set(self._config_instances(file, ref[1]))
        elif ref[0] == "members":
            out = self._module_members(file, ref[1], depth)
        elif ref[0] == "registry":
            out = self._registered(file, ref[1], depth)
        else:
            out = set()
        result = frozenset(out)
        self._instances[memo] = (len(self._interesting) + len(self._prepared), result)
        return result

    def _built_instances(self, file: Path, dotted: str, depth: int) -> set[Key]:
        """What calling ``dotted`` builds: the class (or what one of its classmethods builds), or what a function returns."""
        out: set[Key] = set()
        if not self._interesting.intersection(dotted.split(".")):  # only names that can be carriers
            return out
        found = self.lookup(file, dotted)
        if found is None:
            return out
        key, rest = found
        if self._class(key) is not None:
            out.add(key)  # the class, or what one of its classmethods builds (``from_pretrained``)
        elif not rest:
            body = self._function(key)
            for returned in body.returns if body is not None else ():
                out |= self.instances(key[0], returned, depth + 1)
        return out

    def _module_members(self, file: Path, module: str, depth: int) -> set[Key]:
        """``getattr(module, name)(...)`` with a name the code does not show: any class the module defines or imports."""
        resolved = self.project.resolve(module, self.project.locate(file))
        facts = self.facts(resolved[0]) if resolved is not None and not resolved[1] else None
        if facts is None:
            return set()
        own = {qual.rpartition(".")[2] for qual in facts.classes if "<" not in qual}
        out: set[Key] = set()
        for name in sorted((own | facts.exports.keys()) & self._interesting):
            out |= self._built_instances(file, f"{module}.{name}", depth + 1)
        return out

    def _registered(self, file: Path, table: str, depth: int) -> set[Key]:
        """``VOCODERS[name](...)``: the classes stored in the table where it lives, and those its registrars decorate."""
        home = self._table_home(file, table)
        facts = self.facts(home[0]) if home is not None else None
        if home is None or facts is None:
            return set()
        out: set[Key] = set()
        for name in facts.table_entries.get(home[1], ()):
            out |= self._built_instances(home[0], name, depth + 1)
        registrars = {(home[0], q) for q, t in facts.registrars.items() if self._table_home(home[0], t) == home}
        return out | self._registered_by(home[0], registrars) if registrars else out

    def _registered_by(self, home: Path, registrars: set[Key]) -> set[Key]:
        """The classes the registrars are applied to: as decorators, or called by hand at module level."""
        pool = self._pool(home)
        words = {_short(q) for _, q in registrars}
        self._search(pool, words)
        out: set[Key] = set()
        for user in sorted({home, *self._mentioning(pool, words)}):
            found = self.facts(user)
            if found is None:
                continue
            for qual, cls in sorted(found.classes.items()):
                if any(self._resolves_to(user, name, registrars) for name in cls.decorators):
                    out.add((user, qual))
            for called, given in found.registered_calls:
                if any(self._resolves_to(user, name, registrars) for name in called):
                    out |= {k for k in self._resolved_all(user, given) if self._class(k) is not None}
        return out

    def _resolves_to(self, file: Path, name: str, keys: set[Key]) -> bool:
        found = self.lookup(file, name)
        return found is not None and not found[1] and found[0] in keys

    def _table_home(self, file: Path, table: str) -> Key | None:
        """Where a module-level table lives: (its file, its qualified name there), following imports."""
        facts = self.facts(file)
        prefix = f"{facts.module}." if facts is not None and facts.module else ""
        if facts is not None and table.startswith(prefix) and "." not in table[len(prefix):]:
            return (file, table)
        resolved = self.project.resolve(table, self.project.locate(file))
        if resolved is None or not resolved[1] or "." in resolved[1]:
            return None
        home = self.facts(resolved[0])
        return (resolved[0], f"{home.module}.{resolved[1]}" if home.module else resolved[1]) if home is not None else None

    def _member_instances(self, file: Path, ref: Ref, depth: int) -> set[Key]:
        """``model.<attribute>``: what the owner's class assigns to it, or the owner itself where its code does not show.

        A mapping of parts holds nothing but its entries: a key it was not
        built with is any entry whose key is not written (``"*"``), else nothing.
        """
        out: set[Key] = set()
        if ref[2] == "conf":  # ``configs["hift"]``: what the config builds under that key
            return set(self._config_instances(file, f"{ref[3]}.{ref[1]}" if ref[3] else ref[1]))
        for owner_key in self.instances(file, tuple(ref[2:]), depth + 1):
            owner = self._class(owner_key)
            container = is_container(owner_key)
            values = owner.attrs.get(ref[1], []) if owner is not None else []
            if container and not values and owner is not None and ref[1] not in owner.attrs:
                values = owner.attrs.get("*", [])
            found: set[Key] = set()
            for value in values:
                found |= self.instances(owner_key[0], value, depth + 1)
            out |= found
            if not container and not found and all(v[0] == "arg" for v in values):
                out.add(owner_key)  # a member the class's code does not show: the model itself
        return out

    def _argument_instances(self, file: Path, class_qual: str, param: str, depth: int) -> set[Key]:
        """What the project's constructions of the class pass as ``__init__``'s ``param`` (by position or keyword)."""
        key = (file, class_qual)
        cls = self._class(key)
        body = cls.methods.get("__init__") if cls is not None else None
        if body is None or param not in body.params:
            return set()
        position = body.params.index(param) - 1
        pool = self._pool(file)
        short = _short(class_qual)
        names = {short, *self._aliases.get(short, ())}
        self._search(pool, names, self._reach(pool, file, short))
        out: set[Key] = set()
        callers = self._mentioning(pool, names)
        self._read_ahead(callers)
        for caller in callers:
            facts = self.facts(caller)
            for call in facts.helper_calls if facts is not None else ():
                if (call.position == position if call.position >= 0 else call.keyword == param) and (
                    key in self._resolved_all(caller, call.callee, names)
                ):
                    for ref in call.refs:
                        out |= self.instances(caller, ref, depth + 1)
        if not out and param in body.annotations:  # no construction shows it (a config shipped with the weights)
            out = self._typed(file, body.annotations[param], self._prepared)
        return out

    def _configured(self, file: Path) -> dict[str, set[Key]]:
        """The project classes the YAML configs under the file's project root build, by key path (``configs.py``)."""
        pool = self._pool(file)
        found = self._configs.get(pool.root)
        if found is None:
            found = self._configs[pool.root] = {}
            for path, names in self._config_names(pool).items():
                for dotted in sorted(names):
                    key = self._config_class(file, dotted)
                    if key is not None:
                        found.setdefault(path, set()).add(key)
        return found

    def _config_names(self, pool: _Pool) -> dict[str, set[str]]:
        """The dotted class names the configs build, read only where project code instantiates from configs:
        the YAML files under the project root and in the directories its Hydra calls name (``config_path``)."""
        self._search(pool, _INSTANTIATE_WORDS)
        users = self._mentioning(pool, set(_INSTANTIATE_WORDS))
        if not users:
            return {}
        directories = {pool.root}
        for user in users:
            data = self._read(user) or b""
            facts = self.facts(user) if b"config_path" in data or b"config_dir" in data else None
            for written in facts.config_dirs if facts is not None else ():
                directory = Path(os.path.normpath(user.parent / written))
                if directory != pool.root and pool.root not in directory.parents:
                    directories.add(directory)
        names: dict[str, set[str]] = {}
        for directory in sorted(directories):
            for path, found in self._config_targets(directory).items():
                names.setdefault(path, set()).update(found)
        return names

    def _config_class(self, file: Path, dotted: str) -> Key | None:
        """The project class a config's dotted name stands for; its tails are tried too, since a namespace
        package (no ``__init__.py``: ``fish_speech/models/dac``) is located by its inner package's name."""
        parts = dotted.split(".")
        for start in range(len(parts) - 1):
            hit = self.lookup(file, ".".join(parts[start:]))
            if hit is not None and not hit[1] and self._class(hit[0]) is not None:
                return hit[0]
        return None

    def _config_instances(self, file: Path, path: str) -> frozenset[Key]:
        """What ``instantiate(cfg.<path>)`` builds: the classes at that key path, or at its tail (``self.cfg.model``).

        Where the path holds no class but keys below it do (hyperpyyaml's
        ``configs = load_hyperpyyaml(f)``), any class one level down.
        """
        configured = self._configured(file)
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
        pool = self._pool(file)
        checkers = self._entry_checkers.get((pool.root, key))
        if checkers is None:  # the key is a string there, which the name search does not count as code
            quoted = (f'"{key}"'.encode(), f"'{key}'".encode())
            checkers = self._entry_checkers[(pool.root, key)] = [
                f for f in pool.files
                if _TYPE_CHECK in (data := self._read(f) or b"") and any(q in data for q in quoted)
            ]
        out: set[Key] = set()
        for checker in checkers:
            facts = self.facts(checker)
            for name in facts.entry_types.get(key, ()) if facts is not None else ():
                out |= self._built_instances(checker, name, _MAX_DEPTH)
        return out

    def _entry_typing_users(self, pool: _Pool, names: set[str], known: set[Key]) -> list[Path]:
        """The files that instantiate from configs, where a file naming a carrier checks a config entry against it
        (``isinstance(configs["hift"], HiFTGenerator)``): they build it, by that check, from a config not shipped."""
        for file in self._mentioning(pool, names):
            facts = self.facts(file) if _TYPE_CHECK in (self._read(file) or b"") else None
            for types in facts.entry_types.values() if facts is not None else ():
                if self._resolved_all(file, types) & known:
                    self._search(pool, _INSTANTIATE_WORDS)
                    return self._mentioning(pool, set(_INSTANTIATE_WORDS))
        return []

    def _config_users(self, file: Path, carriers: set[Key]) -> list[Path]:
        """The project files that instantiate from configs, where the configs build a carrier (else none)."""
        if not any(carriers & keys for keys in self._configured(file).values()):
            return []
        return self._mentioning(self._pool(file), set(_INSTANTIATE_WORDS))

    def _choosers(self, pool: _Pool, classes: set[Key]) -> list[Path]:
        """Files that may build a carrier class by name from a module it is in (``getattr(models, cfg.name)(...)``).

        Only files that can reach the class through imports and call ``getattr``:
        they name the module, not the class, so the name search misses them.
        """
        out: list[Path] = []
        for key in sorted(classes):
            out.extend(f for f in self._reaching_and_naming(pool, key[0], _short(key[1]), _FETCH) if f != key[0])
        return list(dict.fromkeys(out))

    def _reaching_and_naming(self, pool: _Pool, file: Path, name: str, word: str) -> list[Path]:
        """The pool files that can name ``file``'s ``name`` through imports and mention ``word`` as code."""
        self._search(pool, [word])
        users = set(self._mentioning(pool, {word}))
        return [f for f in sorted(self._reach(pool, file, name)) if f in users] if users else []

    def _registry_users(self, pool: _Pool, classes: set[Key], files: list[Path]) -> list[Path]:
        """Files that may build a carrier class from a registry (``VOCODERS[name](...)``): one a decorator of the
        class stores it in, or one a file naming the class (``files``) stores it in at module level.

        They name the table, not the class, so the name search misses them.
        """
        homes: list[Key] = []
        for key in sorted(classes):
            cls = self._class(key)
            homes.extend(h for name in (cls.decorators if cls is not None else ()) if (h := self._registry_of(key[0], name)))
        for file in files:
            facts = self.facts(file)
            for table, names in sorted(facts.table_entries.items()) if facts is not None else ():
                if self._resolved_all(file, names) & classes and (home := self._table_home(file, table)):
                    homes.append(home)
            for called, given in facts.registered_calls if facts is not None else ():
                if self._resolved_all(file, given) & classes:
                    homes.extend(h for name in called if (h := self._registry_of(file, name)))
        out: list[Path] = []
        for home in dict.fromkeys(homes):
            out.extend(self._reaching_and_naming(pool, home[0], _short(home[1]), _short(home[1])))
        return list(dict.fromkeys(out))

    def _registry_of(self, file: Path, decorator: str) -> Key | None:
        """The table a decorator (a registrar) stores the class it decorates into, where the table lives."""
        found = self.lookup(file, decorator)
        if found is None or found[1]:
            return None
        facts = self.facts(found[0][0])
        table = facts.registrars.get(found[0][1]) if facts is not None else None
        return self._table_home(found[0][0], table) if table else None

    def _typed(self, file: Path, annotation: list[str], among: Iterable[Key]) -> set[Key]:
        """The classes ``among`` an annotation admits: the named project class and its subclasses."""
        types = {k for k in self._resolved_all(file, annotation) if self._class(k) is not None}
        return {c for c in among if not types.isdisjoint(self._lineage(c))} if types else set()

    def _lineage(self, key: Key) -> frozenset[Key]:
        """The class and its project bases as one set (empty: not a class); ``_typed`` asks it of every prepared unit."""
        found = self._lineages.get(key)
        if found is None:
            found = self._lineages[key] = frozenset((key, *self.bases(key))) if self._class(key) is not None else frozenset()
        return found

    def _returned_instances(self, file: Path, class_qual: str, method: str, depth: int) -> set[Key]:
        """``self.<method>(...)``: what the method returns, as the class or its nearest project base defines it."""
        key = (file, class_qual)
        for owner in (key, *self.bases(key)):
            cls = self._class(owner)
            body = cls.methods.get(method) if cls is not None else None
            if body is not None:
                out: set[Key] = set()
                for returned in body.returns:
                    out |= self.instances(owner[0], returned, depth + 1)
                return out
        return set()

    def _attribute_instances(self, file: Path, class_qual: str, attribute: str, depth: int) -> set[Key]:
        """``self.<attribute>`` in a class of ``file``: what the class assigns to it."""
        out: set[Key] = set()
        facts = self.facts(file)
        owner = facts.classes.get(class_qual) if facts is not None else None
        for value in owner.attrs.get(attribute, ()) if owner is not None else ():
            out |= self.instances(file, value, depth + 1)
        if not out and owner is not None and attribute in owner.attr_types:  # typed; the value is in a config
            out = self._resolved_all(file, owner.attr_types[attribute]) & self._prepared
        return out

    def _resolved_all(self, file: Path, names: Iterable[str], only: "set[str] | frozenset[str] | None" = None) -> set[Key]:
        """The project units ``names`` stand for; with ``only``, just the names whose last part is in it.

        Resolving a name may walk re-exports and star imports of large
        ``__init__`` files; ``only`` keeps that to the names that can matter.
        """
        out: set[Key] = set()
        for name in names:
            if only is not None and name.rpartition(".")[2] not in only:
                continue
            found = self.lookup(file, name)
            if found is not None and not found[1]:
                out.add(found[0])
        return out

    def bases(self, key: Key) -> list[Key]:
        """The project classes a class inherits from, nearest first (its MRO within the project)."""
        cached = self._bases.get(key)
        if cached is not None:
            return cached
        out: list[Key] = []
        queue = [key]
        seen = {key}
        while queue:
            current = queue.pop(0)
            facts = self._class(current)
            if facts is None:
                continue
            for base in self._resolved_all(current[0], facts.bases):
                if base not in seen and self._class(base) is not None:
                    seen.add(base)
                    out.append(base)
                    queue.append(base)
        self._bases[key] = out
        return out

    # -- the question -------------------------------------------------------------------
    def prepare(self, starts: Iterable[Key]) -> None:
        """Find, for all ``starts`` at once, the project classes and functions that build them.

        A class carries weight norm applied in a start when it builds a carrier
        in its body (an attribute, a ``ModuleList`` member, a helper it calls)
        or inherits from one; a function carries it when it calls or returns
        one.  All starts of a run share the byte searches: a name is searched
        once per project, whichever start asked.  Which carriers a start has
        does not depend on the other starts (``carriers`` walks from it alone).
        """
        by_pool: dict[Path, list[Key]] = {}
        for start in starts:
            if start not in self._prepared:
                by_pool.setdefault(self._pool(start[0]).root, []).append(start)
        for root, group in by_pool.items():
            pool = self._pools[root]
            known: set[Key] = set(group)
            pending = {_short(k[1]) for k in group}
            self._interesting.update(pending)
            for key in group:
                self._prepared.add(key)
            names = set(pending)
            defined = {(k[0], _short(k[1])) for k in group}
            while pending:
                sources = [(f, n) for f, n in defined if n in pending]
                within = set().union(*(self._reach(pool, f, n) for f, n in sources))
                for f, n in sources:
                    aliases = pool.aliases.get((f, n), set())
                    self._aliases.setdefault(n, set()).update(aliases)
                    pending |= aliases - names  # ``S3Token2Wav as S3Gen``: the importers name it so
                    names |= aliases
                    self._interesting |= aliases
                self._search(pool, pending, within)
                pending = set()
                files = [
                    *(k[0] for k in group), *self._mentioning(pool, names), *self._config_users(group[0][0], known),
                    *self._typed_files(pool, known),
                ]
                files = list(dict.fromkeys(files))
                self._read_ahead(files)
                typing_users = [f for f in self._entry_typing_users(pool, names, known) if f not in files]
                self._read_ahead(typing_users)
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
        changed = False
        for key, reached in [*(((file, q), r) for q, r in self._units(file, names)), *self._holders(file, known)]:
            qual = key[1]
            children = reached & known
            for child in children:
                self._parents.setdefault(child, set()).add(key)
            if children and key not in known:
                known.add(key)
                defined.add((key[0], _short(qual)))
                self._prepared.add(key)
                short = _short(qual)
                if short not in names:
                    names.add(short)
                    pending.add(short)
                    self._interesting.add(short)
                changed = True
        return changed

    def _units(self, file: Path, names: set[str]) -> list[tuple[str, set[Key]]]:
        """The file's classes and functions, each with the project units named ``names`` it builds, inherits or returns."""
        facts = self.facts(file)
        if facts is None:
            return []
        units: list[tuple[str, set[Key]]] = []
        for qual, cls in facts.classes.items():
            units.append((qual, self._resolved_all(file, (*cls.builds, *cls.bases), names)))
        for qual, body in facts.functions.items():
            reached = self._resolved_all(file, body.callees, names)
            for returned in body.returns:
                reached |= self.instances(file, returned)
            units.append((qual, reached))
        return units

    def _typed_files(self, pool: _Pool, known: set[Key]) -> list[Path]:
        """Files that may keep a carrier as a constructor argument typed with a project base of it (shape d).

        A base that more than :data:`_MAX_TYPED_FILES` files annotate with (``PreTrainedModel``) says
        nothing about which model is kept, and is not followed: that also bounds the cost.
        """
        bases = {b for k in known if self._class(k) is not None for b in self.bases(k)} - known
        new = sorted(b for b in bases if (pool.root, b) not in self._typed_memo)
        if new:
            self._search(pool, {_short(b[1]) for b in new}, set().union(*(self._reach(pool, b[0], _short(b[1])) for b in new)))
            for base in new:
                name = _short(base[1])
                files = [f for f in self._mentioning(pool, {name}) if f != base[0] and _annotates(self._read(f) or b"", name)]
                self._typed_memo[(pool.root, base)] = files if len(files) <= _MAX_TYPED_FILES else []
        return [f for b in sorted(bases) for f in self._typed_memo[(pool.root, b)]]

    def _holders(self, file: Path, known: set[Key]) -> list[tuple[Key, set[Key]]]:
        """Classes the file constructs with a carrier as an ``__init__`` argument they keep (``Model(hift=HiFT())``),
        and classes that keep an ``__init__`` argument typed with a carrier's project base (``backbone: Backbone``)."""
        facts = self.facts(file)
        if facts is None:
            return []
        out = self._typed_holders(file, facts, known)
        for call in facts.helper_calls:
            children = {k for r in call.refs for k in self.instances(file, r)} & known
            for key in sorted(self._resolved_all(file, call.callee)) if children else ():
                if self._keeps(key, call.position, call.keyword):
                    out.append((key, children))
        return out

    def _keeps(self, key: Key, position: int, keyword: str) -> bool:
        """The class's ``__init__`` keeps the argument passed at ``position`` / as ``keyword`` (``self.hift = hift``)."""
        cls = self._class(key)
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
                children = self._resolved_all(file, names) & known  # the class named, not a base's every subclass
                if children:
                    out.append(((file, qual), children))
            init = cls.methods.get("__init__")
            if init is None or not init.annotations:
                continue
            kept = {r[2] for refs in cls.attrs.values() for r in refs if r[0] == "arg" and r[1] == qual}
            for param in sorted(kept & set(init.annotations)):
                children = self._typed(file, init.annotations[param], known)
                if children:
                    out.append(((file, qual), children))
        return out

    def carriers(self, start: Key) -> set[Key]:
        """``start`` and every project class or function that builds it, directly or through others."""
        self.prepare([start])
        out = {start}
        queue = [start]
        while queue:
            for parent in self._parents.get(queue.pop(), ()):
                if parent not in out:
                    out.add(parent)
                    queue.append(parent)
        return out

    def applied(self, start: Key, line: int) -> bool:
        """Does building the class apply the weight norm written at ``line``?

        An application in ``__init__`` (or a method it calls, or a helper
        function) does; one in a method only something else may call
        (``apply_weight_norm()`` for training, a conversion script) is not
        counted: the model as built and served has no weight norm from it.
        """
        cls = self._class(start)
        if cls is not None:
            method = next((b for b in cls.methods.values() if b.line <= line <= b.end_line), None)
            if method is not None and method.name not in _CONSTRUCTION and method.name not in self._constructed(start):
                return False
        # Under a test on a constructor parameter: only if some construction in the project can select it (asked
        # only where the class is served unfolded: reading the constructions parses the files that build it).
        return self.served(start) is None or self.selection.selected(start, line)

    def _constructed(self, start: Key) -> set[str]:
        """Names of the methods that building ``start`` or a class holding it runs (``__init__`` and what it calls)."""
        memo = self._construction.get(start)
        if memo is not None:
            return memo
        carriers = self.carriers(start)
        builders = {k for k in carriers if self._class(k) is not None}
        family = set(builders)
        for key in builders:
            family.update(self.bases(key))
        reached: set[str] = set()
        pending = set(_CONSTRUCTION)
        for key in carriers - builders:  # a factory building it: ``return CausalConvNet(...).weight_norm()``
            function = self._function(key)
            calls = function.calls - function.guarded if function is not None else set()
            reached |= calls
            pending |= calls
        while pending:
            name = pending.pop()
            for key in family:
                facts = self._class(key)
                body = facts.methods.get(name) if facts is not None else None
                if body is not None:
                    for called in body.calls - reached:
                        reached.add(called)
                        pending.add(called)
        self._construction[start] = reached
        return reached

    def served(self, start: Key) -> Served | None:
        """Where weight norm applied in ``start`` reaches inference unfolded (None: never, or folded)."""
        if start in self._verdicts:
            return self._verdicts[start]
        with provisional(self._verdicts, start, None):
            result = self._served(start)
        self._verdicts[start] = result
        return result

    def _served(self, start: Key) -> Served | None:
        self._modern = self.modern_only(start)
        pool = self._pool(start[0])
        carriers = self.carriers(start)
        classes = {k for k in carriers if self._class(k) is not None}
        if not classes:
            return None
        family = self._family(classes)
        folding = self._folding_methods(family)
        self._search(pool, folding)
        files = self._serving_files(start, pool, carriers, classes, folding)
        #: Folds of a model built in the same function (``model = Generator(); ...; fold(model)``): they fold that
        #: object only, so they cover the sites of that function, not those of another that builds its own.
        local: set[tuple[Path, int]] = set()
        #: Loaders whose result a caller folds (``model = load_model(p); fold(model)``): that fold covers the caller's
        #: sites and the loader's own, not those of another caller of the loader that serves it unfolded.
        loaders: set[Key] = set()
        found: list[tuple[Path, Use, frozenset[Key]]] = []
        for file in files:
            facts = self.facts(file)
            if facts is None:
                continue
            if self._folded_in(file, facts, carriers, folding, local, loaders):
                return None  # folded on the way
            found.extend(self._inference_sites(file, facts, carriers))
        entries = self._entry_sites(carriers)
        found.extend(entries)
        live = self._live_methods(files, self._fresh_removals(files, carriers, folding))
        parts = _parts_read(found)
        sites = [s for s in found if self._runs(start, s[1], s[2], carriers, parts)]
        if self._removal_method_called(family, folding, live):
            return None
        chained, why, ran = self._method_folds(start, files, carriers, family, folding, live, local, loaders)
        if chained:
            return None
        sites.extend(self._self_evaluations(family, classes, folding, carriers))
        # A site in the project's code first: an inherited library loader only where the code shows no other.
        sites.sort(key=lambda item: (item[1].kind == "inherited", str(item[0]), item[1].line, item[1].column))
        sites = self._uncovered(sites, local, entries, loaders)
        if not sites:
            return None
        served = [self._served_at(start, site, files, carriers, family, folding, live, why, ran) for site in sites]
        return dataclasses.replace(served[0], others=tuple(served[1:]))

    def _served_at(
        self, start: Key, site: tuple[Path, Use, frozenset[Key]], files: list[Path], carriers: set[Key], family: set[Key],
        folding: set[str], live: set[str], why: str, ran: "set[tuple[Key, str]] | None" = None,
    ) -> Served:
        """The verdict for one inference site: what removal nobody calls there, why a candidate fold does not count."""
        file, use, reached = site
        uncalled = self._uncalled(reached, family, folding, live, ran or set())
        if ran and uncalled and why and "nothing calls" not in why:
            why += f", and `{uncalled}` exists but nothing calls it"  # the later step, forgotten (CosyVoice3)
        why = why or self._why_not_folded(start, files, carriers, family, folding, bool(uncalled))
        removal = self._removal_at(file, use, carriers, family, folding)
        return Served(file, use, uncalled, _short(start[1]), why, self._part_target(use, reached, carriers), removal=removal)

    def _removal_at(self, file: Path, use: Use, carriers: set[Key], family: set[Key], folding: set[str]) -> str:
        """A removal of a carrier, of either spelling, that the site's function already runs, or may run under a
        configuration flag: a fold added beside it would make one of the two raise."""
        facts = self.facts(file)
        facts = self._unflagged.get(file, facts)
        if facts is None:
            return ""
        for fold in facts.folds:
            if fold.scope == use.scope and not (fold.partial or fold.excluded) and self._fold_reaches(file, fold.refs, carriers):
                return fold.what  # a partial one folds what it reaches, once: a full fold beside it is safe
        removers = set(folding) | {
            name for key in family if (cls := self._class(key)) is not None for name, body in cls.methods.items() if body.folds
        }
        for refs, name, scope, _, caller in facts.method_calls:
            if scope == use.scope and not caller and name in removers and self._reaches(file, refs, carriers):
                return f"{use.target or 'model'}.{name}()"
        return ""

    def _uncovered(
        self, sites: list[tuple[Path, Use, frozenset[Key]]], local: set[tuple[Path, int]],
        entries: "list[tuple[Path, Use, frozenset[Key]]] | None" = None, loaders: "set[Key] | None" = None,
    ) -> list[tuple[Path, Use, frozenset[Key]]]:
        """The sites no fold covers, one per function that builds its own model, in order: each gets its own fold.

        A site whose model its function builds (a class called, a config or a
        registry instantiated) is covered only by a fold in that same function:
        two loaders that each build the model are two models.  A site whose
        model comes from elsewhere (a loader's result, an attribute) is covered
        by any fold of the model, as the fold may be where it came from; such
        sites are reported (one) only where no function building its own is.
        A fold of a loader's result in a caller (``loaders``) covers the
        loader's own sites and the caller's, not a site of another caller that
        takes the model from that loader: that one is reported on its own.
        """
        fresh: dict[tuple[Path, int], tuple[Path, Use, frozenset[Key]]] = {}
        other: list[tuple[Path, Use, frozenset[Key]]] = []
        spans = self._loader_spans(loaders or set())
        for site in sites:
            file, use, _ = site
            if self.excluded(file) or any(f == file and first <= use.line <= last for f, first, last in spans):
                continue  # a loader class in an excluded file: not named, not fixed; a loader a caller folds
            if self._own_model(file, use, loaders or set()):
                if (file, use.scope) not in local:
                    fresh.setdefault((file, use.scope), site)
            elif not local:
                other.append(site)
        found = list(fresh.values()) or other[:1]
        return self._at_entries(found, [s for s in sites if s in (entries or ()) and s not in found], local) if entries else found

    def _own_model(self, file: Path, use: Use, loaders: set[Key]) -> bool:
        """The site's function builds its model, or takes it from a loader whose result a caller folds: a fold
        elsewhere is of another object, so only one in that function covers it."""
        if use.kind == "inherited" or not use.refs:
            return False
        if all(self._fresh(file, ref) for ref in use.refs):
            return True
        from_loader = self._loader_result(file, use.refs) if loaders else set()
        return bool(from_loader) and from_loader <= loaders

    def _at_entries(
        self, found: list[tuple[Path, Use, frozenset[Key]]], entries: list[tuple[Path, Use, frozenset[Key]]],
        local: set[tuple[Path, int]],
    ) -> list[tuple[Path, Use, frozenset[Key]]]:
        """Declared entries take the fold: an entry returning a model no fold covers is reported there, and a site
        in a function the entry calls (the loader it returns from) gives way to it: one fold, at the entry."""
        placed = {(s[0], s[1].scope) for s in found}  # a site of the entry itself already takes the fold
        live = [
            s for s in entries if (s[0], s[1].scope) not in local | placed and not (local and not self._all_fresh(s[0], s[1].refs))
        ]
        if not live:
            return found
        called = {key for file, _, body in self.entry_bodies() for key in self._resolved_all(file, body.callees)}
        spans = [(k[0], b.line, b.end_line) for k in called if (b := self._function(k)) is not None]
        kept = [s for s in found if not any(s[0] == f and first <= s[1].line <= last for f, first, last in spans)]
        return [*live, *(s for s in kept if s not in live)]

    def _loader_result(self, file: Path, refs: Iterable[Ref]) -> set[Key]:
        """The project functions ``refs`` are all results of (``load_model(path)``); empty where one is something else."""
        found: set[Key] = set()
        for ref in refs:
            hit = self.lookup(file, ref[1]) if ref[0] == "new" else None
            if hit is None or hit[1] or self._function(hit[0]) is None:
                return set()
            found.add(hit[0])
        return found

    def _loader_spans(self, loaders: set[Key]) -> list[tuple[Path, int, int]]:
        """The lines of the folded loaders and of the project functions they return the result of, transitively."""
        spans: list[tuple[Path, int, int]] = []
        queue, seen = sorted(loaders), set(loaders)
        while queue:
            key = queue.pop()
            body = self._function(key)
            if body is None:
                continue
            spans.append((key[0], body.line, body.end_line))
            for inner in self._loader_result(key[0], body.returns) - seen if body.returns else ():
                seen.add(inner)
                queue.append(inner)
        return spans

    def _fresh(self, file: Path, ref: Ref) -> bool:
        """``ref`` is a model built where it is used: a project class called, a config or registry instantiated."""
        if ref[0] in ("conf", "registry", "members") or (ref[0] == "sub" and len(ref) > 2 and ref[2] == "conf"):
            return True
        if ref[0] != "new":
            return False
        found = self.lookup(file, ref[1])
        return found is not None and not found[1] and self._class(found[0]) is not None

    def _fresh_removals(self, files: list[Path], carriers: set[Key], folding: set[str]) -> set[tuple[Path, str, int]]:
        """Removal methods called, outside methods, only on models built in the calling function: (file, name, scope)."""
        out: set[tuple[Path, str, int]] = set()
        for file in files:
            facts = self.facts(file)
            calls = facts.method_calls if facts is not None else []
            mixed = {(name, scope) for refs, name, scope, _, caller in calls if not caller and not self._all_fresh(file, refs)}
            out |= {
                (file, name, scope) for refs, name, scope, _, caller in calls
                if not caller and name in folding and (name, scope) not in mixed and self._reaches(file, refs, carriers)
            }
        return out

    def _fold_reaches(self, file: Path, refs: Iterable[Ref], carriers: set[Key]) -> bool:
        """A fold API given a carrier: ``fold(model.dec)`` reaches what ``dec`` holds, not the siblings the served
        forward also runs; a member that resolves to nothing stands for its owner, as before."""
        for ref in refs:
            found = self.instances(file, ref)
            while not found and ref[0] == "sub" and len(ref) > 2:
                ref = tuple(ref[2:])
                found = self.instances(file, ref)
            if found & carriers:
                return True
        return False

    def _excluded_elsewhere(self, file: Path, use: Use, carriers: set[Key]) -> bool:
        """Is every member a partial fold's ``exclude=`` names known, and none of them holds a carrier?

        A member the index cannot resolve may hold the site: the fold is then not taken for one.
        """
        for ref in use.refs:
            for name in use.excluded:
                held = self.instances(file, ("sub", name, *ref))
                if not held or held & carriers:
                    return False
        return True

    @staticmethod
    def _owner_ref(ref: Ref) -> Ref:
        """The model a member reference belongs to (``model`` of ``model.dec``)."""
        while ref[0] == "sub" and len(ref) > 2:
            ref = tuple(ref[2:])
        return ref

    def _all_fresh(self, file: Path, refs: Iterable[Ref]) -> bool:
        refs = tuple(refs)
        return bool(refs) and all(self._fresh(file, ref) for ref in refs)

    def _why_not_folded(
        self, start: Key, files: list[Path], carriers: set[Key], family: set[Key], folding: set[str], uncalled: bool,
    ) -> str:
        """The message's evidence: a fold that runs only in training, one under a flag nobody passes, or what was sought."""
        why = self._in_training_only(files, carriers, folding) or self._flag_guarded(family, folding) or self._partial(files, carriers)
        if why or uncalled:
            return why
        return (
            f"nothing folds `{_short(start[1])}` on the way (looked for: a removal method called on it, a remover or "
            "`wnaudit.fold_weight_norm` on it or on each of its `modules()`, a project function given it that folds it)"
        )

    def _serving_files(self, start: Key, pool: _Pool, carriers: set[Key], classes: set[Key], folding: set[str]) -> list[Path]:
        """The files that may serve or fold a carrier, tests left out, parsed (ahead, in the workers, where there are).

        Those that name a carrier or a removal method, instantiate from configs
        that build one, or fetch one by name from a module; then, once those are
        read, the files that build one from a registry they fill.
        """
        names = {_short(k[1]) for k in carriers} | folding
        names |= {a for n in list(names) for a in self._aliases.get(n, ())}
        files = [start[0], *self._mentioning(pool, names), *self._config_users(start[0], carriers), *self._choosers(pool, classes)]
        files = [f for f in dict.fromkeys(files) if not is_test_file(f)]
        self._read_ahead(files)
        extra = [f for f in self._registry_users(pool, classes, files) if f not in files and not is_test_file(f)]
        self._read_ahead(extra)
        return files + list(dict.fromkeys(extra))

    def _part_target(self, use: Use, reached: frozenset[Key], carriers: set[Key]) -> str:
        """``model["decoder"]`` where the site's model is a mapping of parts: the fold API takes a module, not a dict."""
        if not reached or not all(is_container(key) for key in reached):
            return ""
        root = use.target.rsplit("[", 1)[0] if use.target.endswith("]") else use.target
        for key in sorted(reached):
            cls = self._class(key)
            children = [c for c in carriers if key in self._parents.get(c, set())]
            for name, refs in sorted(cls.attrs.items()) if cls is not None else ():
                if name != "*" and any(_names(r, c) or c in self.instances(key[0], r) for r in refs for c in children):
                    return f'{root}["{name}"]'
        return root

    def _family(self, classes: set[Key]) -> set[Key]:
        """The classes and every project class they inherit from."""
        family = set(classes)
        for key in classes:
            family.update(self.bases(key))
        return family

    def _reaches(self, file: Path, refs: Iterable[Ref], carriers: set[Key]) -> bool:
        return any(self.instances(file, r) & carriers for r in refs)

    def _folded_in(
        self, file: Path, facts: ServingFacts, carriers: set[Key], folding: set[str],
        local: "set[tuple[Path, int]] | None" = None, loaders: "set[Key] | None" = None,
    ) -> bool:
        """Does the file fold a carrier: a fold API on it, a fold helper given it, or its removal method called?

        ``local``: where given, a fold of a model built in the same function is recorded there (it covers
        that function's sites only) instead of counting as a fold of every instance.
        """
        for use in facts.folds:
            if (use.legacy and self._modern) or use.partial:
                continue  # the legacy remover on the modern spelling raises (WN101); a loop skipping parts leaves them
            if use.scope not in facts.training_scopes and self._fold_reaches(file, use.refs, carriers):
                if use.excluded and not self._excluded_elsewhere(file, use, carriers):
                    continue  # ``exclude=`` leaves the part that holds the site (or one the index cannot place)
                if not self._folds_here(file, [self._owner_ref(r) for r in use.refs], use.scope, local, loaders):
                    return True
        for call in facts.helper_calls:
            if call.scope not in facts.training_scopes and self._helper_folds(file, call, carriers, folding):
                if not self._folds_here(file, call.refs, call.scope, local, loaders):
                    return True
        return False

    def _folds_here(
        self, file: Path, refs: Iterable[Ref], scope: int, local: "set[tuple[Path, int]] | None", loaders: "set[Key] | None",
    ) -> bool:
        """A fold of a model its function builds, or of a loader's result: recorded as covering that function's sites
        (and the loader's, in ``loaders``), True; False where it covers every site (or no record is kept)."""
        refs = tuple(refs)
        if local is None:
            return False
        if self._all_fresh(file, refs):
            local.add((file, scope))
            return True
        from_loader = self._loader_result(file, refs) if loaders is not None and refs else set()
        if from_loader and loaders is not None:
            local.add((file, scope))
            loaders |= from_loader
            return True
        return False

    def _helper_folds(self, file: Path, call: HelperCall, carriers: set[Key], folding: set[str]) -> bool:
        """A project function given a carrier folds it (``remove_weight_norm_recursively(model)``)."""
        if not self._reaches(file, call.refs, carriers):
            return False
        if any(self._function_folds(k, folding) for k in self._resolved_all(file, call.callee, self._helpers_of(file))):
            return True
        callees = self._resolved_all(file, call.callee) if call.position >= 0 or call.keyword else set()
        return any(
            self.summaries.folds(k, call.position, folding) if call.position >= 0
            else self.summaries.folds_keyword(k, call.keyword, folding) for k in callees
        )

    def _method_folds(
        self, start: Key, files: list[Path], carriers: set[Key], family: set[Key], folding: set[str], live: set[str],
        local: "set[tuple[Path, int]] | None" = None, loaders: "set[Key] | None" = None,
    ) -> tuple[bool, str, set[tuple[Key, str]]]:
        """A removal method called on a carrier by code that runs (``model.remove_weight_norm()``).

        A call inside a method runs when that method does: it is called from
        code outside methods, Python or torch call it (``__init__``,
        ``forward``), a call on an unknown receiver names it (``live``), or a
        counted call names it on an instance of the calling class.  Fixpoint
        over the calls, so chains of any length (and cycles) are followed.
        The second value names a removal call on a carrier that does not count
        because the method holding it never runs, or a removal method that runs
        and leaves the part holding ``start`` for a later step nothing calls
        (the CosyVoice3 F0 predictor); "" when there is none.  The
        third: those partial removal methods (class, name), which do run.
        """
        pending: list[tuple[Path, tuple[Ref, ...], str, int, str, str]] = []
        for file in files:
            facts = self.facts(file)
            if facts is not None:
                pending.extend((file, *call) for call in facts.method_calls if call[2] not in facts.training_scopes)
        invoked: set[tuple[str, str]] = set()
        #: Methods called on receivers the index cannot resolve (``self.hparams.generator``): any class's.
        anyone: set[str] = set(live)
        #: Only calls of methods that hold calls need their receivers resolved, and only to those classes:
        #: their names join the carrier names ``instances`` resolves, so the answer is the same whatever
        #: else the run has prepared.
        pairs = {(call[4], call[5]) for call in pending if call[5]}
        callers = {method for _, method in pairs}
        self._interesting.update(_short(qual) for qual, _ in pairs)
        waiting = _Waiting(pending)
        partial: dict[tuple[Key, str], str] = {}
        changed = True
        while changed:
            changed = False
            for call in waiting.current():
                file, refs, name, _, caller_class, caller = call
                if caller and caller not in catalogue.IMPLICITLY_CALLED_METHODS and caller not in anyone and (
                    (caller_class, caller) not in invoked
                ):
                    continue
                waiting.remove(call)
                changed = True
                if name in folding and self._removal_folds(start, call, carriers, family, (local, loaders), partial):
                    return True, "", set()
                if name in callers:
                    self._note_invoked(file, refs, name, pairs, invoked, anyone)
        why = self._blocked(waiting.current(), carriers, folding) or next(iter(partial.values()), "")
        return False, why, set(partial)

    def _removal_folds(
        self, start: Key, call: tuple[Path, tuple[Ref, ...], str, int, str, str], carriers: set[Key], family: set[Key],
        kept: "tuple[set[tuple[Path, int]] | None, set[Key] | None]", partial: dict[tuple[Key, str], str],
    ) -> bool:
        """A removal call that runs folds ``start`` everywhere (True), or is recorded as partial, or as local
        (``kept``: the local folds and the folded loaders, where kept)."""
        left = self._leaves_live(start, call, carriers, family)
        partial.update(left)
        return not left and self._folds_every_instance(call, carriers, family, *kept)

    def _leaves_live(
        self, start: Key, call: tuple[Path, tuple[Ref, ...], str, int, str, str], carriers: set[Key], family: set[Key],
    ) -> dict[tuple[Key, str], str]:
        """The message's evidence where a removal method called on a carrier never reaches the part that holds
        ``start`` (``HiFT.remove_weight_norm()`` folds ``ups`` and leaves ``f0_predictor``), by (class, method);
        empty where it may reach it.

        Only a carrier that holds ``start`` in attributes the code names: the
        method (with the methods of ``self`` it calls) reads none of them and
        hands ``self`` to nothing, nor walks ``self.modules()``/``apply()``.
        """
        file, refs, name, _, _, _ = call
        receivers = {(file, r[1]) for r in refs if r[0] == "self" and (file, r[1]) in family}
        receivers |= {k for r in refs if r[0] != "self" for k in self.instances(file, r) if k in carriers}
        left: dict[tuple[Key, str], str] = {}
        for key in sorted(receivers):
            parts = self._parts_left(start, key, name, carriers)
            if not parts:
                return {}
            left[(key, name)] = f"`{_short(key[1])}.{name}()` runs but never reaches {parts}, where `{_short(start[1])}` sits"
        return left

    def _parts_left(self, start: Key, key: Key, name: str, carriers: set[Key]) -> str:
        """The attributes of a ``key`` instance holding ``start`` that its method ``name`` leaves ("": none, or not known)."""
        family = [key, *self.bases(key)]
        if start in family:
            return ""
        view = self.class_view(key)
        read = view.executed((f"{name}()",), whole=_SELF_WHOLE)
        if read is None:
            return ""
        keys = set(family)
        left: set[str] = set()
        for child in (c for c in carriers if c not in keys and self._parents.get(c, set()) & keys):
            if _short(child[1]) in view.loose:
                return ""  # built other than as one attribute's value: where it sits is not known
            holding = {
                attr for attr, refs in view.attrs.items()
                if any(_names(ref, child) or child in self.instances(file, ref) for file, ref in refs)
            }
            if not holding or "*" in holding or holding & read:
                return ""
            left |= holding
        return " and ".join(f"`{attr}`" for attr in sorted(left))

    def _folds_every_instance(
        self, call: tuple[Path, tuple[Ref, ...], str, int, str, str], carriers: set[Key], family: set[Key],
        local: "set[tuple[Path, int]] | None", loaders: "set[Key] | None" = None,
    ) -> bool:
        """A removal call that runs folds a carrier wherever it is served; one on a model its function builds (outside
        methods), or on a loader's result, folds that model only, and is recorded in ``local`` instead (where kept)."""
        file, refs, _, scope, _, caller = call
        if not self._call_reaches(file, refs, carriers, family):
            return False
        return bool(caller) or not self._folds_here(file, refs, scope, local, loaders)

    def _note_invoked(
        self, file: Path, refs: tuple[Ref, ...], name: str, pairs: set[tuple[str, str]], invoked: set[tuple[str, str]],
        anyone: set[str],
    ) -> None:
        """Record that ``name`` runs on the classes ``refs`` stand for (and their bases), or on any class."""
        receivers = {k for r in refs for k in self.instances(file, r)}
        if not receivers and all(self._unresolved(file, r) for r in refs):
            anyone.add(name)  # ``self.hparams.generator.remove_weight_norm()``: whose, the code does not say
        for key in receivers:
            invoked.update((k[1], name) for k in (key, *self.bases(key)) if (k[1], name) in pairs)

    def _call_reaches(self, file: Path, refs: tuple[Ref, ...], carriers: set[Key], family: set[Key]) -> bool:
        """A call's receiver is a carrier; ``self`` in a method of the carriers' classes or their bases counts too."""
        own = [r for r in refs if r[0] == "self"]
        return any((file, r[1]) in family for r in own) or self._reaches(file, [r for r in refs if r[0] != "self"], carriers)

    def _blocked(self, pending: list[tuple[Path, tuple[Ref, ...], str, int, str, str]], carriers: set[Key], folding: set[str]) -> str:
        """The message's evidence: a removal call on a carrier inside a method that never runs."""
        for file, refs, name, _, caller_class, caller in pending:
            if name in folding and self._reaches(file, [r for r in refs if r[0] != "self"], carriers):
                method = f"{_short(caller_class)}.{caller}()"
                return f"`{method}` calls `.{name}()` on it, but nothing calls `{method}`"
        return ""

    def _inference_sites(self, file: Path, facts: ServingFacts, carriers: set[Key]) -> list[tuple[Path, Use, frozenset[Key]]]:
        """The file's inference sites on a carrier, outside training and folding functions."""
        sites: list[tuple[Path, Use, frozenset[Key]]] = []
        if self.excluded(file):
            return sites  # the user's excludes: never named as the inference site, never given a fold
        for use in facts.inference:
            if (
                use.scope in facts.training_scopes or use.scope in facts.folding_scopes or use.scope in facts.saving_scopes
                or (use.scope in facts.legacy_folding_scopes and not self._modern)
                or self._smoke_test(file, facts, use)
            ):
                continue
            reached = frozenset(k for r in use.refs for k in self.instances(file, r) if k in carriers)
            if reached:
                sites.append((file, use, reached))
        return sites

    def _smoke_test(self, file: Path, facts: ServingFacts, use: Use) -> bool:
        """The module's own ``__main__`` smoke test of a class it defines: test code, not an inference path.

        The site is in the module's ``if __name__ == "__main__":`` block, or in a
        module-level function only that block names (and no other project file
        that can reach it); every model it is about is built from a class of the
        same module.  A script evaluating a model imported from elsewhere stays
        an inference path.
        """
        if use.scope == 0:
            inside = any(first <= use.line <= last for first, last in facts.main_lines)
        else:
            name = next((n for n, numbers in facts.smoke_scopes.items() if use.scope in numbers), "")
            inside = bool(name) and not self._named_elsewhere(file, name)
        return inside and bool(use.refs) and all(self._own_class(file, ref) for ref in use.refs)

    def _own_class(self, file: Path, ref: Ref) -> bool:
        """``ref`` is an instance of a class ``file`` itself defines (``Model()``, ``Model.from_pretrained(...)``)."""
        if ref[0] != "new":
            return False
        found = self.lookup(file, ref[1])
        return found is not None and found[0][0] == file and self._class(found[0]) is not None

    def _named_elsewhere(self, file: Path, name: str) -> bool:
        """Another project file that can reach ``file``'s ``name`` through imports names it."""
        reach = self._reach(self._pool(file), file, name)
        return any(other != file and self._mentions(other, name) for other in reach)

    def _in_training_only(self, files: list[Path], carriers: set[Key], folding: set[str]) -> str:
        """The message's evidence: a fold that runs only in training code, on the training copy of the model.

        A function that trains (an optimizer, ``backward()``, ``train()``) folds
        the model it trained, for export or a last check; the model the
        inference path builds and loads is another object, still unfolded.
        """
        for file in files:
            facts = self.facts(file)
            if facts is None or not facts.training_scopes:
                continue
            for what, scope in self._training_folds(file, facts, carriers, folding):
                where = facts.training_names.get(scope, "")
                name = f"`{where.rpartition('.')[2]}()`" if scope and where else "module-level training code"
                return f"{what} runs only in {name}, which trains: it folds the training copy, not the model served"
        return ""

    def _training_folds(self, file: Path, facts: ServingFacts, carriers: set[Key], folding: set[str]) -> Iterable[tuple[str, int]]:
        """Folds of a carrier made in the file's training functions: (the fold as a message quotes it, its function)."""
        for use in facts.folds:
            if use.scope in facts.training_scopes and self._fold_reaches(file, use.refs, carriers):
                yield (use.what if use.what.startswith("`") else f"`{use.what}`"), use.scope
        for call in facts.helper_calls:
            if call.scope in facts.training_scopes and call.callee and self._helper_folds(file, call, carriers, folding):
                yield f"`{call.callee[0].rpartition('.')[2]}(...)` on it", call.scope
        for refs, name, scope, _, _ in facts.method_calls:
            if scope in facts.training_scopes and name in folding and self._reaches(file, [r for r in refs if r[0] != "self"], carriers):
                yield f"`.{name}()` on it", scope
        for name, _, scope in sorted(facts.attribute_calls):
            if scope in facts.training_scopes and name in folding:
                yield f"`.{name}()`", scope

    def _partial(self, files: list[Path], carriers: set[Key]) -> str:
        """The message's evidence: a fold in a loop over the model's parts that skips some of them."""
        for file in files:
            facts = self.facts(file)
            for use in facts.folds if facts is not None else ():
                if (use.partial or use.excluded) and self._fold_reaches(file, use.refs, carriers):
                    what = use.what if use.what.startswith("`") else f"`{use.what}`"
                    if use.excluded or use.partial.startswith(f"{catalogue.PARTIAL_FOLD_KEYWORD}="):
                        left = ", ".join(f"`{name}`" for name in use.excluded) or f"`{use.partial}`"
                        return f"{what} leaves {left} live, and nothing folds it later"
                    return f"{what} runs only where `{use.partial}`: the other parts stay live"
        return ""

    def _flag_guarded(self, family: set[Key], folding: set[str]) -> str:
        """The message's evidence: a removal a method of the family makes only under a flag nobody passes."""
        for key in sorted(family):
            facts = self.facts(key[0])
            cls = facts.classes.get(key[1]) if facts is not None else None
            if facts is None or cls is None:
                continue
            for name, method, flag in sorted(facts.guarded_calls):
                if name in folding and method in cls.methods:
                    owner = f"{_short(key[1])}.{method}()"
                    return f"`{owner}` calls `.{name}()` only under `if {flag}:`, and no call passes `{flag}=True`"
        return ""

    def _unresolved(self, file: Path, ref: Ref) -> bool:
        """No project class or function is known to stand behind ``ref`` (not merely: none that carries weight norm)."""
        if ref[0] == "new":
            return self.lookup(file, ref[1]) is None
        if ref[0] == "attr":
            facts = self.facts(file)
            owner = facts.classes.get(ref[1]) if facts is not None else None
            values = owner.attrs.get(ref[2]) if owner is not None else None
            # ``self.model = model`` in ``__init__``: unresolved while no construction shows what it is given
            return not values or all(v[0] == "arg" and not self.instances(file, v) for v in values)
        if ref[0] == "sub":
            return self._unresolved(file, tuple(ref[2:]))
        return True

    def _runs(
        self, start: Key, use: Use, reached: frozenset[Key], carriers: set[Key], parts: "dict[Key, set[str]] | None" = None,
    ) -> bool:
        """Does the inference entry at ``use`` execute the weight norm applied in ``start``?

        The model runs what the code around the site uses of it; a carrier
        held only in attributes nothing on that path reads (discriminators
        beside the generator in a training module) is never executed.
        Where the code does not show what runs, everything held counts; but a
        mapping of parts put in eval mode whole (``[model[k].eval() for k in
        model]``) runs the parts that the project's inference code reads of it
        elsewhere, where some does (shape d: ``parts``).
        """
        if use.kind == "capture":
            return True
        if use.whole:
            known = parts or {}
            if not reached or not all(key in known for key in reached):
                return True
            return any(self._class_runs(start, key, tuple(sorted(known[key])), carriers) for key in sorted(reached))
        return any(self._class_runs(start, key, use.members, carriers) for key in sorted(reached))

    def class_view(self, key: Key) -> ClassView:
        """A class with its project bases, as the question "what does running it execute?" needs it."""
        return ClassView([(k, c) for k in (key, *self.bases(key)) if (c := self._class(k)) is not None])

    def _class_runs(self, start: Key, key: Key, members: tuple[str, ...], carriers: set[Key]) -> bool:
        family = [key, *self.bases(key)]
        if start in family:
            return True
        view = self.class_view(key)
        read = view.executed(members)
        if read is None:
            return True
        keys = set(family)
        children = [c for c in carriers if c not in keys and self._parents.get(c, set()) & keys]
        for child in children:
            if _short(child[1]) in view.loose:
                return True  # built other than as one attribute's value: where it sits is not known
            holding = {
                name for name, refs in view.attrs.items()
                if any(_names(ref, child) or child in self.instances(file, ref) for file, ref in refs)
            }
            if not holding or holding & read or ("*" in holding and read):
                return True  # ``"*"``: a mapping entry under a key not written, any key read may be it
        return not children

    def _removal_method_called(self, family: set[Key], folding: set[str], live: set[str]) -> bool:
        """A removal method of the family that something calls folds the model."""
        for key in sorted(family):
            cls = self._class(key)
            for name in sorted(cls.methods) if cls is not None else ():
                if name in folding and name in live and self._defines_fold(key, name, folding):
                    return True
        return False

    def _self_evaluations(
        self, family: set[Key], classes: set[Key], folding: set[str], carriers: set[Key],
    ) -> list[tuple[Path, Use, frozenset[Key]]]:
        """A loader classmethod that evaluates what it builds, or a constructor that evaluates ``self``, folding neither.

        A loader folds when it calls a fold API or a project function that folds (WN110's local fold).
        """
        sites: list[tuple[Path, Use, frozenset[Key]]] = []
        for key in sorted(family):
            cls = self._class(key)
            for body in cls.methods.values() if cls is not None else ():
                if body.evaluates and not self._body_folds(body) and not any(
                    self._function_folds(k, folding) for k in self._resolved_all(key[0], body.callees)
                ):  # a loader that folds what it loads is fine
                    sites.append((key[0], self._loader_site(key[0], body.evaluates, carriers), frozenset(classes)))
                if body.evaluates_self is not None and body.name in _CONSTRUCTION and not self._body_folds(body):
                    sites.append((key[0], body.evaluates_self, frozenset(classes)))  # frozen by its own constructor
            inherited = self._inherited_loader(key, cls) if cls is not None else None
            if inherited is not None:
                sites.append((key[0], inherited, frozenset(classes)))
        return sites

    def _inherited_loader(self, key: Key, cls: ClassFacts) -> Use | None:
        """A library base whose inherited ``from_pretrained`` evaluates what it loads (shape d: ``PreTrainedModel``).

        Only a base outside the project: a project's own ``from_pretrained`` is
        read as code, like any loader.  The site is the class itself; the load
        happens in the library, so no statement of the project follows it.
        """
        if catalogue.OWN_LOADING_METHODS & cls.methods.keys():
            return None  # the class loads through its own code, read like any loader
        for base in cls.bases:
            if base in catalogue.EVAL_LOADING_BASES and not self._resolved_all(key[0], (base,)):
                name = _short(key[1])
                what = f"`{name}.from_pretrained(...)`, inherited from `{_short(base)}`, which calls `eval()`"
                return Use(cls.line, 1, what, (), 0, "", "inherited")
        return None

    def _loader_site(self, file: Path, evaluations: list[Use], carriers: set[Key]) -> Use:
        """Which of a loader's ``eval()`` calls the finding names, and so the fold after it folds (chatterbox's
        ``from_local`` evaluates ``ve`` first, the carrier later): the one of a carrier; else one of a model
        the index cannot name (``model = cls(...)``: what the loader builds); else the first."""
        for use in evaluations:
            if any(self.instances(file, r) & carriers for r in use.refs):
                return use
        for use in evaluations:
            if not use.refs or any(self._unresolved(file, r) for r in use.refs):
                return use
        return evaluations[0]

    # -- folds ------------------------------------------------------------------------
    def _folding_methods(self, family: set[Key]) -> set[str]:
        """Names of the methods in ``family`` that fold: they call a remover, or a method of that name that does."""
        names: set[str] = set()
        helpers = self._helpers_of(next(iter(family))[0]) if family else frozenset()
        changed = True
        while changed:
            changed = False
            for key in family:
                cls = self._class(key)
                for name, body in cls.methods.items() if cls is not None else ():
                    if name in names:
                        continue
                    if self._body_folds(body) or (body.calls - body.guarded) & names or any(
                        self._function_folds(k, names) for k in self._resolved_all(key[0], body.callees, helpers)
                    ):
                        names.add(name)
                        changed = True
        return names

    def _defines_fold(self, key: Key, name: str, folding: set[str]) -> bool:
        cls = self._class(key)
        body = cls.methods.get(name) if cls is not None else None
        return body is not None and (self._body_folds(body) or bool((body.calls - body.guarded) & folding) or any(
            self._function_folds(k, folding) for k in self._resolved_all(key[0], body.callees, self._helpers_of(key[0]))
        ))

    def _body_folds(self, body: Body) -> bool:
        """The body calls a remover or fold API that can fold this start's spelling (the legacy one cannot fold
        the modern: it raises, however a ``try`` hides it)."""
        return body.folds_modern if self._modern else body.folds

    def _function_folds(self, key: Key, folding: set[str], depth: int = 0) -> bool:
        body = self._function(key)
        if body is None or depth > 8:
            return False
        if self._body_folds(body) or (body.calls - body.guarded) & folding:
            return True
        helpers = self._helpers_of(key[0])
        return any(
            self._function_folds(k, folding, depth + 1) for k in self._resolved_all(key[0], body.callees, helpers) if k != key
        )

    def _helpers_of(self, file: Path) -> frozenset[str]:
        """Names of the project's fold helpers: functions that call a remover or a fold API (found by a byte search)."""
        pool = self._pool(file)
        found = self._fold_helpers.get((pool.root, self._modern))
        if found is None:
            self._search(pool, _FOLD_WORDS)
            names: set[str] = set()
            paths = self._mentioning(pool, set(_FOLD_WORDS))
            self._read_ahead(paths)
            for path in paths:
                facts = self.facts(path)
                for qual, body in facts.functions.items() if facts is not None else ():
                    if self._body_folds(body):
                        names.add(_short(qual))
            found = self._fold_helpers[(pool.root, self._modern)] = frozenset(names)
        return found

    def _live_methods(self, files: list[Path], skip: "set[tuple[Path, str, int]] | None" = None) -> set[str]:
        """Method names something calls: from code outside methods, or from methods that are themselves live.

        ``skip``: calls (file, name, function) made only on a model that function builds (``_fresh_removals``):
        they fold that model, which ``_method_folds`` tells apart, not any instance.
        """
        calls: set[tuple[str, str]] = set()
        guarded: set[tuple[str, str, str]] = set()
        flags: set[tuple[str, str]] = set()
        for file in files:
            facts = self.facts(file)
            if facts is not None:
                calls |= {
                    (name, caller) for name, caller, scope in facts.attribute_calls
                    if scope not in facts.training_scopes and (file, name, scope) not in (skip or ())
                }
                guarded |= facts.guarded_calls
                flags |= facts.flag_calls
        # A call under ``if flag:`` runs when some call of its method passes ``flag=True``.
        calls |= {(name, caller) for name, caller, flag in guarded if (caller, flag) in flags}
        live: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, caller in calls:
                if name in live:
                    continue
                if caller == "" or caller in catalogue.IMPLICITLY_CALLED_METHODS or (caller in live and caller != name):
                    live.add(name)
                    changed = True
        return live

    def _uncalled(
        self, reached: frozenset[Key], family: set[Key], folding: set[str], live: set[str], ran: "set[tuple[Key, str]]",
    ) -> str:
        """A removal method of the model nothing calls (``ran``: partial ones that do run, not named)."""
        for group in (sorted(reached), sorted(family - reached)):
            for key in group:
                cls = self._class(key)
                for name in sorted(cls.methods) if cls is not None else ():
                    if name in folding and name not in live and (key, name) not in ran and self._defines_fold(key, name, folding):
                        return f"{_short(key[1])}.{name}()"
        return ""


class _Waiting(Generic[_T]):
    """A list whose ``remove`` drops the first equal item, as ``list.remove`` does, without comparing the items before it.

    ``_method_folds`` removes each call as its method is found to run; its calls start
    with a ``Path``, whose comparison runs in Python, and a big project holds thousands.
    """

    def __init__(self, items: list[_T]) -> None:
        self._items = items
        self._alive = [True] * len(items)
        self._at: dict[_T, collections.deque[int]] = {}
        for position, item in enumerate(items):
            self._at.setdefault(item, collections.deque()).append(position)

    def current(self) -> list[_T]:
        """The items not removed, in their order."""
        return [item for item, alive in zip(self._items, self._alive) if alive]

    def remove(self, item: _T) -> None:
        self._alive[self._at[item].popleft()] = False


_QUOTES = frozenset(b"'\"")
#: Last parts of ``catalogue.CONFIG_INSTANTIATORS``: a file that calls one is read when a config builds a carrier.
_INSTANTIATE_WORDS = tuple(sorted({name.rpartition(".")[2] for name in catalogue.CONFIG_INSTANTIATORS}))


def _names_in_code(data: bytes, word: bytes) -> bool:
    """``word`` occurs in ``data`` as a whole identifier, at least once not as a whole string literal."""
    position = data.find(word)
    while position >= 0:
        end = position + len(word)
        before = data[position - 1] if position else 0
        after = data[end] if end < len(data) else 0
        if not _identifier_byte(before) and not _identifier_byte(after) and not (before in _QUOTES and after in _QUOTES):
            return True
        position = data.find(word, position + 1)
    return False


def _identifier_byte(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128


def _imported_modules(data: bytes) -> set[str]:
    """The top-level packages a file imports, anywhere in it (none when it does not parse)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found


def _short(qualname: str) -> str:
    return qualname.rpartition(".")[2]


#: A project base more files than this annotate parameters with is too general to say which model is kept.
_MAX_TYPED_FILES = 8


def _annotates(data: bytes, name: str) -> bool:
    """The file types a parameter with ``name`` (``backbone: Backbone``, ``Optional[Backbone]``)."""
    return re.search(rb":\s*(?:[\w.]*\[)?(?:\w+\.)*" + re.escape(name.encode("utf-8")) + rb"\b", data) is not None


def is_container(key: Key) -> bool:
    """A mapping of model parts that ``facts.py`` records as a class of its own (``<Munch@12:5>``)."""
    return _short(key[1]).startswith("<")


def _parts_read(found: list[tuple[Path, Use, frozenset[Key]]]) -> dict[Key, set[str]]:
    """Per mapping of parts: the members inference code reads of it where that code shows them (shape d)."""
    parts: dict[Key, set[str]] = {}
    for _, use, reached in found:
        if use.whole or use.kind == "capture":
            continue
        for key in reached:
            if is_container(key):
                parts.setdefault(key, set()).update(use.members)
    return parts


def _names(ref: Ref, key: Key) -> bool:
    """``ref`` is the result of calling something named as the unit ``key`` is (``self.g = build_generator()``)."""
    return ref[0] == "new" and _short(ref[1]) == _short(key[1])
