"""Which stored state-dict keys together hold one reparametrized tensor.

Torch-free: the checkpoint audit runs it on key names alone (safetensors
headers, the shape-only zip reader).  The key patterns themselves come from
the catalogue; this module only applies them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .catalogue import (
    LEGACY_SPECTRAL_NORM_SUFFIXES,
    LEGACY_WEIGHT_NORM_SUFFIXES,
    MODERN_SPECTRAL_NORM_BUFFERS,
    ORIGINAL,
    OTHER_PARAMETRIZATION,
    PARAMETRIZATIONS_ATTR,
    SPECTRAL_NORM_LEGACY,
    SPECTRAL_NORM_MODERN,
    WEIGHT_LIKE_NAME,
    WEIGHT_NORM_G_INDEX,
    WEIGHT_NORM_LEGACY,
    WEIGHT_NORM_MODERN,
    WEIGHT_NORM_V_INDEX,
    Spelling,
)


@dataclass(frozen=True)
class StoredGroup:
    """The state-dict entries that together store one reparametrized tensor.

    ``folded_key`` is the key the tensor has once folded; ``parts`` maps a role
    (``g``, ``v``, ``orig``, ``u``) to the stored key.  ``stacked`` lists the
    keys of state that another parametrization stacked on the same tensor
    stored under the same ``parametrizations.NAME.`` prefix: the keys do not
    say what that parametrization computes, so such a group cannot be folded.
    """

    spelling: Spelling
    folded_key: str
    parts: tuple[tuple[str, str], ...]
    stacked: tuple[str, ...] = ()

    def key(self, role: str) -> str:
        return dict(self.parts)[role]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for _, key in self.parts)


@dataclass(frozen=True)
class OrphanKey:
    """A key that looks like half of a stored pair whose other half is missing."""

    key: str
    spelling: Spelling
    missing: tuple[str, ...]


_MODERN_KEY = re.compile(
    r"^(?P<prefix>(?:.*\.)?)" + PARAMETRIZATIONS_ATTR + r"\.(?P<name>[^.]+)\.(?P<rest>.+)$"
)


def _split_modern(key: str) -> tuple[str, str, str] | None:
    match = _MODERN_KEY.match(key)
    if match is None:
        return None
    return match.group("prefix"), match.group("name"), match.group("rest")


def group_stored_keys(keys: "list[str] | tuple[str, ...] | set[str]") -> tuple[list[StoredGroup], list[OrphanKey]]:
    """Find every reparametrized tensor stored in a state dict, from its key names alone.

    Legacy ``NAME_v`` is shared by weight norm and spectral norm: a ``NAME_orig``
    sibling makes it spectral norm, a ``NAME_g`` sibling weight norm.  The result
    is in the order the keys first appear, so reports are stable.
    """
    grouping = _Grouping(list(dict.fromkeys(keys)))
    for key in grouping.ordered:
        if key in grouping.claimed:
            continue
        modern = _split_modern(key)
        if modern is not None:
            grouping.modern(key, *modern)
        else:
            grouping.legacy(key)
    return grouping.groups, grouping.orphans


class _Grouping:
    """The state of one :func:`group_stored_keys` pass: what is present, found and claimed."""

    def __init__(self, ordered: list[str]) -> None:
        self.ordered = ordered
        self.present = set(ordered)
        self.groups: list[StoredGroup] = []
        self.orphans: list[OrphanKey] = []
        self.claimed: set[str] = set()
        self.by_base: dict[str, list[str]] = {}
        for key in ordered:
            split = _split_modern(key)
            if split is not None:
                self.by_base.setdefault(f"{split[0]}{PARAMETRIZATIONS_ATTR}.{split[1]}", []).append(key)

    def add(self, group: StoredGroup) -> None:
        self.groups.append(group)
        self.claimed.update(group.keys)
        self.claimed.update(group.stacked)

    def orphan(self, key: str, spelling: Spelling, candidates: tuple[str, ...]) -> None:
        self.orphans.append(OrphanKey(key, spelling, tuple(k for k in candidates if k not in self.present)))
        self.claimed.add(key)

    def stacked_state(self, base: str, parts: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(key for key in self.by_base.get(base, ()) if key not in parts)

    def modern(self, key: str, prefix: str, name: str, rest: str) -> None:
        """``P.parametrizations.NAME.*``: modern weight norm, spectral norm, or another parametrization."""
        base = f"{prefix}{PARAMETRIZATIONS_ATTR}.{name}"
        folded = f"{prefix}{name}"
        g_key, v_key = f"{base}.{ORIGINAL}{WEIGHT_NORM_G_INDEX}", f"{base}.{ORIGINAL}{WEIGHT_NORM_V_INDEX}"
        orig_key = f"{base}.{ORIGINAL}"
        u_key, sv_key = (f"{base}.0.{buf}" for buf in MODERN_SPECTRAL_NORM_BUFFERS)
        if rest in (f"{ORIGINAL}{WEIGHT_NORM_G_INDEX}", f"{ORIGINAL}{WEIGHT_NORM_V_INDEX}"):
            if g_key in self.present and v_key in self.present:
                self.add(StoredGroup(WEIGHT_NORM_MODERN, folded, (("g", g_key), ("v", v_key)), self.stacked_state(base, (g_key, v_key))))
            else:
                self.orphan(key, WEIGHT_NORM_MODERN, (g_key, v_key))
        elif rest in (ORIGINAL, f"0.{MODERN_SPECTRAL_NORM_BUFFERS[0]}", f"0.{MODERN_SPECTRAL_NORM_BUFFERS[1]}"):
            spectral = (orig_key, u_key, sv_key)
            if all(k in self.present for k in spectral):
                parts = (("orig", orig_key), ("u", u_key), ("v", sv_key))
                self.add(StoredGroup(SPECTRAL_NORM_MODERN, folded, parts, self.stacked_state(base, spectral)))
            elif rest == ORIGINAL and u_key not in self.present and sv_key not in self.present:
                self.add(StoredGroup(OTHER_PARAMETRIZATION, folded, (("orig", orig_key),)))
            else:
                self.orphan(key, SPECTRAL_NORM_MODERN, spectral)

    def legacy(self, key: str) -> None:
        """``P.NAME_g``/``_v`` (weight norm) or ``P.NAME_orig``/``_u``/``_v`` (spectral norm)."""
        for suffix in ("_g", "_v", "_orig", "_u"):
            if not key.endswith(suffix):
                continue
            folded = key[: -len(suffix)]
            if not folded or folded.endswith("."):
                continue
            self._legacy_named(key, suffix, folded)
            break

    def _legacy_named(self, key: str, suffix: str, folded: str) -> None:
        wn = {role: folded + sfx for role, sfx in zip(("g", "v"), LEGACY_WEIGHT_NORM_SUFFIXES)}
        sn = {role: folded + sfx for role, sfx in zip(("orig", "u", "v"), LEGACY_SPECTRAL_NORM_SUFFIXES)}
        if wn["g"] in self.present and wn["v"] in self.present and sn["orig"] not in self.present:
            self.add(StoredGroup(WEIGHT_NORM_LEGACY, folded, tuple(wn.items())))
        elif all(k in self.present for k in sn.values()):
            self.add(StoredGroup(SPECTRAL_NORM_LEGACY, folded, tuple(sn.items())))
        elif not WEIGHT_LIKE_NAME.match(folded.rpartition(".")[2]):
            # Orphan detection only for weight-like names: "gain_g" alone
            # is somebody's ordinary tensor, "conv.weight_g" alone is not.
            return
        elif suffix == "_g" and folded + "_v" not in self.present:
            self.orphan(key, WEIGHT_NORM_LEGACY, (folded + "_v",))
        elif suffix == "_orig":
            self.orphan(key, SPECTRAL_NORM_LEGACY, tuple(sn.values()))
        # A lone NAME_v or NAME_u is an ordinary tensor name far too often
        # (attention "v" projections, "_u" buffers) to call it an orphan.
