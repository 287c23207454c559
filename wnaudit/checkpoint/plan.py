"""From stored key names and shapes to findings (WN301-WN303) and a fold plan.

Torch-free: the safetensors audit runs it on header shapes alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from ..core.catalogue import FOLDED_LOAD_HINT, Kind
from ..core.stored_keys import OrphanKey, StoredGroup
from ..common.findings import Finding, finding
from .codes import BY_CODE
from ..common.options import RunOptions
from ..core.shapes import group_stored_tensors, StoredStateError, check_group_shapes, key_clashes

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
    #: WN304 findings: a half without its sibling, reported and left as stored.
    orphans: list[Finding] = field(default_factory=list)

    @property
    def to_fold(self) -> list[Planned]:
        return [item for item in self.items if item.fold]

    def extend(self, other: "Plan") -> None:
        self.items.extend(other.items)
        self.problems.extend(other.problems)
        self.orphans.extend(other.orphans)


def _message(group: StoredGroup, qualify: Callable[[str], str], options: RunOptions) -> str:
    stored = ", ".join(qualify(key) for key in group.keys)
    label = group.spelling.label
    if group.spelling.kind is not Kind.WEIGHT_NORM and not options.spectral:
        how = "fold it with `wnaudit --fix --fold-spectral` (eval-mode sigma from the stored u/v)"
    elif options.fold_needs_review:
        how = f"found by walking a directory, so folded only with `wnaudit --fix --unsafe-fixes`: {FOLDED_LOAD_HINT}"
    elif group.spelling.kind is Kind.WEIGHT_NORM:
        how = "`wnaudit --fix` folds it into one plain weight, exactly"
    else:
        how = "`wnaudit --fix --fold-spectral` folds it with eval-mode sigma from the stored u/v"
    return f"{label} stored unfolded ({stored}): a model loading it keeps the norm live, recomputed on every forward; {how}"


ORPHAN_CODE = "WN304"


def _orphan_finding(path: str, orphan: OrphanKey, qualify: Callable[[str], str]) -> Finding:
    """A lone half is not unreadable input: the file loads, and a custom parametrization may be valid."""
    missing = ", ".join(qualify(key) for key in orphan.missing)
    message = (
        f"{orphan.spelling.label} entry {qualify(orphan.key)} stored without {missing}: left as stored, not folded; "
        "a lost half means a broken save, a custom parametrization with other originals may be fine"
    )
    return finding(BY_CODE[ORPHAN_CODE], path, message, fixable=False, object=qualify(orphan.key))


def plan_table(
    path: str,
    keys: Sequence[str],
    shapes: Mapping[str, Shape],
    options: RunOptions,
    qualify: Callable[[str], str] = lambda key: key,
) -> Plan:
    """Findings for one state dict's keys; ``qualify`` adds the nesting prefix."""
    plan = Plan()
    # Shapes decide whether an ordinary ``gain_g``/``gain_v`` is a weight-norm pair at all.
    groups, orphans = group_stored_tensors(list(keys), shapes)
    for orphan in orphans:
        if options.config.enabled(ORPHAN_CODE, path):
            plan.orphans.append(_orphan_finding(path, orphan, qualify))
    reported = [g for g in groups if g.spelling.checkpoint_code is not None and g.spelling.kind is not Kind.OTHER]
    for clash in key_clashes(reported, keys):
        plan.problems.append(f"{qualify(clash.key)}: {clash.problem}")
    for group in reported:
        code = group.spelling.checkpoint_code
        assert code is not None  # filtered above
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
