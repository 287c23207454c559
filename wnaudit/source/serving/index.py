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

``ServingIndex`` holds one part per question and asks them in order for a
verdict: the files and their facts (``pools.py``, ``file_facts.py``), names
(``resolver.py``), instances (``instances.py``, ``config_builds.py``), the
builders of a start (``carriers.py``), the files that serve it
(``serving_files.py``), its sites (``sites.py``, ``declared.py``), the folds
(``folds.py``, ``method_folds.py``, ``origin.py``), where each fold goes
(``placement.py``) and the message's evidence (``evidence.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..project import ImportBinding, Project
from ..provisional import provisional
from ..facts.store import FactStore
from .ahead import ServingAhead
from .carriers import Carriers
from .config_builds import ConfigBuilds
from .configs import config_targets
from .declared import DeclaredEntries
from .effects import ClassView
from .evidence import Evidence
from .facts import Body, Ref, ServingFacts, Use
from .file_facts import FileFacts
from .folds import FoldFinder
from .instances import Carried, Instances
from .method_folds import MethodFolds
from .origin import ModelOrigin
from .placement import FoldPlacement
from .pools import ProjectPools
from .resolver import Resolver
from .selection import Selection
from .serving_files import ServingFiles
from .sites import InferenceSites, parts_read
from .units import CONSTRUCTION, IndexHooks, Key, Site, short
from .walk import project_files


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


