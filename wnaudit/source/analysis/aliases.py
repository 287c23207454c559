"""What a name stands for beyond this file: project names bound to torch APIs elsewhere, and the APIs' own names."""

from __future__ import annotations

import ast

from .. import construction
from ..resolve import API_ROOTS, Resolver, Scope

#: Qualified project name -> the catalogue API names it is bound to (found in other files).
Aliases = dict[str, frozenset[str]]


def expand_aliases(names: frozenset[str], aliases: Aliases) -> tuple[frozenset[str], str]:
    """A project name bound to a torch API elsewhere is that API here; also the one project name called, if so."""
    if not aliases:
        return names, ""
    expanded = [aliases[n] for n in names if n in aliases]
    if not expanded:
        return names, ""
    imported = next(iter(names)) if len(names) == 1 else ""
    return names.difference(aliases).union(*expanded), imported


def names_of(resolver: Resolver, aliases: Aliases) -> construction.NamesOf:
    """What a callee may be: the resolver's names, a project alias of a torch API read as that API."""

    def names_of(callee: ast.expr, scope: Scope) -> frozenset[str]:
        names = resolver.expr(callee, scope)
        expanded = [aliases[n] for n in names if n in aliases]
        return names.difference(aliases).union(*expanded) if expanded else names

    return names_of


def is_api_name(qualified: str) -> bool:
    """A name inside the APIs' own package (``torch...``), not the user's code.

    Compared by top-level package, so a user package named ``torchvoc`` is
    still followed across files.
    """
    return qualified.partition(".")[0] in API_ROOTS
