"""What a construction really holds, followed through constant constructor arguments (the project model).

The analysis keeps construction code as ``model.Value`` trees; this module
evaluates them.  An argument is a constant (its ``repr``), a module built by
a call (``Held``) or unknown (None).  Project classes are bound to the
constants they are built with (keywords, positions, defaults); functions made
only of tests and returns (``apply_parametrization_norm(conv, norm)``) give
back the return whose tests those constants pass.  Whatever the code does
not decide stays unknown, and the rule reports only decided answers.

Everything is read through a ``Reader`` (the run's ``Context``), so the answer for a file depends
on it and the code it imports, never on the other files of the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Union

from ..core import catalogue
from .construction import CONTAINERS, passes
from .model import Built, FileSummary, Helper, Signature, Value

#: Nested constructions followed at most (wrappers of wrappers): real code nests three or four.
MAX_DEPTH = 12
#: A class's attributes followed, per instance, into its children: a bound on the work per removal.
MAX_NODES = 400

Key = tuple[str, str]


class Reader(Protocol):
    """What following a construction reads of the project: names resolved as Python imports them, and file facts."""

    def resolve(self, summary: FileSummary, ref: str, depth: int = 0) -> tuple[Key, ...]: ...

    def summary_at(self, file: str) -> FileSummary | None: ...


@dataclass(frozen=True)
class Norm:
    """A norm applied where a module is built: the kinds and styles it may be, and where it is written."""

    kinds: frozenset[str]
    styles: frozenset[str]
    path: str
    line: int
    #: The helpers it is applied through, outermost first (``apply_parametrization_norm``).
    via: tuple[str, ...] = ()

    def cite(self) -> str:
        through = f" through {' and '.join(f'`{name}`' for name in self.via)}" if self.via else ""
        return f"applied at {Path(self.path).name}:{self.line}{through}"


@dataclass(frozen=True)
class Held:
    """A module a call builds: ``normed`` (holds a norm itself), ``plain`` (a torch layer), or an ``instance``."""

    state: str
    #: normed: the norm; plain: the torch class; instance: the class (file, qualified name) and its bound parameters.
    norm: Norm | None = None
    label: str = ""
    cls: Key | None = None
    env: dict[str, "Arg"] = field(default_factory=dict, compare=False, hash=False)


#: The step of an attribute path into every element of a container (``.resblocks[*]``): no attribute to remove from.
ELEMENT = "[*]"
#: An argument as followed: a constant (its ``repr``), a module built by a call, or unknown (None).
Arg = Union[str, Held, None]


def torch_module_class(name: str) -> bool:
    """A ``torch.nn`` layer class (``torch.nn.Conv1d``): constructing one applies no norm."""
    module, _, last = name.rpartition(".")
    return module == "torch.nn" and last[:1].isupper() and catalogue.spelling_for_api(name) is None


def short(name: str) -> str:
    return name.rpartition(".")[2]


class Follow:
    """Evaluates construction values across the project, read through one ``Reader``."""

    def __init__(self, context: Reader) -> None:
        self.context = context

    # -- values ----------------------------------------------------------------------
    def value(self, summary: FileSummary, value: Value | None, env: dict[str, Arg], depth: int = 0) -> Arg:
        """What ``value``, written in ``summary``'s file, is when its parameters are ``env`` (None: unknown)."""
        if value is None:
            return None
        if value.kind == "const":
            return value.literal
        if value.kind == "param":
            return env.get(value.names[0])
        if value.kind == "call" and depth <= MAX_DEPTH:
            return self._call(summary, value, env, depth)
        if value.kind == "if" and len(value.args) == 2 and depth <= MAX_DEPTH:
            verdict = passes(value.when, env)  # the branch the constants select (None: they do not decide)
            return self.value(summary, value.args[0 if verdict else 1], env, depth + 1) if verdict is not None else None
        return None

    def _call(self, summary: FileSummary, value: Value, env: dict[str, Arg], depth: int) -> Held | None:
        known = _torch_call(summary, value)
        if known is not None or len(value.names) != 1:
            return known
            return None
        keys = self.context.resolve(summary, value.names[0])
        if len(keys) != 1:
            return None
        file, unit = keys[0]
        target = self.context.summary_at(file)
        if target is None:
            return None
        positional = [self.value(summary, a, env, depth + 1) for a in value.args]
        keywords = {name: self.value(summary, a, env, depth + 1) for name, a in value.keywords}
        helper = target.helpers.get(unit)
        if helper is not None:
            return self._helper(target, unit, helper, positional, keywords, value.star, depth)
        if unit in target.plain_classes:
            init = target.inits.get(unit)
            # No signature kept: none of the class's constructions names a parameter, so the arguments do not matter.
            bound = bind(init, positional, keywords, value.star) if init is not None else {}
            if bound is not None:
                return Held("instance", label=short(unit), cls=(file, unit), env=bound)
        return None

    def _helper(
        self, target: FileSummary, unit: str, helper: Helper, positional: list[Arg], keywords: dict[str, Arg],
        star: bool, depth: int,
    ) -> Held | None:
        """The return the arguments' constants lead to, when the tests decide it."""
        env = bind(helper.signature, positional, keywords, star)
        if env is None:
            return None
        for returned in helper.returns:
            verdict = passes(returned.when, env)
            if verdict is None:
                return None
            if verdict:
                result = self.value(target, returned.value, env, depth + 1)
                if not isinstance(result, Held):
                    return None
                if result.norm is not None:
                    norm = result.norm
                    result = Held("normed", Norm(norm.kinds, norm.styles, norm.path, norm.line, (short(unit), *norm.via)))
                return result
        return None

    # -- instances -------------------------------------------------------------------------
    def norms_inside(self, held: Held) -> tuple[list[tuple[tuple[str, ...], Norm]], bool]:
        """Where the norms of an instance sit (attribute paths), and whether some child is undecided."""
        paths: list[tuple[tuple[str, ...], Norm]] = []
        state = {"undecided": False, "nodes": 0}
        self._walk(held, (), paths, state, 0)
        return paths, bool(state["undecided"])

    def _walk(self, held: Held, prefix: tuple[str, ...], paths: list, state: dict, depth: int) -> None:
        if held.cls is None or depth > MAX_DEPTH:
            state["undecided"] = True
            return
        summary = self.context.summary_at(held.cls[0])
        attrs = summary.plain_classes.get(held.cls[1]) if summary is not None else None
        if summary is None or attrs is None or summary.applies_in_place:
            state["undecided"] = True  # ``applies_in_place``: code there norms modules after they are built
            return
        for attr, built in sorted(attrs.items()):
            state["nodes"] += 1
            value = built_value(built)
            if state["nodes"] > MAX_NODES or value is None:
                state["undecided"] = True
                continue
            child = self.value(summary, value, held.env, depth + 1)
            self._place(summary, child, (*prefix, attr), held.env, paths, state, depth)
            if isinstance(child, Held) and child.state == "plain" and built.elements is None and any(
                name in CONTAINERS for name in built.constructor
            ):
                state["undecided"] = True  # a container whose elements the code does not show
            if isinstance(child, Held) and child.state == "plain" and built.elements:
                for element in built.elements:  # ``nn.ModuleList([ResBlock(...) ...])``: the norms of its elements
                    found = self.value(summary, element, held.env, depth + 1)
                    self._place(summary, found, (*prefix, attr, ELEMENT), held.env, paths, state, depth)

    def _place(
        self, summary: FileSummary, child: Arg, path: tuple[str, ...], env: dict[str, Arg], paths: list, state: dict,
        depth: int,
    ) -> None:
        """Note where one built child's norms sit: on it, or inside it (an instance of a project class)."""
        if not isinstance(child, Held):
            state["undecided"] = True
        elif child.norm is not None:
            paths.append((path, child.norm))
        elif child.state == "instance":
            self._walk(child, path, paths, state, depth + 1)


