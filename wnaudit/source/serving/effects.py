"""What project functions do to the models they are given, and what an inference entry runs of a model.

WN110's verdict is a query on two summaries of the project:

* **Folds through helpers**.  A function folds its parameter when
  it applies a remover or a fold API to it or to each of its ``modules()``
  (``for m in model.modules(): try: remove_parametrizations(m, "weight")``),
  removes a ``WeightNorm`` hook it checked for (``hook.remove(module)``),
  calls a removal method on it, or hands it on to a function that folds the
  parameter it lands in.  The last makes the summary a property of the call
  graph: it is the reachability of a local fold over "parameter ``i`` of ``f``
  is passed as parameter ``j`` of ``g``" edges, so cycles (mutual recursion)
  need no special case and a cycle with no local fold folds nothing.
* **What an inference entry executes**.  A model put in eval mode
  runs what the code around the site calls on it (``model(...)`` runs
  ``forward``, ``model.model_g.infer(...)`` reads ``model_g``) and what those
  methods read of ``self``, closed over the methods they call.  A part held
  in an attribute nothing on that path reads (the discriminators of a GAN
  training module) is never executed at inference, so its weight norm costs
  nothing there.  Wherever the code does not show it (the model leaves the
  function, ``self`` is handed away, a method the project does not define is
  called), everything the model holds counts as executed: precision first.

Both read only ``facts.py`` records, so they depend on the project's code alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ...core import catalogue
from .facts import Body, ClassFacts, Ref

Key = tuple[Path, str]
#: Functions followed from one question: a bound on a pathological call graph (then: not shown to fold).
_MAX_FUNCTIONS = 256
#: ``nn.Module`` methods that run none of the model's own code (``forward`` and the methods it calls).
MODULE_API = frozenset(catalogue.SELF_RETURNING_METHODS) | frozenset({
    "load_state_dict", "state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "modules",
    "named_modules", "children", "named_children", "zero_grad", "register_buffer", "register_parameter",
    "register_forward_hook", "register_forward_pre_hook", "register_module", "add_module", "get_submodule",
    "get_parameter", "apply", "extra_repr", "__repr__", "num_parameters",
})


class FoldSummaries:
    """Which parameter of which project function is folded by calling it, memoised per question."""

    def __init__(self, function: Callable[[Key], "Body | None"], resolve: Callable[[Path, Iterable[str]], set[Key]]) -> None:
        self._function = function
        self._resolve = resolve
        self._memo: dict[tuple[Key, int, frozenset[str]], bool] = {}

    def folds_keyword(self, key: Key, keyword: str, folding: "frozenset[str] | set[str]") -> bool:
        """``folds`` for a model passed by keyword (the parameter of that name)."""
        body = self._function(key)
        return body is not None and keyword in body.params and self.folds(key, body.params.index(keyword), folding)

    def folds(self, key: Key, position: int, folding: "frozenset[str] | set[str]") -> bool:
        """Does calling ``key`` with a model as positional argument ``position`` fold that model?

        ``folding``: the names of the removal methods of the model's classes (a
        method of that name called on the parameter folds it).
        """
        names = frozenset(folding)
        memo = (key, position, names)
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = self._search(key, position, names)
        return found

    def _search(self, key: Key, position: int, folding: frozenset[str]) -> bool:
        """A local fold reachable along parameter-passing edges (breadth first, each (function, parameter) once)."""
        queue = [(key, position)]
        seen = set(queue)
        while queue and len(seen) <= _MAX_FUNCTIONS:
            current, index = queue.pop(0)
            body = self._function(current)
            if body is None:
                continue
            if _folds_locally(body, index, folding):
                return True
            for target, argument in self._passes(current, body, index):
                step = (target, argument)
                if step not in seen:
                    seen.add(step)
                    queue.append(step)
        return False


    def _passes(self, key: Key, body: Body, index: int) -> list[tuple[Key, int]]:
        """Where parameter ``index`` of ``body`` goes on: (function, its parameter position)."""
        out: list[tuple[Key, int]] = []
        for callee, argument, parameter in body.param_passes:
            if parameter == index:
                out.extend((target, argument) for target in sorted(self._resolve(key[0], callee)))
        for callee, keyword, parameter in body.param_keyword_passes:
            if parameter != index:
                continue
            for target in sorted(self._resolve(key[0], callee)):
                inner = self._function(target)
                if inner is not None and keyword in inner.params:
                    out.append((target, inner.params.index(keyword)))
        return out


def _folds_locally(body: Body, index: int, folding: frozenset[str]) -> bool:
    if index in body.param_folds or (body.checks_hook and index in body.hook_removes):
        return True
    return any(parameter == index and method in folding for method, parameter in body.param_methods)


class ClassView:
    """A class with its project bases, as the execution question needs it: methods, attributes, loose builds."""

    def __init__(self, family: list[tuple[Key, ClassFacts]]) -> None:
        self.family = family
        self.methods: dict[str, list[Body]] = {}
        self.attrs: dict[str, list[tuple[Path, Ref]]] = {}
        self.loose: set[str] = set()
        for key, cls in family:
            for name, body in cls.methods.items():
                self.methods.setdefault(name, []).append(body)
            for name, refs in cls.attrs.items():
                self.attrs.setdefault(name, []).extend((key[0], ref) for ref in refs)
            self.loose |= {_short(name) for name in cls.loose}

    def executed(self, members: Iterable[str], whole: frozenset[str] = frozenset()) -> set[str] | None:
        """The attributes of ``self`` that running ``members`` reads (None: anything may run).

        ``members`` as ``facts.Use.members``: ``()`` runs ``forward``, ``name()``
        calls a method, ``name`` reads a member.  ``whole``: members that reach
        every part (``modules()`` for a question about folds): None where one is used.
        """
        entries: list[str] = []
        read: set[str] = set()
        for member in members:
            if not self._sort(member, entries, read):
                return None
        done: set[str] = set()
        while entries:
            name = entries.pop()
            if name in done:
                continue
            done.add(name)
            bodies = self.methods.get(name)
            if not bodies:
                if name not in MODULE_API:
                    return None  # ``forward`` or a method defined outside the project: unknown code runs
                continue
            for body in bodies:
                if body.self_escapes or body.self_members & whole:
                    return None
                for member in body.self_members:
                    if not self._sort(member, entries, read):
                        return None
        return read if done or read else None

    def _sort(self, member: str, entries: list[str], read: set[str]) -> bool:
        """File one member as a method to run or an attribute read; False when it runs unknown code."""
        if member == "()":
            entries.append("forward")
            return True
        called = member.endswith("()")
        name = member[:-2] if called else member
        if name in self.methods:
            entries.append(name)
        elif called and name not in self.attrs:
            return name in MODULE_API  # ``model.eval()`` runs nothing of the model; an unknown method may
        else:
            read.add(name)
        return True


def _short(qualname: str) -> str:
    return qualname.rpartition(".")[2]
