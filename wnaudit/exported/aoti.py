"""The weight-norm pairs among an AOTInductor package's constants.

A package holds compiled code, not a graph: the weight norm is inside its
kernels, but the constants keep the names the model gave them
(``constants_info_[i].original_fqn`` in the generated wrapper source, or the
keys of a weights config when weights live outside the library).  Pairs are
found by the catalogue's stored-key grouping, as in checkpoints.
"""

from __future__ import annotations

from ..core.catalogue import PT2_AOTI_CONSTANT_FQN, Kind
from ..core.stored_keys import StoredGroup, group_stored_keys
from .archive import ArchiveContents


def constant_names(contents: ArchiveContents) -> list[str]:
    """Every constant's original name, in the order the package lists them, each once."""
    names: list[str] = []
    for member in sorted(contents.aoti_sources):
        names.extend(match.group(1) for match in PT2_AOTI_CONSTANT_FQN.finditer(contents.aoti_sources[member]))
    for member in sorted(contents.aoti_weight_configs):
        names.extend(str(key) for key in contents.aoti_weight_configs[member])
    return list(dict.fromkeys(names))


def weight_norm_pairs(contents: ArchiveContents) -> list[StoredGroup]:
    groups, _ = group_stored_keys(constant_names(contents))
    return [group for group in groups if group.spelling.kind is Kind.WEIGHT_NORM]
