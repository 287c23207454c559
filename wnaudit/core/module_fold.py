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
tensors had.  Every parametrization folds with eval-mode semantics: spectral
norm runs no power iteration (the stored ``u``/``v`` give sigma), and any other
parametrization gives the value it computes after ``module.eval()``.

The fold is transactional: every folded tensor is computed first, with nothing
changed; only then are they swapped in, and a failure while swapping puts every
touched module back exactly as it was (its class, parameters, buffers, hooks,
in their order).  torch's remover also deletes the property from the class it
generated, which ``copy.deepcopy`` shares between copies, so folding one copy
broke the other; here the shared class is never changed.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from . import torch_api
from .catalogue import (
    FOLD_RECORD_ATTR,
    LEGACY_SPECTRAL_NORM_SUFFIXES,
    LEGACY_WEIGHT_NORM_SUFFIXES,
    ORIGINAL,
    PARAMETRIZATIONS_ATTR,
    SPECTRAL_NORM_LEGACY,
    WEIGHT_NORM_COMPAT_HOOK,
    WEIGHT_NORM_LEGACY,
    Kind,
    Style,
)
from .exclusion import Exclusion
from .live import LiveReparametrization, find_reparametrizations

logger = logging.getLogger("wnaudit.fold")


class FoldError(RuntimeError):
    """The fold was refused before anything in the module was changed."""


def fold_weight_norm(module: Any, *, strict: bool = False, exclude: str | Iterable[str] = ()) -> list[str]:
    """Fold every weight norm (both spellings) in ``module`` in place.

    Returns the qualified names of the folded tensors in module order; a second
    call returns ``[]``.  With ``strict=True`` a fold that finds nothing raises
    :class:`FoldError` (a fold that silently folds nothing hides bugs).
    ``exclude`` names submodules to leave parametrized (see :func:`fold`).
    """
    return fold(module, weight_norm=True, strict=strict, exclude=exclude)


def fold(
    module: Any,
    *,
    weight_norm: bool = True,
    spectral_norm: bool = False,
    other: bool = False,
    strict: bool = False,
    exclude: str | Iterable[str] = (),
) -> list[str]:
    """Fold the requested kinds of reparametrization in ``module`` in place.

    Every kind folds with eval-mode semantics: ``spectral_norm=True`` runs no
    power iteration, and ``other=True`` folds any other parametrization to the
    value it computes in eval mode (whatever mode the module is in; its
    ``training`` flags are left as they were).  ``other=True`` also allows
    folding weight norm stacked with another parametrization.  A stacked chain
    is folded whole or not at all.  Any failure, a refusal or an exception
    raised by a parametrization, leaves the whole model exactly as it was.

    ``exclude`` lists submodules (qualified names: ``"f0_predictor"`` covers
    ``f0_predictor.conv.0`` but not ``f0_predictor_head``) left untouched, to
    fold later (say, after moving them to another device or dtype).  A name
    that matches no submodule raises :class:`~wnaudit.core.exclusion.ExcludeError`
    before anything changes.
    """
    wanted = wanted_kinds(weight_norm=weight_norm, spectral_norm=spectral_norm, other=other)
    exclusion = Exclusion.of(module, exclude)
    plan = plan_fold(module, wanted, exclusion)
    folded = apply_plan(plan)
    _log_result(module, plan, wanted, left_out(module, wanted, exclusion))
    if strict and not folded:
        outside = " outside the excluded submodules" if exclusion.names else ""
        raise FoldError(f"nothing to fold in {type(module).__name__}: no live {_describe(wanted)} found{outside}")
    return folded


def wanted_kinds(*, weight_norm: bool, spectral_norm: bool, other: bool) -> set[Kind]:
    requested = {Kind.WEIGHT_NORM: weight_norm, Kind.SPECTRAL_NORM: spectral_norm, Kind.OTHER: other}
    return {kind for kind, on in requested.items() if on}