class ServingIndex:
    """The serving-path facts of the project files a lint needs, parsed once per run, and WN110's verdicts on them."""

    def __init__(
        self, project: Project, read: Callable[[Path], "bytes | None"],
        imports: Callable[[Path], "Iterable[tuple[ImportBinding, Path]]"], cache: "FactStore | None" = None,
        walk: "Callable[[Path, bool], tuple[Path, ...]] | None" = None, known: "dict[str, ServingFacts] | None" = None,
        configs: "Callable[[Path], dict[str, set[str]]] | None" = None, ahead: "ServingAhead | None" = None,
        hooks: IndexHooks = IndexHooks(),
    ) -> None:
        self.project = project
        self.pools = ProjectPools(project, read, imports, walk or (lambda root, whole: tuple(project_files(root, whole))))
        #: The one place a file's facts come from (known -> cache -> workers -> parse: ``FileFacts._find``).
        self.file_facts = FileFacts(project, read, self.pools, cache, known, ahead, hooks)
        #: Files the index had to read as code and could not parse (the engine reports those it lints).
        self.failures = self.file_facts.failures
        self._modern_only = hooks.modern_only
        #: A whole-file tree the analysis kept (``IndexHooks.kept_tree``), for the fold point's reader too.
        self.kept_tree = hooks.kept_tree
        self.resolver = Resolver(project, self.file_facts, self.pools.mentions)
        self.configs = ConfigBuilds(self.pools, self.file_facts, self.resolver, read, configs or config_targets)
        self.carried = Carried()
        self.references = Instances(project, self.pools, self.file_facts, self.resolver, self.configs, self.carried)
        self.builders = Carriers(self.pools, self.file_facts, self.resolver, self.references, self.configs, self.carried, read)
        self.serving_files = ServingFiles(self.pools, self.file_facts, self.resolver, self.configs, self.carried)
        self.entries = DeclaredEntries(project, self.file_facts, self.references)
        self.origin = ModelOrigin(self.file_facts, self.resolver)
        self.folds = FoldFinder(self.pools, self.file_facts, self.resolver, self.references, self.origin)
        self.method_folds = MethodFolds(self.file_facts, self.resolver, self.references, self.folds, self.carried)
        self.sites = InferenceSites(
            self.pools, self.file_facts, self.resolver, self.references, self.folds, self.carried, hooks.excluded,
        )
        self.placement = FoldPlacement(
            self.file_facts, self.resolver, self.references, self.origin, self.folds, self.entries, hooks.excluded,
        )
        self.evidence = Evidence(self.file_facts, self.references, self.folds)
        self._verdicts: dict[Key, Served | None] = {}
        #: What each project function does to the models it is given (``effects.py``).
        self.summaries = self.folds.summaries
        #: Which guarded applications the project's constructions select (``selection.py``).
        self.selection = Selection(
            self.facts, read, self.lookup, self.pools.files_mentioning, hooks.kept_tree,
        )

    # -- what the rules and the project model ask -----------------------------------------------
    def declare(self, entries: tuple[str, ...], root: Path) -> None:
        """``[tool.wnaudit] serving``: the entry points WN110 checks and fixes (resolved from ``root`` on first need)."""
        self.entries.declare(entries, root)

    def entry_bodies(self) -> list[tuple[Path, str, Body]]:
        """The declared entries the project defines: (file, qualified name, body); the others are config errors."""
        return self.entries.bodies()

    def facts(self, path: Path) -> ServingFacts | None:
        return self.file_facts.get(path)

    def root_of(self, path: Path) -> tuple[Path, bool]:
        """The project directory of a file, and whether it was found by a marker (then walked whole)."""
        return self.pools.root_of(path)

    def imports(self, file: Path, module: str) -> bool:
        """Does a file of ``file``'s project (its walk leaves tests out) import ``module``? WN110's fix: is wnaudit a dependency."""
        return self.pools.imports(file, module)

    def lookup(self, file: Path, dotted: str, depth: int = 0) -> tuple[Key, str] | None:
        """The project class or function a qualified name used in ``file`` stands for, and the rest of the name."""
        return self.resolver.lookup(file, dotted, depth)

    def instances(self, file: Path, ref: Ref, depth: int = 0) -> frozenset[Key]:
        """The project classes an instance reference may be an instance of."""
        return self.references.of(file, ref, depth)

    def bases(self, key: Key) -> list[Key]:
        """The project classes a class inherits from, nearest first (its MRO within the project)."""
        return self.resolver.bases(key)

    def class_view(self, key: Key) -> ClassView:
        """A class with its project bases, as the question "what does running it execute?" needs it."""
        return self.resolver.class_view(key)

    def prepare(self, starts: Iterable[Key]) -> None:
        """Find, for all ``starts`` at once, the project classes and functions that build them (``carriers.py``)."""
        self.builders.prepare(starts)

    def carriers(self, start: Key) -> set[Key]:
        """``start`` and every project class or function that builds it, directly or through others."""
        return self.builders.of(start)

    # -- the question -------------------------------------------------------------------
    def applied(self, start: Key, line: int) -> bool:
        """Does building the class apply the weight norm written at ``line``?

        An application in ``__init__`` (or a method it calls, or a helper
        function) does; one in a method only something else may call
        (``apply_weight_norm()`` for training, a conversion script) is not
        counted: the model as built and served has no weight norm from it.
        """
        cls = self.file_facts.class_of(start)
        if cls is not None:
            method = next((b for b in cls.methods.values() if b.line <= line <= b.end_line), None)
            if method is not None and method.name not in CONSTRUCTION and method.name not in self.builders.constructed(start):
                return False
        # Under a test on a constructor parameter: only if some construction in the project can select it (asked
        # only where the class is served unfolded: reading the constructions parses the files that build it).
        return self.served(start) is None or self.selection.selected(start, line)

    def served(self, start: Key) -> Served | None:
        """Where weight norm applied in ``start`` reaches inference unfolded (None: never, or folded)."""
        if start in self._verdicts:
            return self._verdicts[start]
        with provisional(self._verdicts, start, None):
            result = self._served(start)
        self._verdicts[start] = result
        return result

    def _served(self, start: Key) -> Served | None:
        modern = self.folds.modern = self._modern_only(start)
        pool = self.pools.pool(start[0])
        carriers = self.builders.of(start)
        classes = {k for k in carriers if self.file_facts.class_of(k) is not None}
        if not classes:
            return None
        family = self.resolver.family(classes)
        folding = self.folds.folding_methods(family)
        self.pools.search(pool, folding)
        files = self.serving_files.of(start, pool, carriers, classes, folding)
        #: Folds of a model built in the same function (``model = Generator(); ...; fold(model)``): they fold that
        #: object only, so they cover the sites of that function, not those of another that builds its own.
        local: set[tuple[Path, int]] = set()
        #: Loaders whose result a caller folds (``model = load_model(p); fold(model)``): that fold covers the caller's
        #: sites and the loader's own, not those of another caller of the loader that serves it unfolded.
        loaders: set[Key] = set()
        found: list[Site] = []
        for file in files:
            facts = self.file_facts.get(file)
            if facts is None:
                continue
            if self.folds.folded_in(file, facts, carriers, folding, local, loaders):
                return None  # folded on the way
            found.extend(self.sites.in_file(file, facts, carriers, modern))
        entries = self.entries.sites(carriers)
        found.extend(entries)
        live = self.method_folds.live_methods(files, self.folds.fresh_removals(files, carriers, folding))
        parts = parts_read(found)
        sites = [s for s in found if self.sites.runs(start, s[1], s[2], carriers, parts)]
        if self.folds.removal_method_called(family, folding, live):
            return None
        chained, why, ran = self.method_folds.find(start, files, carriers, family, folding, live, local, loaders)
        if chained:
            return None
        sites.extend(self.sites.self_evaluations(family, classes, folding, carriers))
        # A site in the project's code first: an inherited library loader only where the code shows no other.
        sites.sort(key=lambda item: (item[1].kind == "inherited", str(item[0]), item[1].line, item[1].column))
        sites = self.placement.uncovered(sites, local, entries, loaders)
        if not sites:
            return None
        served = [self._served_at(start, site, files, carriers, family, folding, live, why, ran) for site in sites]
        return dataclasses.replace(served[0], others=tuple(served[1:]))

    def _served_at(
        self, start: Key, site: Site, files: list[Path], carriers: set[Key], family: set[Key],
        folding: set[str], live: set[str], why: str, ran: "set[tuple[Key, str]] | None" = None,
    ) -> Served:
        """The verdict for one inference site: what removal nobody calls there, why a candidate fold does not count."""
        file, use, reached = site
        uncalled = self.folds.uncalled(reached, family, folding, live, ran or set())
        if ran and uncalled and why and "nothing calls" not in why:
            why += f", and `{uncalled}` exists but nothing calls it"  # the later step, forgotten (CosyVoice3)
        why = why or self.evidence.why_not_folded(start, files, carriers, family, folding, bool(uncalled))
        removal = self.placement.removal_at(file, use, carriers, family, folding)
        target = self.sites.part_target(use, reached, carriers)
        return Served(file, use, uncalled, short(start[1]), why, target, removal=removal)
