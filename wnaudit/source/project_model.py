"""The project model: the one place the cross-file rules (WN109, WN110) ask what the project's code does.

Rules do not walk code.  They read their own file's ``FileSummary`` and ask
this model three questions, each answered from facts the
analyse stage keeps (``analysis/`` with ``construction/``; ``serving/facts.py``):

* **What sits where, built how.**  ``value`` follows a construction through
  constant constructor arguments, project helpers and wrappers to what it
  holds (a normed layer, a plain torch layer, an instance of a project class
  with its bound parameters); ``norms_inside`` says where an instance's norms
  sit (``holdings.py``).  ``selected`` says whether any construction in the
  project can select an application guarded by a constructor parameter
  (``serving/selection.py``).
* **What functions and methods do to a model.**  ``folds_all``: a class's own
  removal method folds every weight norm the class applies; ``folds_argument``:
  a project function folds the model it is given, itself or through the
  functions it hands it to (reachability over the call graph, so cycles need
  no special case); ``executed``: what an inference entry runs of a model
  (``serving/effects.py``).
* **Who serves a model unfolded.**  ``verdict`` is WN110's answer for one
  application: the inference site, the fold that was looked for, why a
  candidate fold does not count (``serving/index.py``), and where a fold may
  go, after the weights are loaded (``serving/fold_point.py``).

One model is built per ``Context`` (``Context.model``) and shared by every
file and rule of the run, so each question is answered once.  Every answer
depends on the project's code alone, never on which files are linted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Protocol

from ..core.catalogue import Kind, Style
from . import notebook
from .facts.kinds import FOLD_POINT, FoldPointAt, Verdict
from .holdings import Arg, Follow, Held, Norm, Reader
from .model import Application, Built, FileSummary, Removal, Value
from .reading import SourceError
from .facts.store import FactStore
from .serving.fold_point import no_fold_point
from ..common.cache import digest_of

if TYPE_CHECKING:
    from .serving.index import Served, ServingIndex

Key = tuple[Path, str]
_MODERN = Style.MODERN.value
_LEGACY = Style.LEGACY.value
_WEIGHT_NORM = Kind.WEIGHT_NORM.value


class ProjectReader(Reader, Protocol):
    """What the model reads of the run (its ``Context``): file facts, resolved names, and the serving index."""

    def serving(self) -> ServingIndex: ...


class ProjectModel:
    """What the project builds, holds, folds and serves, asked by the rules of one run."""

    def __init__(self, context: ProjectReader, source_bytes: Callable[[Path], bytes | None], facts: FactStore) -> None:
        #: ``source_bytes``: a file's bytes as the run sees them (the workspace's: what it reads, it observes);
        #: ``facts``: the run's fact store (fold points are a kind of it).
        self.context = context
        self._source_bytes = source_bytes
        self._facts = facts
        self._follow = Follow(context)

    # -- what sits where, built how ------------------------------------------------------------
    def summary_at(self, file: str) -> FileSummary | None:
        """The facts of a project file, read on demand (None: not Python the project can import)."""
        return self.context.summary_at(file)

    def value(self, summary: FileSummary, value: Value | None, env: dict[str, Arg] | None = None) -> Arg:
        """What a construction written in ``summary``'s file holds, for constant parameters ``env`` (None: unknown)."""
        return self._follow.value(summary, value, env if env is not None else {})

    def norms_inside(self, held: Held) -> tuple[list[tuple[tuple[str, ...], Norm]], bool]:
        """Where an instance's norms sit (attribute paths), and whether some part of it is undecided."""
        return self._follow.norms_inside(held)

    def selected(self, start: Key, line: int) -> bool:
        """Whether the application at ``line`` of ``start`` applies for some construction in the project."""
        return self.serving.applied(start, line)

    # -- what methods do to a model -----------------------------------------------------------
    def folds_all(self, key: Key, method: str) -> bool:
        """``key``'s method folds every weight norm the class applies, unconditionally (what WN101 asks of it).

        Only for a class whose attributes its own code shows (``plain_classes``):
        each weight-norm application must be assigned to one attribute that the
        method removes whole, with the remover of the spelling applied.
        """
        summary = self.summary_at(str(key[0]))
        if summary is None or summary.applies_in_place or key[1] not in summary.plain_classes:
            return False
        built = summary.plain_classes[key[1]]
        removals = [r for r in summary.removals if r.site.unit == key[1] and r.method == method]
        applications = [a for a in summary.applications if a.site.unit == key[1] and a.kind == _WEIGHT_NORM]
        return bool(applications) and all(_removed(a, built, removals) for a in applications)

    def folds_argument(self, key: Key, position: int, removal_methods: Iterable[str] = ()) -> bool:
        """Calling function ``key`` with a model as positional argument ``position`` folds it, itself or through
        the project functions it hands the model on to (``removal_methods``: the model's own removal methods)."""
        return self.serving.summaries.folds(key, position, frozenset(removal_methods))

    def executed(self, key: Key, members: Iterable[str]) -> set[str] | None:
        """The attributes of a ``key`` instance that running ``members`` reads (None: the code does not show).

        ``members`` as an inference site uses the model: ``()`` runs ``forward``,
        ``name()`` calls a method, ``name`` reads an attribute; the class's
        project bases count as its own code.
        """
        return self.serving.class_view(key).executed(tuple(members))

    # -- who serves a model unfolded ----------------------------------------------------------
    @property
    def serving(self) -> ServingIndex:
        """The project-wide serving-path index, built on first use."""
        return self.context.serving()

    def prepare(self, starts: Iterable[Key]) -> None:
        """Read, in one pass, what the serving questions about ``starts`` will need."""
        self.serving.prepare(starts)

    def verdict(self, file: Path, unit: str, line: int) -> Verdict | None:
        """Where the application at ``line`` of ``unit`` is served unfolded (None: it is not, or it never applies)."""
        if not self.selected((file, unit), line):
            return None
        served = self.serving.served((file, unit))
        if served is None:
            return None
        first = self._verdict_at(file, served)
        return first._replace(others=tuple(tuple(self._verdict_at(file, other)) for other in served.others))

    def _verdict_at(self, file: Path, served: Served) -> Verdict:
        """The verdict for one inference site of the application's model."""
        index = self.serving
        site = served.site
        root = index.root_of(file)[0]
        try:
            where = served.file.relative_to(root).as_posix()
        except ValueError:
            where = served.file.name
        target = served.target or site.target or "model"
        return Verdict(
            str(served.file), site.line, site.what, target, site.kind, served.uncalled,
            f"{where}:{_line_shown(served.file, site.line)}", served.why,
            self._own_removal(served), index.imports(served.file, "wnaudit"), self._no_fold_point(served, target),
        )

    def _no_fold_point(self, served: Served, target: str) -> str:
        """Why the fix has no safe point for the fold in the serving code ("": it has), kept with the verdict."""
        before_load = ", and a fold before the load would break it"
        if served.site.kind == "inherited":
            return "the weights are loaded inside the library's `from_pretrained`, which no project line follows" + before_load
        if served.removal:
            return (
                f"`{served.removal}` already runs there and does not fold it all (as the legacy remover on the modern "
                "spelling, WN101, a removal method that leaves a part, or one under a flag the configuration leaves off), "
                "and a second removal beside it would raise; make that removal fold it all"
            )
        # Read through the workspace: the serving file's digest is an observation the kept verdict rests on.
        data = self._source_bytes(served.file)
        if data is None:
            return ""
        digest = digest_of(data)

        def placed(at: FoldPointAt) -> str | None:
            return no_fold_point(str(served.file), data, at.line, at.target, self.context.serving().kept_tree(digest))

        why = self._facts.get(FOLD_POINT, FoldPointAt(digest, served.site.line, target), placed)
        return why + before_load if why else ""

    def _own_removal(self, served: Served) -> str:
        """The uncalled removal method of the served model when it provably folds all its weight norm ("": not sure)."""
        found = self._self_contained_method(served)
        if found is None:
            return ""
        key, method = found
        return method if self.folds_all(key, method) else ""

    def _self_contained_method(self, served: Served) -> tuple[Key, str] | None:
        """The served model's one class and its uncalled removal method, taking only ``self``.

        None unless the class has no project base and builds nothing of the project:
        weight norm applied there is weight norm the method might not fold.
        """
        index = self.serving
        owner, _, call = served.uncalled.partition(".")
        method = call.removesuffix("()")
        keys = {key for ref in served.site.refs for key in index.instances(served.file, ref)}
        if not method or len(keys) != 1:
            return None
        [key] = keys
        facts = index.facts(key[0])
        cls = facts.classes.get(key[1]) if facts is not None else None
        body = cls.methods.get(method) if cls is not None else None
        if cls is None or body is None or body.params != ["self"] or key[1].rpartition(".")[2] != owner:
            return None
        if index.bases(key) or any(index.lookup(key[0], name) is not None for name in cls.builds):
            return None
        return key, method


def _line_shown(file: Path, line: int) -> str:
    """A line of the serving file as a report names it: ``cell N:line`` in a notebook (its view's line otherwise)."""
    if not notebook.is_notebook(file):
        return str(line)
    try:
        located = notebook.read_view(file).locate(line)
    except (OSError, SourceError):
        located = None
    return f"cell {located[0]}:{located[1]}" if located is not None else str(line)


def _removed(application: Application, built: dict[str, Built], removals: list[Removal]) -> bool:
    """A removal folds the application: from the one attribute it is assigned to, by the remover of its spelling."""
    held = [attr for attr, how in built.items() if how.line == application.site.line and application.api in how.constructor]
    return len(held) == 1 and any(r.self_attr == held[0] and not r.element and _folds(r, application) for r in removals)


def _folds(removal: Removal, application: Application) -> bool:
    """The removal runs unconditionally, whole, and with the remover of the spelling applied."""
    if removal.when or removal.guard == "swallowed" or removal.star_args or removal.missing_tensor_name:
        return False
    if removal.leave_parametrized_false:
        return False
    if removal.style == _MODERN:
        return application.styles == {_MODERN}
    return application.styles == {_LEGACY} or removal.guard == "dual"
