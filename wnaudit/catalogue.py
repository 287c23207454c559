"""The single catalogue of reparametrization spellings.

Every other part of wnaudit (source rules, module inspector, checkpoint reader,
fold) asks this module which API paths, hook classes and state-dict key patterns
exist.  Nothing else hard-codes an API path or a key name, so supporting a new
spelling is a change here and nowhere else.

This module must never import torch: the source lint and the pre-commit hook
read it on machines without torch.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class Kind(enum.Enum):
    """What a reparametrization computes."""

    WEIGHT_NORM = "weight norm"
    SPECTRAL_NORM = "spectral norm"
    OTHER = "parametrization"


class Style(enum.Enum):
    """How torch applies it: a parametrization (modern) or a forward-pre-hook (legacy)."""

    MODERN = "modern"
    LEGACY = "legacy"


@dataclass(frozen=True)
class Spelling:
    """One way torch spells a reparametrization, with every name wnaudit matches on."""

    kind: Kind
    style: Style
    #: Qualified names of the functions that apply it (all public aliases).
    apply_apis: tuple[str, ...]
    #: Qualified names of the functions that remove it.
    remove_apis: tuple[str, ...]
    #: Qualified name of the hook class (legacy) or parametrization class (modern).
    implementation: str
    #: Finding code when found live in a module.
    module_code: str
    #: Finding code when found stored unfolded in a checkpoint (None: not reported).
    checkpoint_code: str | None

    @property
    def label(self) -> str:
        return f"{self.kind.value} ({self.style.value})"


WEIGHT_NORM_MODERN = Spelling(
    kind=Kind.WEIGHT_NORM,
    style=Style.MODERN,
    apply_apis=("torch.nn.utils.parametrizations.weight_norm",),
    remove_apis=("torch.nn.utils.parametrize.remove_parametrizations",),
    implementation="torch.nn.utils.parametrizations._WeightNorm",
    module_code="WN201",
    checkpoint_code="WN301",
)

WEIGHT_NORM_LEGACY = Spelling(
    kind=Kind.WEIGHT_NORM,
    style=Style.LEGACY,
    apply_apis=("torch.nn.utils.weight_norm", "torch.nn.utils.weight_norm.weight_norm"),
    remove_apis=(
        "torch.nn.utils.remove_weight_norm",
        "torch.nn.utils.weight_norm.remove_weight_norm",
    ),
    implementation="torch.nn.utils.weight_norm.WeightNorm",
    module_code="WN202",
    checkpoint_code="WN302",
)

SPECTRAL_NORM_MODERN = Spelling(
    kind=Kind.SPECTRAL_NORM,
    style=Style.MODERN,
    apply_apis=("torch.nn.utils.parametrizations.spectral_norm",),
    remove_apis=("torch.nn.utils.parametrize.remove_parametrizations",),
    implementation="torch.nn.utils.parametrizations._SpectralNorm",
    module_code="WN203",
    checkpoint_code="WN303",
)

SPECTRAL_NORM_LEGACY = Spelling(
    kind=Kind.SPECTRAL_NORM,
    style=Style.LEGACY,
    apply_apis=("torch.nn.utils.spectral_norm", "torch.nn.utils.spectral_norm.spectral_norm"),
    remove_apis=(
        "torch.nn.utils.remove_spectral_norm",
        "torch.nn.utils.spectral_norm.remove_spectral_norm",
    ),
    implementation="torch.nn.utils.spectral_norm.SpectralNorm",
    module_code="WN203",
    checkpoint_code="WN303",
)

OTHER_PARAMETRIZATION = Spelling(
    kind=Kind.OTHER,
    style=Style.MODERN,
    apply_apis=("torch.nn.utils.parametrize.register_parametrization",),
    remove_apis=("torch.nn.utils.parametrize.remove_parametrizations",),
    implementation="torch.nn.utils.parametrize.ParametrizationList",
    module_code="WN204",
    checkpoint_code=None,
)

SPELLINGS: tuple[Spelling, ...] = (
    WEIGHT_NORM_MODERN,
    WEIGHT_NORM_LEGACY,
    SPECTRAL_NORM_MODERN,
    SPECTRAL_NORM_LEGACY,
    OTHER_PARAMETRIZATION,
)

#: Module-inspector code for a folded weight left as a plain or inference tensor.
HALF_FOLDED_CODE = "WN205"

#: Where torch keeps parametrizations on a module, and the names of their originals.
PARAMETRIZATIONS_ATTR = "parametrizations"
ORIGINAL = "original"
#: The modern weight norm stores g as original0 and v as original1.
WEIGHT_NORM_G_INDEX = 0
WEIGHT_NORM_V_INDEX = 1

#: Suffixes the legacy hooks append to the parameter name.
LEGACY_WEIGHT_NORM_SUFFIXES = ("_g", "_v")
LEGACY_SPECTRAL_NORM_SUFFIXES = ("_orig", "_u", "_v")
#: Buffers of the modern spectral-norm parametrization (index 0 in its list).
MODERN_SPECTRAL_NORM_BUFFERS = ("_u", "_v")

#: Name of the load-state-dict pre-hook that the modern weight norm installs to
#: accept legacy ``NAME_g``/``NAME_v`` keys; the fold removes it.
WEIGHT_NORM_COMPAT_HOOK = "_weight_norm_compat_hook"
#: Legacy spectral norm's state-dict hook classes; the fold removes them.
SPECTRAL_NORM_STATE_HOOKS = (
    "torch.nn.utils.spectral_norm.SpectralNormStateDictHook",
    "torch.nn.utils.spectral_norm.SpectralNormLoadStateDictPreHook",
)

#: The module holding torch's parametrization machinery, and its cache switch:
#: a fold inside ``parametrize.cached()`` would store a stale value, so it is refused.
PARAMETRIZE_MODULE = "torch.nn.utils.parametrize"
PARAMETRIZE_CACHE_FLAG = "_cache_enabled"

#: Words in a condition showing that code checks which spelling a module carries
#: before removing it (``if hasattr(m, "parametrizations")``, ``"weight_g" in
#: m._parameters``, ``isinstance(hook, WeightNorm)``): such a removal is guarded.
SPELLING_GUARD_WORDS = re.compile(
    r"parametriz|WeightNorm|SpectralNorm|_forward_pre_hooks|\w_g\b.*\w_v\b|weight_g\b|weight_orig\b"
)

#: Names a folded weight-like tensor usually has; used to spot half-done folds.
WEIGHT_LIKE_NAME = re.compile(r"^weight(_(ih|hh|hr)_l\d+(_reverse)?)?$")


def spelling_for_api(qualified_name: str) -> tuple[Spelling, str] | None:
    """Return (spelling, "apply" | "remove") for a qualified API name, or None."""
    for spelling in SPELLINGS:
        if qualified_name in spelling.apply_apis:
            return spelling, "apply"
    for spelling in SPELLINGS:
        if spelling.kind is not Kind.OTHER and qualified_name in spelling.remove_apis:
            return spelling, "remove"
    return None


# --------------------------------------------------------------------------
# State-dict key patterns
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredGroup:
    """The state-dict entries that together store one reparametrized tensor.

    ``folded_key`` is the key the tensor has once folded; ``parts`` maps a role
    (``g``, ``v``, ``orig``, ``u``) to the stored key.
    """

    spelling: Spelling
    folded_key: str
    parts: tuple[tuple[str, str], ...]

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
    ordered = list(dict.fromkeys(keys))
    present = set(ordered)
    groups: list[StoredGroup] = []
    orphans: list[OrphanKey] = []
    claimed: set[str] = set()

    def add(group: StoredGroup) -> None:
        groups.append(group)
        claimed.update(group.keys)

    for key in ordered:
        if key in claimed:
            continue
        modern = _split_modern(key)
        if modern is not None:
            prefix, name, rest = modern
            base = f"{prefix}{PARAMETRIZATIONS_ATTR}.{name}"
            folded = f"{prefix}{name}"
            g_key = f"{base}.{ORIGINAL}{WEIGHT_NORM_G_INDEX}"
            v_key = f"{base}.{ORIGINAL}{WEIGHT_NORM_V_INDEX}"
            orig_key = f"{base}.{ORIGINAL}"
            u_key, sv_key = (f"{base}.0.{buf}" for buf in MODERN_SPECTRAL_NORM_BUFFERS)
            if rest in (f"{ORIGINAL}{WEIGHT_NORM_G_INDEX}", f"{ORIGINAL}{WEIGHT_NORM_V_INDEX}"):
                if g_key in present and v_key in present:
                    add(StoredGroup(WEIGHT_NORM_MODERN, folded, (("g", g_key), ("v", v_key))))
                else:
                    missing = tuple(k for k in (g_key, v_key) if k not in present)
                    orphans.append(OrphanKey(key, WEIGHT_NORM_MODERN, missing))
                    claimed.add(key)
            elif rest in (ORIGINAL, f"0.{MODERN_SPECTRAL_NORM_BUFFERS[0]}", f"0.{MODERN_SPECTRAL_NORM_BUFFERS[1]}"):
                if orig_key in present and u_key in present and sv_key in present:
                    add(
                        StoredGroup(
                            SPECTRAL_NORM_MODERN,
                            folded,
                            (("orig", orig_key), ("u", u_key), ("v", sv_key)),
                        )
                    )
                elif rest == ORIGINAL and u_key not in present and sv_key not in present:
                    add(StoredGroup(OTHER_PARAMETRIZATION, folded, (("orig", orig_key),)))
                else:
                    missing = tuple(k for k in (orig_key, u_key, sv_key) if k not in present)
                    orphans.append(OrphanKey(key, SPECTRAL_NORM_MODERN, missing))
                    claimed.add(key)
            continue
        for suffix in ("_g", "_v", "_orig", "_u"):
            if not key.endswith(suffix):
                continue
            folded = key[: -len(suffix)]
            if not folded or folded.endswith("."):
                continue
            wn = {role: folded + sfx for role, sfx in zip(("g", "v"), LEGACY_WEIGHT_NORM_SUFFIXES)}
            sn = {role: folded + sfx for role, sfx in zip(("orig", "u", "v"), LEGACY_SPECTRAL_NORM_SUFFIXES)}
            if wn["g"] in present and wn["v"] in present and sn["orig"] not in present:
                add(StoredGroup(WEIGHT_NORM_LEGACY, folded, tuple(wn.items())))
            elif all(k in present for k in sn.values()):
                add(StoredGroup(SPECTRAL_NORM_LEGACY, folded, tuple(sn.items())))
            elif not WEIGHT_LIKE_NAME.match(folded.rpartition(".")[2]):
                # Orphan detection only for weight-like names: "gain_g" alone
                # is somebody's ordinary tensor, "conv.weight_g" alone is not.
                pass
            elif suffix == "_g" and folded + "_v" not in present:
                orphans.append(OrphanKey(key, WEIGHT_NORM_LEGACY, (folded + "_v",)))
                claimed.add(key)
            elif suffix == "_orig":
                missing = tuple(k for k in sn.values() if k not in present)
                orphans.append(OrphanKey(key, SPECTRAL_NORM_LEGACY, missing))
                claimed.add(key)
            # A lone NAME_v or NAME_u is an ordinary tensor name far too often
            # (attention "v" projections, "_u" buffers) to call it an orphan.
            break
    return groups, orphans