def _describe(kinds: set[Kind], count: int | None = None) -> str:
    """"weight norm", "weight norms", or "reparametrizations (weight norm, spectral norm)"."""
    ordered = [kind.value for kind in Kind if kind in kinds]
    if len(ordered) == 1:
        return ordered[0] + ("" if count == 1 else "s") if count is not None else ordered[0]
    noun = "reparametrization" + ("" if count == 1 else "s")
    return f"{noun} ({', '.join(ordered)})"


def plan_fold(module: Any, wanted: set[Kind], exclusion: Exclusion | None = None) -> list[LiveReparametrization]:
    """Choose what to fold, refusing up front anything that would be half-folded.

    Modules covered by ``exclusion`` are left out (and not checked: they are not touched).
    """
    plan = []
    for live in find_reparametrizations(module):
        requested = live.kinds & wanted
        if not requested or (exclusion is not None and exclusion.name_covering(live.owner) is not None):
            continue
        if requested != live.kinds:
            others = ", ".join(s.label for s in live.chain if s.kind not in wanted)
            raise FoldError(
                f"{live.qualified_name}: {_describe(set(requested))} is stacked with {others}; "
                "folding one without the other would change the weight. "
                "Fold the whole chain with wnaudit.fold(module, weight_norm=True, spectral_norm=True, other=True)"
            )
        _refuse_reparametrized_parts(live)
        plan.append(live)
    if any(live.spelling.style is Style.MODERN for live in plan) and torch_api.parametrize_cache_active():
        raise FoldError(
            "refusing to fold inside torch.nn.utils.parametrize.cached(): the cached value "
            "may be stale; fold outside the cached() block"
        )
    return plan


def _refuse_reparametrized_parts(live: LiveReparametrization) -> None:
    """A legacy hook's stored parts must be plain parameters and buffers of its module.

    ``prune.l1_unstructured(conv, "weight_v")`` turns ``weight_v`` into a tensor
    recomputed by a second hook from ``weight_v_orig`` and a mask: folding the
    weight norm would leave that pruning state behind with nothing to prune.
    """
    if live.spelling is WEIGHT_NORM_LEGACY:
        parts = [(live.tensor_name + suffix, torch_api.own_parameters) for suffix in LEGACY_WEIGHT_NORM_SUFFIXES]
    elif live.spelling is SPECTRAL_NORM_LEGACY:
        orig, u, v = (live.tensor_name + suffix for suffix in LEGACY_SPECTRAL_NORM_SUFFIXES)
        parts = [(orig, torch_api.own_parameters), (u, torch_api.own_buffers), (v, torch_api.own_buffers)]
    else:
        return
    for name, table in parts:
        if table(live.owner).get(name) is None:
            qualified = f"{live.owner_name}.{name}" if live.owner_name else name
            raise FoldError(
                f"{qualified} is not a plain tensor of its module (is it pruned, or reparametrized again?); "
                f"the {live.spelling.label} on {live.qualified_name} cannot be folded without leaving that state "
                f"behind. Make it permanent first (torch.nn.utils.prune.remove(module, {name!r})), then fold"
            )


@dataclass(frozen=True)
class _Computed:
    """One folded tensor, computed but not yet swapped in."""

    live: LiveReparametrization
    parameter: Any
    dim: int


def apply_plan(plan: Sequence[LiveReparametrization]) -> list[str]:
    """Compute every folded tensor, then swap them all in; all or nothing."""
    with _exact_computation():
        computed = [_compute(live) for live in plan]
    _swap_all(computed)
    return [item.live.qualified_name for item in computed]


def left_out(module: Any, wanted: set[Kind], exclusion: Exclusion) -> dict[str, int]:
    """How many live reparametrizations of the wanted kinds each excluded name kept, in the order given."""
    counts = dict.fromkeys(exclusion.names, 0)
    if not exclusion.names:
        return counts
    for live in find_reparametrizations(module):
        name = exclusion.name_covering(live.owner)
        if name is not None and live.kinds & wanted:
            counts[name] += 1
    return counts


