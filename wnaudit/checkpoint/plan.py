"""From stored key names and shapes to findings (WN301-WN303) and a fold plan.

Torch-free: the safetensors audit runs it on header shapes alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence, cast

from ..core.catalogue import Kind
from ..core.stored_keys import StoredGroup, group_stored_keys
from ..common.findings import Finding, finding
from .codes import BY_CODE
from ..common.options import RunOptions
from ..core.shapes import StoredStateError, check_group_shapes, key_clashes, orphan_error

Shape = Sequence[int]


@dataclass
class Planned:
    """One stored reparametrization: its finding, and whether this run folds it."""

    group: StoredGroup
    finding: Finding
    fold: bool


@dataclass
class Plan:
    items: list[Planned] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def to_fold(self) -> list[Planned]:
        return [item for item in self.items if item.fold]

    def extend(self, other: "Plan") -> None:
        self.items.extend(other.items)
        self.problems.extend(other.problems)


def _message(group: StoredGroup, qualify: Callable[[str], str], options: RunOptions) -> str:
    stored = ", ".join(qualify(key) for key in group.keys)
    label = group.spelling.label
    if group.spelling.kind is Kind.WEIGHT_NORM:
        how = "`wnaudit --fix` folds it into one plain weight, exactly"
    elif options.spectral:
        how = "`wnaudit --fix --fold-spectral` folds it with eval-mode sigma from the stored u/v"
    else:
        how = "fold it with `wnaudit --fix --fold-spectral` (eval-mode sigma from the stored u/v)"
    return f"{label} stored unfolded ({stored}): a model loading it keeps the norm live, recomputed on every forward; {how}"


def plan_table(
    path: str,
    keys: Sequence[str],
    shapes: Mapping[str, Shape],
    options: RunOptions,
    qualify: Callable[[str], str] = lambda key: key,
) -> Plan:
    """Findings for one state dict's keys; ``qualify`` adds the nesting prefix."""
    plan = Plan()
    groups, orphans = group_stored_keys(list(keys))
    for orphan in orphans:
        error = orphan_error(orphan)
        plan.problems.append(f"{qualify(error.key)}: {error.problem}")
    reported = [g for g in groups if g.spelling.checkpoint_code is not None and g.spelling.kind is not Kind.OTHER]
    for clash in key_clashes(reported, keys):
        plan.problems.append(f"{qualify(clash.key)}: {clash.problem}")
    for group in reported:
        code = cast(str, group.spelling.checkpoint_code)  # ``reported`` holds only groups with one
        try:
            check_group_shapes(group, shapes)
        except StoredStateError as error:
            plan.problems.append(f"{qualify(error.key)}: {error.problem}")
            continue
        if not options.config.enabled(code, path):
            continue
        fixable = group.spelling.kind is Kind.WEIGHT_NORM or options.spectral
        item = finding(BY_CODE[code], path, _message(group, qualify, options), fixable=fixable, object=qualify(group.folded_key))
        plan.items.append(Planned(group, item, fold=fixable and options.fix))
    return plan
