"""The recorded calls resolved: norm applications, removals with their guards, and each unit's references."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...core import catalogue
from ..model import Application, FileSummary, Misplaced, Removal, Unit
from ..resolve import Resolver
from .aliases import Aliases, expand_aliases, is_api_name
from .bindings import chosen_legacy_weight_norm
from .collector import Collector
from .guards import guard
from .records import CallRecord

_WEIGHT_NORM = catalogue.Kind.WEIGHT_NORM.value
_MODERN = catalogue.Style.MODERN.value
_LEGACY = catalogue.Style.LEGACY.value


@dataclass
class _CallRoles:
    """What the catalogue says one call's callee names do."""

    #: Norm kind -> the styles applied (``weight_norm`` -> {``legacy``, ``modern``}).
    applied: dict[str, set[str]] = field(default_factory=dict)
    #: The remover called (the modern one when names of both are possible), with the API name.
    removal: tuple[catalogue.Spelling, str] | None = None
    #: Every name is the legacy weight-norm applier.
    all_legacy_weight_norm: bool = True


class CallReader:
    """Resolve the recorded calls into applications, removals and the names each unit refers to."""

    def __init__(self, collector: Collector, resolver: Resolver, summary: FileSummary, aliases: Aliases) -> None:
        self.collector = collector
        self.resolver = resolver
        self.summary = summary
        self.aliases = aliases
        #: Unit -> norm kind -> styles applied directly in it.
        self.direct: dict[str, dict[str, set[str]]] = {}
        #: Unit -> project names it refers to.
        self.refs: dict[str, set[str]] = {unit: set() for unit in collector.units}
        self.refs.setdefault(summary.module, set())
        #: Functions (by number) that call a modern / a legacy remover: a removal next to the other spelling's.
        self.modern_remover_in: set[int] = set()
        self.legacy_remover_in: set[int] = set()
        #: Removals, kept until every function's removers are known.
        self.pending: list[tuple[CallRecord, catalogue.Spelling, str]] = []
        #: Units whose norm applications go to their own parameter and are returned (``apply_parametrization_norm``),
        #: and the names called with a module that already exists: such a call norms that module in place.
        self.parameter_appliers: set[str] = set()
        self.called_on_existing: set[str] = set()

    def read(self, call: CallRecord) -> None:
        names = self.resolver.expr(call.func, call.scope)
        if not names:
            return
        names, imported = expand_aliases(names, self.aliases)
        self.refs.setdefault(call.unit, set()).update(n for n in names if not n.startswith("torch."))
        if not call.first_is_call:
            self.called_on_existing.update(names)
        roles = self._roles(call, names)
        if roles.applied:
            self._record_applications(call, names, roles, imported)
        if roles.removal is not None:
            spelling, api = roles.removal
            remover_in = self.modern_remover_in if spelling.style is catalogue.Style.MODERN else self.legacy_remover_in
            remover_in.add(call.function)
            self.pending.append((call, spelling, api))

    def _roles(self, call: CallRecord, names: frozenset[str]) -> _CallRoles:
        """What the names apply or remove; a remover imported from the wrong module is noted as misplaced."""
        roles = _CallRoles()
        for name in sorted(names):
            found = catalogue.spelling_for_api(name)
            if found is None:
                roles.all_legacy_weight_norm = False
                real = catalogue.MISPLACED_REMOVERS.get(name)
                if real is not None:
                    self.summary.misplaced.append(Misplaced(call.site, name, real))
                continue
            spelling, role = found
            if not (spelling.kind is catalogue.Kind.WEIGHT_NORM and spelling.style is catalogue.Style.LEGACY and role == "apply"):
                roles.all_legacy_weight_norm = False
            if role == "apply":
                roles.applied.setdefault(spelling.kind.value, set()).add(spelling.style.value)
            elif role == "remove" and (roles.removal is None or spelling.style is catalogue.Style.MODERN):
                roles.removal = (spelling, name)
        return roles

    def _record_applications(self, call: CallRecord, names: frozenset[str], roles: _CallRoles, imported: str) -> None:
        """One application per norm kind the call may apply."""
        summary = self.summary
        chosen = (
            chosen_legacy_weight_norm(call, self.resolver, self.collector.choice_sites)
            if _WEIGHT_NORM in roles.applied else None
        )
        if call.returns_parameter:
            self.parameter_appliers.add(call.unit)
        elif not call.first_is_call:
            summary.applies_in_place = True
        for kind, styles in roles.applied.items():
            self.direct.setdefault(call.unit, {}).setdefault(kind, set()).update(styles)
            picked = chosen if kind == _WEIGHT_NORM else None
            summary.applications.append(
                Application(
                    site=call.site,
                    kind=kind,
                    styles=frozenset(styles),
                    legacy_only=kind == _WEIGHT_NORM and (roles.all_legacy_weight_norm or picked is not None),
                    api=min(n for n in names if _applies_kind(n, kind)),
                    via=picked[0] if picked is not None else "",
                    binding=picked[1] if picked is not None else None,
                    callee=ast.unparse(call.func),
                    imported=imported,
                )
            )

    def finish_removals(self) -> None:
        """The removals, each with its guard (which needs every remover of its function)."""
        for call, spelling, api in self.pending:
            self.summary.removals.append(self._removal(call, spelling, api))
        if self.parameter_appliers & self.called_on_existing:
            self.summary.applies_in_place = True  # a helper of the file norms a module that already exists

    def _removal(self, call: CallRecord, spelling: catalogue.Spelling, api: str) -> Removal:
        """The removal with its guard; the tensor-name facts belong to the modern remover only."""
        modern = spelling.style is catalogue.Style.MODERN
        other_spelling_nearby = call.function in (self.legacy_remover_in if modern else self.modern_remover_in)
        return Removal(
            site=call.site,
            kind="" if modern else spelling.kind.value,
            style=_MODERN if modern else _LEGACY,
            api=api,
            guard=guard(call.caught, call.ifs, other_spelling_nearby, modern=modern),
            missing_tensor_name=modern and call.missing_tensor_name,
            leave_parametrized_false=modern and call.leave_parametrized_false,
            star_args=call.star_args,
            self_attr=call.self_attr,
            element=call.element,
            method=call.method,
            when=call.when,
        )

    def finish_units(self) -> None:
        """Each unit's directly applied norms and the project names it refers to (calls and bases)."""
        for unit, base, scope in self.collector.bases:
            self.refs.setdefault(unit, set()).update(n for n in self.resolver.expr(base, scope) if not is_api_name(n))
        for unit in sorted(self.refs):
            kinds = self.direct.get(unit, {})
            self.summary.units[unit] = Unit(
                direct=tuple(sorted((k, frozenset(v)) for k, v in kinds.items())),
                refs=tuple(sorted(self.refs[unit])),
            )


def _applies_kind(name: str, kind: str) -> bool:
    found = catalogue.spelling_for_api(name)
    return found is not None and found[1] == "apply" and found[0].kind.value == kind
