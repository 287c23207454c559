"""The construction records (``classes.ClassFacts``) resolved into the summary's facts WN109 follows.

Which top-level classes can be read off their own code and how each
attribute is built, the hand-overs of their attributes, the ``__init__``
signatures and constructions that matter, and the helpers made only of
tests and returns.
"""

from __future__ import annotations

import ast

from .. import construction
from ..model import Built, FileSummary, Helper, Return, Value
from ..resolve import Resolver, Scope
from .classes import ClassFacts

_MODULE_BASE = frozenset({"torch.nn.Module"})


def summarize_classes(
    classes: ClassFacts, bases: list[tuple[str, ast.expr, Scope]], module_scope: Scope,
    resolver: Resolver, names_of: construction.NamesOf, summary: FileSummary,
) -> None:
    """Fill the summary's class facts (the removals must be in it: they decide which classes matter)."""
    summary.plain_classes = _plain_classes(classes, bases, module_scope, resolver, names_of)
    summary.handed = _handed(classes, summary)
    flagged = {r.site.unit for r in summary.removals if r.method == "__init__" and r.when}
    flagged |= _flag_chosen(summary.plain_classes)
    summary.inits = {
        qual: construction.with_defaults(signature, defaults, scope, names_of)
        for qual, (signature, defaults, scope) in classes.inits.items()
        if qual in flagged or _uses_parameters(summary.plain_classes.get(qual, {}))
    }
    summary.helpers = _helpers(classes, names_of)
    summary.constructions = _constructions(classes, resolver, names_of, flagged)


def _handed(classes: ClassFacts, summary: FileSummary) -> dict[tuple[str, str], tuple[int, ...]]:
    """Lines of the calls other than removals that receive ``self.<attribute>`` of a plain class."""
    removal_calls = {r.site.key for r in summary.removals}
    return {
        key: tuple(line for line, call in uses if call not in removal_calls)
        for key, uses in classes.handed.items()
        if key[0] in summary.plain_classes
    }


def _plain_classes(
    classes: ClassFacts, bases: list[tuple[str, ast.expr, Scope]], module_scope: Scope,
    resolver: Resolver, names_of: construction.NamesOf,
) -> dict[str, dict[str, Built]]:
    """Top-level classes whose attributes can be read off their code, with how each attribute is built."""
    subclassed: set[str] = set()
    for _, base, scope in bases:
        subclassed |= resolver.expr(base, scope)
    out: dict[str, dict[str, Built]] = {}
    for qual, class_bases in classes.class_bases.items():
        if qual in classes.opaque_classes or qual in subclassed or not class_bases:
            continue
        if any(base is None or resolver.expr(base, module_scope) != _MODULE_BASE for base in class_bases):
            continue
        out[qual] = _built_attributes(qual, classes, names_of)
    return out


def _built_attributes(qual: str, classes: ClassFacts, names_of: construction.NamesOf) -> dict[str, Built]:
    """Each attribute's first assignment, with the constructor and value when it is the attribute's only one."""
    built: dict[str, Built] = {}
    for attr, assignments in classes.class_builds.get(qual, {}).items():
        first = assignments[0]
        names: frozenset[str] = frozenset()
        value: Value | None = None
        elements: tuple[Value, ...] | None = None
        if len(assignments) == 1:
            value = construction.to_value(first.value, first.scope, names_of, first.params)
            if first.callee is not None:
                names = names_of(first.callee, first.scope)
            appended = classes.class_elements.get((qual, attr), [])
            if appended is not None:
                elements = _elements(value, appended, names_of)
            if value.kind not in ("call", "if") or (
                value.kind == "call" and not value.args and not value.keywords and value.names == tuple(sorted(names))
            ):
                value = None  # not a module built here, or a call its constructor names say all about
        built[attr] = Built(first.line, tuple(sorted(names)), value, elements)
    return built


def _elements(
    value: Value, appended: list[tuple[ast.expr, Scope, frozenset[str]]], names_of: construction.NamesOf,
) -> tuple[Value, ...] | None:
    """What a container attribute holds: the list it is built from and what is appended (None: not a container)."""
    if value.kind != "call" or not all(name in construction.CONTAINERS for name in value.names) or value.keywords or value.star:
        return None
    if len(value.args) > 1 or (value.args and value.args[0].kind != "list"):
        return None
    given = value.args[0].args if value.args else ()
    return given + tuple(construction.to_value(node, scope, names_of, params) for node, scope, params in appended)


def _helpers(classes: ClassFacts, names_of: construction.NamesOf) -> dict[str, Helper]:
    out: dict[str, Helper] = {}
    for qual, (returns, signature, defaults, scope) in classes.helpers.items():
        params = frozenset(p.name for p in signature.params)
        out[qual] = Helper(
            construction.with_defaults(signature, defaults, scope.parent or scope, names_of),
            tuple(Return(when, construction.to_value(node, scope, names_of, params)) for when, node in returns),
        )
    return out


def _uses_parameters(attributes: dict[str, Built]) -> bool:
    """Some attribute's construction names a parameter of ``__init__``: the arguments a class is built with matter."""
    pending = [v for built in attributes.values() for v in (built.value, *(built.elements or ())) if v is not None]
    while pending:
        value = pending.pop()
        if value.kind == "param" or (value.kind == "if" and value.when):
            return True
        pending.extend(value.args)
        pending.extend(v for _, v in value.keywords)
    return False


def _flag_chosen(classes: dict[str, dict[str, Built]]) -> set[str]:
    """Classes building an attribute one way or another by a test of ``__init__``'s parameters (``weight_norm(conv)
    if use_weight_norm else conv``): how the file builds them decides whether the norm is applied (WN109)."""
    return {
        qual for qual, attributes in classes.items()
        if any(b.value is not None and b.value.kind == "if" and b.value.when for b in attributes.values())
    }


def _constructions(
    classes: ClassFacts, resolver: Resolver, names_of: construction.NamesOf, wanted: set[str],
) -> dict[str, tuple[Value, ...]]:
    """The calls in the file that build one of ``wanted`` (its classes whose ``__init__`` removes under a test)."""
    out: dict[str, list[Value]] = {}
    if not wanted:
        return {}
    for func, scope, node, params in classes.constructed:
        names = resolver.expr(func, scope)
        if len(names) == 1 and next(iter(names)) in wanted:
            out.setdefault(next(iter(names)), []).append(construction.to_value(node, scope, names_of, params))
    return {qual: tuple(values) for qual, values in out.items()}