def _torch_call(summary: FileSummary, value: Value) -> Held | None:
    """A call of norm appliers only (it holds that norm) or of torch layers only (it holds none); None otherwise."""
    if not value.names:
        return None
    found = [catalogue.spelling_for_api(name) for name in value.names]
    if all(f is not None and f[1] == "apply" for f in found):
        spellings = [f[0] for f in found if f is not None]
        return Held("normed", Norm(
            frozenset(s.kind.value for s in spellings), frozenset(s.style.value for s in spellings), summary.path, value.line,
        ))
    if all(torch_module_class(name) for name in value.names):
        return Held("plain", label=" or ".join(short(n) for n in value.names))
    return None


def built_value(built: Built) -> Value | None:
    """What an attribute is assigned: the kept value, or, for a torch call (kept as its constructor only), that call."""
    if built.value is not None:
        return built.value
    return Value("call", names=built.constructor, line=built.line) if built.constructor else None


def bind(signature: Signature, positional: list[Arg], keywords: dict[str, Arg], star: bool) -> dict[str, Arg] | None:
    """The parameters a call gives, as Python binds them (None: the call would not bind)."""
    env: dict[str, Arg] = {}
    by_position = [p for p in signature.params if p.positional]
    for index, arg in enumerate(positional):
        if index < len(by_position):
            env[by_position[index].name] = arg
        elif not signature.varargs:
            return None
    named = {p.name: p for p in signature.params if p.keyword}
    for name, arg in keywords.items():
        if name in named and name not in env:
            env[name] = arg
        elif name in env or not signature.varkw:
            return None
    for param in signature.params:
        if param.name in env:
            continue
        if star:
            env[param.name] = None  # ``*args``/``**kwargs`` may carry it
        elif param.default is not None:
            env[param.name] = param.default.literal if param.default.kind == "const" else None
        else:
            return None
    return env


def constants(value: Value | None) -> str:
    """The constant arguments of a call as written (``norm='weight_norm'``), for messages."""
    if value is None:
        return ""
    shown = [a.literal for a in value.args if a.kind == "const"]
    shown += [f"{name}={a.literal}" for name, a in value.keywords if a.kind == "const"]
    return ", ".join(shown)
