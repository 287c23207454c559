"""Find the reparametrizations live in a loaded module, without evaluating any.

Shared by the fold and the inspector.  Nothing here reads a parametrized
attribute: reading ``.weight`` of a spectral-normed module in training mode
runs a power iteration and changes its state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from . import torch_api
from .catalogue import LEGACY_SPECTRAL_NORM_SUFFIXES, LEGACY_WEIGHT_NORM_SUFFIXES, ORIGINAL, OTHER_PARAMETRIZATION, PARAMETRIZATIONS_ATTR, SPECTRAL_NORM_LEGACY, SPECTRAL_NORM_MODERN, WEIGHT_NORM_LEGACY, WEIGHT_NORM_MODERN, Kind, Spelling


@dataclass(frozen=True)
class LiveReparametrization:
    """One tensor of one module that is computed from other tensors at run time.

    ``chain`` lists the spelling of every parametrization stacked on the tensor
    (one element for a legacy hook); ``spelling`` is the one the tensor is
    reported under (weight norm before spectral norm before anything else).
    """

    owner: Any  # torch.nn.Module
    owner_name: str
    tensor_name: str
    spelling: Spelling
    chain: tuple[Spelling, ...]
    hook_key: int | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.owner_name}.{self.tensor_name}" if self.owner_name else self.tensor_name

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(s.kind for s in self.chain)

    @property
    def stacked(self) -> bool:
        return len(self.chain) > 1


def _primary(chain: tuple[Spelling, ...]) -> Spelling:
    for kind in (Kind.WEIGHT_NORM, Kind.SPECTRAL_NORM, Kind.OTHER):
        for spelling in chain:
            if spelling.kind is kind:
                return spelling
    return OTHER_PARAMETRIZATION


def _classify_parametrization(parametrization: Any) -> Spelling:
    for spelling in (WEIGHT_NORM_MODERN, SPECTRAL_NORM_MODERN):
        if isinstance(parametrization, torch_api.implementation(spelling)):
            return spelling
    return OTHER_PARAMETRIZATION


def _legacy_hook_spelling(hook: Any) -> Spelling | None:
    for spelling in (WEIGHT_NORM_LEGACY, SPECTRAL_NORM_LEGACY):
        if isinstance(hook, torch_api.implementation(spelling)):
            return spelling
    return None


def reparametrizations_of(owner: Any, owner_name: str = "") -> Iterator[LiveReparametrization]:
    """The live reparametrizations of one module (not its children), in a stable order."""
    parametrize = torch_api.parametrize_module()
    if parametrize.is_parametrized(owner):
        for tensor_name, plist in getattr(owner, PARAMETRIZATIONS_ATTR).items():
            chain = tuple(_classify_parametrization(p) for p in plist)
            yield LiveReparametrization(owner, owner_name, tensor_name, _primary(chain), chain)
    for key, hook in torch_api.forward_pre_hooks(owner):
        spelling = _legacy_hook_spelling(hook)
        if spelling is not None:
            yield LiveReparametrization(owner, owner_name, hook.name, spelling, (spelling,), key)


def find_reparametrizations(module: Any) -> list[LiveReparametrization]:
    """Every live reparametrization in ``module`` and its submodules, in module order.

    A submodule reachable under two names is visited once, under its first name.
    """
    found: list[LiveReparametrization] = []
    for owner_name, owner in module.named_modules():
        found.extend(reparametrizations_of(owner, owner_name))
    return found



def stored_tensors(live: LiveReparametrization) -> tuple[Any, ...]:
    """The stored tensors a reparametrization computes its tensor from: the ``original*`` of a parametrization,
    ``NAME_g``/``NAME_v`` of a legacy weight norm, ``NAME_orig`` of a legacy spectral norm.  Read as stored,
    never evaluated."""
    if live.hook_key is None:
        plist = getattr(live.owner, PARAMETRIZATIONS_ATTR)[live.tensor_name]
        return tuple(tensor for name, tensor in _own_tensors(plist) if name.startswith(ORIGINAL))
    suffixes = LEGACY_WEIGHT_NORM_SUFFIXES if live.spelling is WEIGHT_NORM_LEGACY else LEGACY_SPECTRAL_NORM_SUFFIXES[:1]
    found = (getattr(live.owner, live.tensor_name + suffix, None) for suffix in suffixes)
    return tuple(tensor for tensor in found if tensor is not None)


def parametrization_list(live: LiveReparametrization) -> Any | None:
    """The module torch calls to compute a modern parametrization's tensor (None for a legacy hook)."""
    return None if live.hook_key is not None else getattr(live.owner, PARAMETRIZATIONS_ATTR)[live.tensor_name]


def has_legacy_hook(module: Any) -> bool:
    """Whether a legacy weight-norm or spectral-norm hook recomputes a tensor when ``module`` is called."""
    return any(_legacy_hook_spelling(hook) is not None for _, hook in torch_api.forward_pre_hooks(module))


def _own_tensors(module: Any) -> list[tuple[str, Any]]:
    return [*torch_api.own_parameters(module).items(), *torch_api.own_buffers(module).items()]