def _log_result(module: Any, plan: Sequence[LiveReparametrization], wanted: set[Kind], left: dict[str, int]) -> None:
    """The fold's one grep-able line: the top model, what it folded and what it left."""
    name = type(module).__name__
    kept = "; left " + ", ".join(f"{count} in {where}" for where, count in left.items()) if left else ""
    if not plan:
        why = "nothing live outside the excluded submodules" if any(left.values()) else "nothing live to fold"
        logger.log(logging.INFO if any(left.values()) else logging.WARNING,
                   "wnaudit: folded 0 %s in %s (%s)%s", _describe(wanted, 0), name, why, kept)
        return
    modern = sum(1 for live in plan if live.spelling.style is Style.MODERN)
    logger.info(
        "wnaudit: folded %d %s in %s (%d modern, %d legacy)%s",
        len(plan),
        _describe(wanted, len(plan)),
        name,
        modern,
        len(plan) - modern,
        kept,
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


# --------------------------------------------------------------------------
# Compute: nothing in the module changes
# --------------------------------------------------------------------------


def _compute(live: LiveReparametrization) -> _Computed:
    owner, name = live.owner, live.tensor_name
    if live.spelling.style is Style.MODERN:
        plist = getattr(owner, PARAMETRIZATIONS_ATTR)[name]
        originals = [plist.original] if plist.is_tensor else [getattr(plist, f"{ORIGINAL}{i}") for i in range(plist.ntensors)]
        requires_grad = any(t.requires_grad for t in originals)
        with _eval_mode(list(plist)):
            weight = plist()  # the same call the parametrized property makes
        implementation = torch_api.implementation(live.spelling) if live.spelling.kind is not Kind.OTHER else None
        dim = next((p.dim for p in plist if implementation is not None and isinstance(p, implementation)), -1)
        return _Computed(live, _as_parameter(weight, requires_grad), dim)
    hook = torch_api.forward_pre_hook(owner, live.hook_key)
    if live.spelling is WEIGHT_NORM_LEGACY:
        g_name, v_name = (name + suffix for suffix in LEGACY_WEIGHT_NORM_SUFFIXES)
        requires_grad = getattr(owner, g_name).requires_grad or getattr(owner, v_name).requires_grad
        weight = hook.compute_weight(owner)  # torch._weight_norm(v, g, hook.dim)
    else:
        requires_grad = getattr(owner, name + LEGACY_SPECTRAL_NORM_SUFFIXES[0]).requires_grad
        weight = hook.compute_weight(owner, do_power_iteration=False)  # eval-mode semantics
    return _Computed(live, _as_parameter(weight, requires_grad), -1 if hook.dim is None else hook.dim)


# --------------------------------------------------------------------------
# Swap: all or nothing
# --------------------------------------------------------------------------


@dataclass
class _Snapshot:
    """A module's class, its attribute table and a copy of every container in it."""

    module: Any
    cls: type
    attributes: dict[str, Any]
    contents: dict[str, Any]

    @classmethod
    def take(cls, module: Any) -> "_Snapshot":
        containers = torch_api.container_attributes(module)
        return cls(module, type(module), dict(vars(module)), {name: copy.copy(value) for name, value in containers.items()})

    def restore(self) -> None:
        for name, saved in self.contents.items():
            container = self.attributes[name]
            container.clear()
            container.update(saved)
        vars(self.module).clear()
        vars(self.module).update(self.attributes)
        if type(self.module) is not self.cls:
            self.module.__class__ = self.cls


def _touched_modules(computed: Sequence[_Computed]) -> list[Any]:
    modules: dict[int, Any] = {}
    for item in computed:
        owner = item.live.owner
        modules.setdefault(id(owner), owner)
        holder = getattr(owner, PARAMETRIZATIONS_ATTR, None) if item.live.spelling.style is Style.MODERN else None
        if holder is not None:
            modules.setdefault(id(holder), holder)
    return list(modules.values())


def _swap_all(computed: Sequence[_Computed]) -> None:
    snapshots = [_Snapshot.take(module) for module in _touched_modules(computed)]
    try:
        for item in computed:
            _swap_one(item)
    except BaseException:
        for snapshot in reversed(snapshots):
            snapshot.restore()
        raise


def _swap_one(item: _Computed) -> None:
    live = item.live
    if live.spelling is WEIGHT_NORM_LEGACY:
        _swap_legacy_weight_norm(live, item.parameter)
    elif live.spelling is SPECTRAL_NORM_LEGACY:
        _swap_legacy_spectral_norm(live, item.parameter)
    else:
        _swap_parametrization(live, item.parameter)
    _record(live, item.dim)


def _record(live: LiveReparametrization, dim: int) -> None:
    """Remember what was folded, for a later load of an unfolded checkpoint (see catalogue)."""
    records = dict(vars(live.owner).get(FOLD_RECORD_ATTR, {}))
    records[live.tensor_name] = (live.spelling.kind.value, live.spelling.style.value, int(dim), live.stacked)
    vars(live.owner)[FOLD_RECORD_ATTR] = records


def fold_record(owner: Any, name: str) -> tuple[str, str, int, bool] | None:
    """What the fold recorded for ``owner.name``: (kind, style, dim, stacked), or None."""
    record = vars(owner).get(FOLD_RECORD_ATTR, {}).get(name)
    return tuple(record) if record is not None else None  # type: ignore[return-value]


def _register_weight(owner: Any, name: str, parameter: Any) -> None:
    vars(owner).pop(name, None)
    owner.register_parameter(name, parameter)


def _class_without(cls: type, names: set[str]) -> type:
    """A copy of torch's generated ``Parametrized*`` class without some properties.

    The generated class is shared by every ``copy.deepcopy`` of the module, so
    deleting a property from it would break the copies.
    """
    namespace = {key: value for key, value in vars(cls).items() if key not in names and key not in ("__dict__", "__weakref__")}
    return type(cls.__name__, cls.__bases__, namespace)


def _swap_parametrization(live: LiveReparametrization, parameter: Any) -> None:
    """Fold a modern parametrization chain (weight norm, spectral norm or any other)."""
    owner, name = live.owner, live.tensor_name
    parametrize = torch_api.parametrize_module()
    parametrizations = getattr(owner, PARAMETRIZATIONS_ATTR)
    original_class = parametrize.type_before_parametrizations(owner)
    del parametrizations[name]
    if len(parametrizations) == 0:
        delattr(owner, PARAMETRIZATIONS_ATTR)
        owner.__class__ = original_class
    else:
        owner.__class__ = _class_without(type(owner), {name})
    _register_weight(owner, name, parameter)
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
    hooks = torch_api.load_state_dict_pre_hooks(owner)
    for key, wrapped in list(hooks.items()):
        function = torch_api.unwrap_hook(wrapped)
        if getattr(function, "__name__", None) == WEIGHT_NORM_COMPAT_HOOK and _closure_value(function, "name") == name:
            del hooks[key]


def _swap_legacy_weight_norm(live: LiveReparametrization, parameter: Any) -> None:
    owner, name = live.owner, live.tensor_name
    torch_api.drop_forward_pre_hook(owner, live.hook_key)
    parameters = torch_api.own_parameters(owner)
    for suffix in LEGACY_WEIGHT_NORM_SUFFIXES:
        del parameters[name + suffix]
    _register_weight(owner, name, parameter)


def _swap_legacy_spectral_norm(live: LiveReparametrization, parameter: Any) -> None:
    owner, name = live.owner, live.tensor_name
    orig_name, u_name, v_name = (name + suffix for suffix in LEGACY_SPECTRAL_NORM_SUFFIXES)
    torch_api.drop_forward_pre_hook(owner, live.hook_key)
    del torch_api.own_parameters(owner)[orig_name]
    buffers = torch_api.own_buffers(owner)
    buffers.pop(u_name, None)
    buffers.pop(v_name, None)
    _register_weight(owner, name, parameter)
    state_hook_classes = torch_api.spectral_norm_state_hook_classes()
    for hooks in (torch_api.state_dict_hooks(owner), torch_api.load_state_dict_pre_hooks(owner)):
        for key, wrapped in list(hooks.items()):
            hook_object = torch_api.unwrap_hook(wrapped)
            if isinstance(hook_object, state_hook_classes) and getattr(getattr(hook_object, "fn", None), "name", None) == name:
                del hooks[key]
