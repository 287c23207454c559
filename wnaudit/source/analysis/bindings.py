"""What the file's names are bound to: module-level exports, and flag choices of a legacy weight norm.

``norm_f = weight_norm if flag else spectral_norm`` makes every call through
``norm_f`` a possible legacy application; the WN103 fix rewrites the
``weight_norm`` alternative where it is written, never the call.
"""

from __future__ import annotations

import ast

from ...core import catalogue
from ..model import Site
from ..resolve import Resolver, Scope
from .records import CallRecord


def chosen_legacy_weight_norm(call: CallRecord, resolver: Resolver, choice_sites: dict[int, Site]) -> tuple[str, Site] | None:
    """``norm_f(conv)`` where ``norm_f = weight_norm if flag else spectral_norm`` (legacy weight norm): the name and where ``weight_norm`` is written."""
    func = call.func
    if not isinstance(func, ast.Name):
        return None
    site = _bound_choice(func.id, call.scope, resolver, choice_sites)
    return (func.id, site) if site is not None else None


def _bound_choice(name: str, scope: Scope, resolver: Resolver, choice_sites: dict[int, Site]) -> Site | None:
    """Where the legacy ``weight_norm`` alternative of ``name``'s binding is written, when that binding is a flag choice.

    The one binding of the name is a conditional choice, exactly one
    alternative the legacy weight norm, none the modern one and none known to
    be anything but a norm applier (a parameter is unknown): whenever the flag
    selects weight norm, a call through the name applies the deprecated hook.
    """
    bound = Resolver.bindings_of(name, scope)
    if bound is None or len(bound[1]) != 1 or bound[1][0][0] != "expr":
        return None
    _, value, where = bound[1][0]
    if not isinstance(value, ast.BoolOp):
        return None
    legacy: list[Site] = []
    for leaf in value.values:
        spellings = _applier_spellings(leaf, where, resolver)
        if spellings is None:
            return None  # an alternative known to be something other than a norm applier
        if any(spelling.kind is catalogue.Kind.WEIGHT_NORM for spelling in spellings):
            if not _only_legacy_weight_norm(spellings) or id(leaf) not in choice_sites:
                return None
            legacy.append(choice_sites[id(leaf)])
    return legacy[0] if len(legacy) == 1 else None


def _applier_spellings(leaf: ast.expr, scope: Scope, resolver: Resolver) -> list[catalogue.Spelling] | None:
    """The spellings an alternative of a choice may apply (None: it may be something other than a norm applier)."""
    spellings: list[catalogue.Spelling] = []
    for name in resolver.expr(leaf, scope):
        found = catalogue.spelling_for_api(name)
        if found is None or found[1] != "apply":
            return None
        spellings.append(found[0])
    return spellings


def _only_legacy_weight_norm(spellings: list[catalogue.Spelling]) -> bool:
    return {s.kind for s in spellings} == {catalogue.Kind.WEIGHT_NORM} and {s.style for s in spellings} == {catalogue.Style.LEGACY}


def module_choices(module_scope: Scope, resolver: Resolver, choice_sites: dict[int, Site]) -> dict[str, Site]:
    """Module-level names bound to a flag choice of a legacy weight norm (other files may call them)."""
    out: dict[str, Site] = {}
    for name, bindings in module_scope.bindings.items():
        if len(bindings) != 1 or bindings[0][0] != "expr" or not isinstance(bindings[0][1], ast.BoolOp):
            continue  # the cheap test first: most module-level names are imports, classes and functions
        site = _bound_choice(name, module_scope, resolver, choice_sites)
        if site is not None:
            out[name] = site
    return out


def exports(module_scope: Scope, resolver: Resolver) -> dict[str, tuple[str, ...]]:
    """Module-level names bound to something other than the file's own classes and functions.

    Other files that import them (re-exports, a spelling chosen here) are
    resolved through this table.
    """
    out: dict[str, tuple[str, ...]] = {}
    own = module_scope.qualname
    for name, bindings in module_scope.bindings.items():
        if all(b[0] == "qual" and b[1] == (f"{own}.{name}" if own else name) for b in bindings):
            continue  # a def or class: a unit of its own
        values = resolver.name(name, module_scope)
        if values:
            out[name] = tuple(sorted(values))
    return out
