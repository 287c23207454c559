"""Fold live reparametrizations into plain ``nn.Parameter`` weights, exactly.

The folded weight is the tensor the module computed before the fold, bit for
bit: it is produced by the module's own parametrization (or the legacy hook's
own ``compute_weight``), which calls torch's weight-norm kernel with the stored
``dim``.  A hand-written ``g * v / ||v||`` differs in the last bits.

torch's own removers get three things wrong that this fold gets right:

* ``remove_parametrizations`` under ``torch.no_grad()`` leaves a *buffer*
  (the computed tensor does not require grad, so it is not re-wrapped);
* under ``torch.inference_mode()`` it leaves an *inference tensor*, unusable
  in autograd afterwards;
* the legacy ``remove_weight_norm`` always makes a trainable ``Parameter``,
  unfreezing a frozen model.

Here the weight is computed outside inference mode and without autograd, then
wrapped in an ``nn.Parameter`` whose ``requires_grad`` is what the original
tensors had.  Spectral norm folds with eval-mode semantics: no power iteration
runs, the stored ``u``/``v`` estimates give sigma, exactly as ``module.eval()``
would compute the weight.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator, cast

from . import torch_api
from .catalogue import LEGACY_SPECTRAL_NORM_SUFFIXES, LEGACY_WEIGHT_NORM_SUFFIXES, ORIGINAL, PARAMETRIZATIONS_ATTR, SPECTRAL_NORM_LEGACY, WEIGHT_NORM_COMPAT_HOOK, WEIGHT_NORM_LEGACY, Kind, Style
from .live import LiveReparametrization, find_reparametrizations

logger = logging.getLogger("wnaudit.fold")


class FoldError(RuntimeError):
    """The fold was refused before anything in the module was changed."""


def fold_weight_norm(module: Any, *, strict: bool = False) -> list[str]:
    """Fold every weight norm (both spellings) in ``module`` in place.

    Returns the qualified names of the folded tensors in module order; a second
    call returns ``[]``.  With ``strict=True`` a fold that finds nothing raises
    :class:`FoldError` (a fold that silently folds nothing hides bugs).
    """
    return fold(module, weight_norm=True, strict=strict)


def fold(
    module: Any,
    *,
    weight_norm: bool = True,
    spectral_norm: bool = False,
    other: bool = False,
    strict: bool = False,
) -> list[str]:
    """Fold the requested kinds of reparametrization in ``module`` in place.

    ``spectral_norm=True`` folds spectral norm with eval-mode semantics (no power
    iteration).  ``other=True`` folds any other parametrization too, which also
    allows folding weight norm stacked with another parametrization.  A stacked
    chain is folded whole or not at all: if it mixes a requested kind with one
    that was not requested, :class:`FoldError` is raised before anything changes.
    """
    requested = {Kind.WEIGHT_NORM: weight_norm, Kind.SPECTRAL_NORM: spectral_norm, Kind.OTHER: other}
    wanted = {kind for kind, on in requested.items() if on}
    plan = _plan(module, wanted)
    if any(live.spelling.style is Style.MODERN for live in plan) and torch_api.parametrize_cache_active():
        raise FoldError(
            "refusing to fold inside torch.nn.utils.parametrize.cached(): the cached value "
            "may be stale; fold outside the cached() block"
        )
    folded: list[str] = []
    with _exact_computation():
        for live in plan:
            _fold_one(live)
            folded.append(live.qualified_name)
    _log_result(module, plan, wanted)
    if strict and not folded:
        raise FoldError(f"nothing to fold in {type(module).__name__}: no live {_describe(wanted)} found")
    return folded


def _describe(kinds: set[Kind], count: int | None = None) -> str:
    """"weight norm", "weight norms", or "reparametrizations (weight norm, spectral norm)"."""
    ordered = [kind.value for kind in Kind if kind in kinds]
    if len(ordered) == 1:
        return ordered[0] + ("" if count == 1 else "s") if count is not None else ordered[0]
    noun = "reparametrization" + ("" if count == 1 else "s")
    return f"{noun} ({', '.join(ordered)})"


def _plan(module: Any, wanted: set[Kind]) -> list[LiveReparametrization]:
    """Choose what to fold, refusing up front anything that would be half-folded."""
    plan = []
    for live in find_reparametrizations(module):
        requested = live.kinds & wanted
        if not requested:
            continue
        if requested != live.kinds:
            others = ", ".join(s.label for s in live.chain if s.kind not in wanted)
            raise FoldError(
                f"{live.qualified_name}: {_describe(set(requested))} is stacked with {others}; "
                "folding one without the other would change the weight. "
                "Fold the whole chain with wnaudit.fold(module, weight_norm=True, spectral_norm=True, other=True)"
            )
        plan.append(live)
    return plan


def _log_result(module: Any, plan: list[LiveReparametrization], wanted: set[Kind]) -> None:
    name = type(module).__name__
    if not plan:
        logger.warning("wnaudit: folded 0 %s in %s (nothing live to fold)", _describe(wanted, 0), name)
        return
    modern = sum(1 for live in plan if live.spelling.style is Style.MODERN)
    logger.info(
        "wnaudit: folded %d %s in %s (%d modern, %d legacy)",
        len(plan),
        _describe(wanted, len(plan)),
        name,
        modern,
        len(plan) - modern,
    )


@contextlib.contextmanager
def _exact_computation() -> Iterator[None]:
    """Compute folded weights as ordinary tensors, whatever mode the caller is in.

    Leaving inference mode makes the results normal tensors; ``no_grad`` keeps
    them out of any autograd graph; autocast is switched off so the kernel runs
    in the weights' own dtype, as the module's forward does.
    """
    torch = torch_api.import_torch()
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.inference_mode(False))
        stack.enter_context(torch.no_grad())
        for device_type in ("cpu", "cuda"):
            if device_type == "cpu" or torch.cuda.is_available():
                stack.enter_context(torch.autocast(device_type=device_type, enabled=False))
        yield


def _as_parameter(weight: Any, requires_grad: bool) -> Any:
    torch = torch_api.import_torch()
    if weight.is_inference():
        weight = weight.clone()
    return torch.nn.Parameter(weight.detach(), requires_grad=requires_grad)


def _register_weight(owner: Any, name: str, parameter: Any) -> None:
    owner.__dict__.pop(name, None)
    owner.register_parameter(name, parameter)


def _fold_one(live: LiveReparametrization) -> None:
    """Every modern chain folds the same way; each legacy hook has its own layout."""
    if live.spelling is WEIGHT_NORM_LEGACY:
        _fold_legacy_weight_norm(live)
    elif live.spelling is SPECTRAL_NORM_LEGACY:
        _fold_legacy_spectral_norm(live)
    else:
        _fold_parametrization(live)


@contextlib.contextmanager
def _eval_mode(modules: Any) -> Iterator[None]:
    """Put parametrization modules in eval mode for one computation, then restore."""
    saved = [(m, m.training) for m in modules]
    try:
        for module, _ in saved:
            module.training = False
        yield
    finally:
        for module, training in saved:
            module.training = training


def _fold_parametrization(live: LiveReparametrization) -> None:
    """Fold a modern parametrization chain (weight norm, spectral norm or any other)."""
    owner, name = live.owner, live.tensor_name
    plist = getattr(owner, PARAMETRIZATIONS_ATTR)[name]
    originals = [plist.original] if plist.is_tensor else [getattr(plist, f"{ORIGINAL}{i}") for i in range(plist.ntensors)]
    requires_grad = any(t.requires_grad for t in originals)
    with _eval_mode(list(plist)):
        weight = plist()  # the same call the parametrized property makes
    parameter = _as_parameter(weight, requires_grad)

    parametrize = torch_api.parametrize_module()
    # register_parametrization injected a per-instance subclass with one
    # property per parametrized tensor: drop the property, the list, and the
    # subclass itself once nothing on the module is parametrized any more.
    delattr(owner.__class__, name)
    del getattr(owner, PARAMETRIZATIONS_ATTR)[name]
    _register_weight(owner, name, parameter)
    if not parametrize.is_parametrized(owner):
        delattr(owner, PARAMETRIZATIONS_ATTR)
        owner.__class__ = owner.__class__.__bases__[0]
    _remove_weight_norm_compat_hook(owner, name)


def _closure_value(function: Any, variable: str) -> Any:
    code = getattr(function, "__code__", None)
    if code is None or variable not in code.co_freevars or function.__closure__ is None:
        return None
    return function.__closure__[code.co_freevars.index(variable)].cell_contents


def _remove_weight_norm_compat_hook(owner: Any, name: str) -> None:
    """Remove the hook that maps legacy ``NAME_g``/``NAME_v`` keys onto the parametrization.

    Left behind it would rename keys of a later ``load_state_dict`` into a
    parametrization that no longer exists.
    """
    hooks = owner._load_state_dict_pre_hooks
    for key, wrapped in list(hooks.items()):
        function = getattr(wrapped, "hook", wrapped)
        if getattr(function, "__name__", None) == WEIGHT_NORM_COMPAT_HOOK and _closure_value(function, "name") == name:
            del hooks[key]


def _drop_forward_pre_hook(owner: Any, key: int | None) -> None:
    owner._forward_pre_hooks.pop(key, None)
    for extra in ("_forward_pre_hooks_with_kwargs", "_forward_pre_hooks_always_called"):
        getattr(owner, extra, {}).pop(key, None)


def _fold_legacy_weight_norm(live: LiveReparametrization) -> None:
    owner, name = live.owner, live.tensor_name
    hook = owner._forward_pre_hooks[live.hook_key]
    g_name, v_name = (name + suffix for suffix in LEGACY_WEIGHT_NORM_SUFFIXES)
    requires_grad = getattr(owner, g_name).requires_grad or getattr(owner, v_name).requires_grad
    weight = hook.compute_weight(owner)  # torch._weight_norm(v, g, hook.dim)
    parameter = _as_parameter(weight, requires_grad)
    _drop_forward_pre_hook(owner, live.hook_key)
    del owner._parameters[g_name]
    del owner._parameters[v_name]
    _register_weight(owner, name, parameter)


def _fold_legacy_spectral_norm(live: LiveReparametrization) -> None:
    owner, name = live.owner, live.tensor_name
    hook = owner._forward_pre_hooks[live.hook_key]
    orig_name, u_name, v_name = (name + suffix for suffix in LEGACY_SPECTRAL_NORM_SUFFIXES)
    requires_grad = getattr(owner, orig_name).requires_grad
    weight = hook.compute_weight(owner, do_power_iteration=False)  # eval-mode semantics
    parameter = _as_parameter(weight, requires_grad)
    _drop_forward_pre_hook(owner, live.hook_key)
    del owner._parameters[orig_name]
    owner._buffers.pop(u_name, None)
    owner._buffers.pop(v_name, None)
    _register_weight(owner, name, parameter)
    state_hook_classes = torch_api.spectral_norm_state_hook_classes()
    for hooks in (owner._state_dict_hooks, owner._load_state_dict_pre_hooks):
        for key, wrapped in list(hooks.items()):
            hook_object = getattr(wrapped, "hook", wrapped)
            if isinstance(hook_object, state_hook_classes) and getattr(cast(Any, hook_object).fn, "name", None) == name:
                del hooks[key]
