"""Removals whose target, as the project's code builds it, holds no norm at that moment: WN109.

``remove_weight_norm(self.conv)`` where ``self.conv = nn.Conv1d(...)`` (no
norm ever applied; likewise each element of ``self.source_downs``), where
``self.cond_layer = SConv1d(..., norm="weight_norm")`` and the norm sits on
``self.cond_layer.conv.conv`` (constant arguments followed through
the project model, ``project_model.py``), or where ``__init__`` already removed the norm for the
constant flag the class is built with: every remover raises ``ValueError``
on every torch version, whichever spelling it is.  Reported only where the
class's code shows every assignment of the attribute, nothing else can have
normed it (see ``FileSummary.plain_classes``) and the constants decide it.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ...common.findings import Applicability, Severity
from ..construction import passes
from ..holdings import ELEMENT, Arg, Held, Norm, bind, built_value, constants, short
from ..model import Built, FileSummary, Removal, Signature, Test, Value
from ..providers.method_calls import MethodCall, RemovalMethodCalls
from . import _removal_target_examples as examples
from .base import LEGACY, MODERN, WEIGHT_NORM, Candidate, Fix, Invalid, Rule, Valid

if TYPE_CHECKING:
    from ..context import Context
    from ..project_model import ProjectModel
    import libcst as cst


def call_on_child(child: str, call: cst.Call, kind: str) -> cst.Call | None:
    """``remove_weight_norm(self.block)`` -> ``remove_weight_norm(self.block.conv.conv)``: the module that holds the norm."""
    import libcst as cst

    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value == "module":
            value = arg.value
            for name in child.split("."):
                value = cst.Attribute(value=value, attr=cst.Name(name))
            args[index] = arg.with_changes(value=value)
            return call.with_changes(args=args)
    return None


_MODERN_WRAPPER = 'remove_parametrizations(self.cond_layer, "weight")'
_MODERN_PRE = 'remove_parametrizations(self.conv_pre, "weight")'
_MODERN_DOWN = 'remove_parametrizations(down, "weight")'
_MODERN_WRAPPER_35 = 'remove_parametrizations(self.conv, "weight")'


class RemovalFromModuleWithoutNorm(Rule):
    code = "WN109"
    title = (
        "removal from a module that holds no norm (built without one, a wrapper whose descendant holds it, "
        "or a norm its constructor flag already removed)"
    )
    severity = Severity.ERROR
    applicability = Applicability.UNSAFE
    PROVIDERS = (RemovalMethodCalls,)
    VALID = (
        Valid(
            "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "from torch.nn.utils.parametrize import remove_parametrizations\n\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = weight_norm(nn.Conv1d(2, 2, 3))\n\n"
            "    def fold(self):\n        remove_parametrizations(self.conv, 'weight')\n"
        ),
        Valid(
            "import torch.nn as nn\nfrom torch.nn.utils import remove_weight_norm, weight_norm\n\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv1d(2, 2, 3)\n        weight_norm(self.conv)  # noqa: WN103\n\n"
            "    def fold(self):\n        remove_weight_norm(self.conv)\n"
        ),
        # Each removal-target shape's valid counterpart (see ``_removal_target_examples``).
        Valid(examples.wrapper("self.cond_layer.remove_weight_norm()", methods=True)),  # the wrapper's own method reaches it
        Valid(examples.flag(_MODERN_PRE, "conv_pre_weight_norm=True")),  # the flag keeps the norm
        Valid(examples.flag(_MODERN_PRE, "")),  # the default keeps it
        Valid(examples.flag(_MODERN_PRE, "conv_pre_weight_norm=flag")),  # not a constant: undecided
        Valid(examples.flag(_MODERN_PRE, "conv_pre_weight_norm=False", guard='if hasattr(self.conv_pre, "parametrizations"):')),
        Valid(examples.flag(_MODERN_PRE, "conv_pre_weight_norm=False", guard="try:")),
        Valid(examples.never_normed(_MODERN_DOWN, examples.NORMED_DOWNS)),  # normed where it is built
        Valid(examples.never_normed(_MODERN_DOWN, examples.LISTED_DOWNS, extra=examples.NORMED_IN_A_LOOP)),  # normed in a loop
        # The wrapper's own method reaches the norm, whichever class is chosen or built.
        Valid(examples.chosen_wrapper('remove_parametrizations(self.conv.conv, "weight")').replace("SConv1d if", "NormConv1d if")),
        Valid(examples.resblocks("l.remove_weight_norm()")),
        Valid(examples.resblocks("l.remove_weight_norm()", examples.CHOSEN_RESBLOCKS)),
        Valid(examples.wrapper(_MODERN_WRAPPER, norm='"none"').replace(_MODERN_WRAPPER, "pass")),
        Valid(examples.never_applied("use_weight_norm=True")),  # the flag applies the norm
        Valid(examples.never_applied("")),  # so does the default
    )
    INVALID = (
        Invalid(
            examples.wrapper(_MODERN_WRAPPER),
            expected_replacement=examples.wrapper(_MODERN_WRAPPER.replace("self.cond_layer", "self.cond_layer.conv.conv")),
        ),
        Invalid(
            examples.wrapper("remove_weight_norm(self.cond_layer)", legacy=True),
            expected_replacement=examples.wrapper("remove_weight_norm(self.cond_layer.conv.conv)", legacy=True),
        ),
        Invalid(examples.flag(_MODERN_PRE, "conv_pre_weight_norm=False"), expected_replacement=None),
        Invalid(examples.flag("remove_weight_norm(self.conv_pre)", "conv_pre_weight_norm=False", legacy=True), expected_replacement=None),
        Invalid(examples.never_normed("remove_weight_norm(down)", examples.APPENDED_DOWNS, legacy=True), expected_replacement=None),
        Invalid(examples.never_normed(_MODERN_DOWN, examples.LISTED_DOWNS), expected_replacement=None),
        # A class chosen by a flag, each choice a wrapper; resblocks holding no parametrization
        # themselves; a wrapper whose constructor, for the string it is given, applies no norm.
        Invalid(examples.chosen_wrapper(_MODERN_WRAPPER_35), expected_replacement=None),
        Invalid(examples.resblocks('remove_parametrizations(l, "weight")'), expected_replacement=None),
        Invalid(examples.resblocks('remove_parametrizations(l, "weight")', examples.CHOSEN_RESBLOCKS), expected_replacement=None),
        Invalid(examples.wrapper(_MODERN_WRAPPER, norm='"none"'), expected_replacement=None),
        Invalid(examples.never_applied("use_weight_norm=False"), expected_replacement=None),  # the flag never applies it
        Invalid(
            "import torch.nn as nn\nfrom torch.nn.utils.parametrize import remove_parametrizations\n\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv1d(2, 2, 3)\n\n"
            "    def fold(self):\n        remove_parametrizations(self.conv, 'weight')\n",
            expected_replacement=None,
        ),
        Invalid(
            "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n"
            "from torch.nn.utils.parametrize import remove_parametrizations\n\n\n"
            "class SConv(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = weight_norm(nn.Conv1d(2, 2, 3))\n\n\n"
            "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.block = SConv()\n\n"
            "    def fold(self):\n        remove_parametrizations(self.block, 'weight')\n",
            expected_replacement=(
                "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n"
                "from torch.nn.utils.parametrize import remove_parametrizations\n\n\n"
                "class SConv(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.conv = weight_norm(nn.Conv1d(2, 2, 3))\n\n\n"
                "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.block = SConv()\n\n"
                "    def fold(self):\n        remove_parametrizations(self.block.conv, 'weight')\n"
            ),
        ),
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        if summary.applies_in_place:
            return  # some code norms modules after they are built: constructions do not tell
        model = context.model()
        for removal in summary.removals:
            built = self._plain_attribute(summary, removal)
            if built is None or built_value(built) is None:
                continue
            if removal.element:
                candidate = self._on_elements(summary, model, removal, built)
            else:
                candidate = self._on_attribute(summary, model, removal, built)
            if candidate is not None:
                yield candidate
        for call in context.fact(summary, RemovalMethodCalls):
            candidate = self._through_method(summary, model, call)
            if candidate is not None:
                yield candidate

    @staticmethod
    def _plain_attribute(summary: FileSummary, removal: Removal | MethodCall) -> Built | None:
        """How the unguarded removal's ``self.<attr>`` is built, when its class's code shows it and nothing else gets it."""
        attr = removal.self_attr
        if isinstance(removal, MethodCall):
            if removal.guarded:
                return None
        elif not attr or removal.guard != "none" or removal.star_args:
            return None
        owner = removal.site.unit
        built = summary.plain_classes.get(owner, {}).get(attr)
        chosen = built is not None and built.value is not None and built.value.kind == "if"  # ``a if flag else b``
        if built is None or not (built.constructor or chosen) or summary.handed.get((owner, attr)):
            return None
        return built

    def _through_method(self, summary: FileSummary, model: ProjectModel, call: MethodCall) -> Candidate | None:
        """``self.dec.remove_weight_norm()`` where ``self.dec`` is built with a constant flag under which its
        ``__init__`` already removes a norm that this method removes again (the class may sit in an imported file)."""
        built = self._plain_attribute(summary, call)
        if built is None or built_value(built) is None:
            return None
        held = model.value(summary, built_value(built))
        if not isinstance(held, Held) or held.cls is None or held.cls[1] == call.site.unit:
            return None
        target = model.summary_at(held.cls[0])
        if target is None or target.applies_in_place or (held.cls[0] == (summary.file or summary.path)):
            return None  # in the same file the removal itself is reported, at its own line
        for later in target.removals:
            if later.site.unit != held.cls[1] or later.method != call.method or later.when or later.element:
                continue
            found = self._removed_before(target, model, later, held.env)
            if found is not None:
                first, norm = found
                flags = ", ".join(f"{t.param}={held.env[t.param]}" for t in first.when if isinstance(held.env.get(t.param), str))
                name = Path(target.path).name
                return Candidate(
                    self.code,
                    call.site,
                    f"`self.{call.self_attr}` is a {held.label} built at line {built.line} with {flags}: its `__init__` already "
                    f"removes the norm of `.{later.self_attr}` ({name}:{first.site.line}; the norm {norm.cite()}), and "
                    f"`{call.method}()` removes it again ({name}:{later.site.line}): {later.api} raises ValueError there "
                    "and folds nothing",
                    None,
                )
        return None

    @staticmethod
    def _removed_before(
        target: FileSummary, model: ProjectModel, later: Removal, env: dict[str, Arg],
    ) -> tuple[Removal, Norm] | None:
        """The ``__init__`` removal that, for the constants in ``env``, already took the norm ``later`` removes."""
        owner = later.site.unit
        if later.guard != "none" or later.star_args or target.handed.get((owner, later.self_attr)):
            return None
        built = target.plain_classes.get(owner, {}).get(later.self_attr)
        if built is None or built_value(built) is None:
            return None
        held = model.value(target, built_value(built), env)
        if not isinstance(held, Held) or held.norm is None:
            return None
        for first in target.removals:
            if _removes_in_init(first, later, held.norm) and passes(first.when, env) is True:
                return first, held.norm
        return None

    def _on_attribute(self, summary: FileSummary, model: ProjectModel, removal: Removal, built: Built) -> Candidate | None:
        held = model.value(summary, built_value(built))
        if not isinstance(held, Held):
            return self._on_choice(summary, model, removal, built) or self._never_applied(summary, model, removal, built)
        if held.state == "plain":
            return self._never_normed(removal, built, held)
        if held.state == "instance":
            return self._on_wrapper(model, removal, built, held, f"`self.{removal.self_attr}`")
        if held.norm is not None:
            return self._after_flag(summary, model, removal, built, held.norm)
        return None

    def _on_elements(self, summary: FileSummary, model: ProjectModel, removal: Removal, built: Built) -> Candidate | None:
        """A removal on each element of ``self.<attr>``: reported when every element is decided and none holds the norm."""
        if not built.elements:
            return None  # not a container whose elements the code shows, or an empty one (the loop never runs)
        held = [h for element in built.elements for h in _choices(summary, model, element)]
        if not all(isinstance(h, Held) for h in held):
            return None
        found = [h for h in held if isinstance(h, Held)]
        target = f"the elements of `self.{removal.self_attr}`"
        if all(h.state == "plain" for h in found):
            lines = sorted({e.line for e in built.elements if e.line})
            classes = " or ".join(dict.fromkeys(h.label for h in found))
            return Candidate(
                self.code,
                removal.site,
                f"{target} hold no norm: each is built as {classes} (line{'s' if len(lines) > 1 else ''} "
                f"{', '.join(map(str, lines))}) and never normed, so {removal.api} finds no {_sought(removal)} on them, "
                "raises ValueError and folds nothing",
                None,
            )
        if len(found) == 1 and found[0].state == "instance":
            return self._on_wrapper(model, removal, built, found[0], target)
        if len(set(h.cls for h in found)) > 1:  # ``resblock = ResBlock1 if h.resblock == "1" else ResBlock2``
            return self._on_wrappers(model, removal, list(found), target, f"built at line {built.line}")
        return None

    def _on_choice(self, summary: FileSummary, model: ProjectModel, removal: Removal, built: Built) -> Candidate | None:
        """``conv1d_type = SConv1d if causal else NormConv1d`` then ``self.conv = conv1d_type(..., norm="weight_norm")``:
        reported when every class the code may choose is a wrapper whose norm, for these arguments, sits below it."""
        value = built_value(built)
        if value is None or value.kind != "call" or not 1 < len(value.names) <= _MAX_CHOICES:
            return None
        made = f"chosen at line {built.line}, built with {constants(value)}"
        return self._on_wrappers(model, removal, _choices(summary, model, value), f"`self.{removal.self_attr}`", made)

    def _on_wrappers(
        self, model: ProjectModel, removal: Removal, choices: list[Arg], target: str, made: str,
    ) -> Candidate | None:
        """Several classes may be built (a choice, or a list of blocks of two kinds): each a wrapper whose norm sits
        below it, so the removal on it raises whichever is built."""
        found: list[tuple[Held, list]] = []
        for held in choices:
            if not isinstance(held, Held) or held.state != "instance":
                return None
            paths, _ = model.norms_inside(held)
            wanted = [(path, norm) for path, norm in paths if removal.style != LEGACY or removal.kind in norm.kinds]
            if not wanted:
                return None  # one choice may hold the norm itself, or where it sits is not decided
            found.append((held, wanted))
        where = "; ".join(
            f"{held.label} on {', '.join(f'`.{_dotted(path)}` ({norm.cite()})' for path, norm in wanted)}"
            for held, wanted in found
        )
        labels = " or ".join(dict.fromkeys(h.label for h, _ in found))
        return Candidate(
            self.code,
            removal.site,
            f"{target} is a {labels} ({made}), a wrapper whichever is built; the norm sits below it ({where}): "
            f"{removal.api} on the wrapper finds no {_sought(removal)}, raises ValueError and folds nothing",
            None,
        )

    def _never_normed(self, removal: Removal, built: Built, held: Held) -> Candidate:
        """The attribute is a torch module built without a norm: the removal raises."""
        return Candidate(
            self.code,
            removal.site,
            f"`self.{removal.self_attr}` holds no norm: it is built as {' or '.join(built.constructor)} at line {built.line} "
            f"and never normed, so {removal.api} finds no {_sought(removal)} on it, raises ValueError and folds nothing",
            None,
        )

    def _on_wrapper(self, model: ProjectModel, removal: Removal, built: Built, held: Held, target: str) -> Candidate | None:
        """A project class whose descendants hold the norm (found through its constant arguments): fixable when one does."""
        paths, undecided = model.norms_inside(held)
        wanted = [(path, norm) for path, norm in paths if removal.style != LEGACY or removal.kind in norm.kinds]
        if not paths and not undecided and not removal.element:
            return self._applies_none(removal, built, held, target)
        if not wanted:
            return None  # where the norm sits is not decided (a string from a config, a class the code hides)
        where = ", ".join(f"`.{_dotted(path)}` ({norm.cite()})" for path, norm in wanted)
        given = "" if removal.element else constants(built_value(built))
        made = f"built at line {built.line}" + (f" with {given}" if given else "")
        child = ".".join(wanted[0][0])
        single = len(wanted) == 1
        one_child = single and ELEMENT not in wanted[0][0]  # a norm in each element of a list: no one child to fix
        advice = f"; remove it from `{target.strip('`')}.{child}`" if one_child and not removal.element else ""
        return Candidate(
            self.code,
            removal.site,
            f"{target} is a {held.label} ({made}) whose norm sits on its {_relation(wanted, single)} "
            f"{where}: {removal.api} on the wrapper finds no {_sought(removal)}, raises ValueError and folds nothing{advice}",
            Fix(functools.partial(call_on_child, child), removal.kind or WEIGHT_NORM) if one_child else None,
        )

    def _applies_none(self, removal: Removal, built: Built, held: Held, target: str) -> Candidate:
        """A wrapper whose constructor, for the constants it is built with, applies no norm anywhere inside it
        (``SConv1d(..., norm="none")``): there is nothing to remove, on it or below it."""
        given = constants(built_value(built))
        return Candidate(
            self.code,
            removal.site,
            f"{target} is a {held.label} (built at line {built.line}{f' with {given}' if given else ''}) that holds no "
            f"norm anywhere: for these arguments its constructor applies none, so {removal.api} finds no "
            f"{_sought(removal)}, raises ValueError and folds nothing",
            None,
        )

    def _never_applied(self, summary: FileSummary, model: ProjectModel, removal: Removal, built: Built) -> Candidate | None:
        """``self.conv = weight_norm(conv) if use_weight_norm else conv``, the class built in the file with a constant
        that skips the norm (``Generator(use_weight_norm=False)``), and a removal method that removes it anyway."""
        value = built_value(built)
        if value is None or value.kind != "if" or removal.method in ("", "__init__") or removal.when:
            return None
        owner = removal.site.unit
        plain = [
            (made, bound, held) for made, bound in _built_in_file(summary, model, owner)
            if isinstance(held := model.value(summary, value, bound), Held) and held.state == "plain"
        ]
        if not plain:
            return None
        made, bound, held = plain[0]
        message = (
            f"`self.{removal.self_attr}` holds no norm for the {short(owner)} built at line {made.line} with "
            f"{_flags(value.when, bound)}: its constructor builds it as {held.label} without one (line {built.line}), "
            f"so {removal.api} finds no {_sought(removal)}, raises ValueError and folds nothing"
        )
        return Candidate(self.code, removal.site, message, None)

    def _after_flag(self, summary: FileSummary, model: ProjectModel, removal: Removal, built: Built, norm: Norm) -> Candidate | None:
        """A removal outside ``__init__`` of a norm ``__init__`` already removes for a constant flag the file passes."""
        if removal.method in ("", "__init__") or removal.when:
            return None
        owner = removal.site.unit
        for first in summary.removals:
            if not _removes_in_init(first, removal, norm):
                continue
            for made, bound in _built_in_file(summary, model, owner):
                if passes(first.when, bound) is not True:
                    continue
                flags = _flags(first.when, bound)
                return Candidate(
                    self.code,
                    removal.site,
                    f"`self.{removal.self_attr}` has no norm left here for the {short(owner)} built at line {made.line} "
                    f"with {flags}: `__init__` already removes it at line {first.site.line} (the norm {norm.cite()}), "
                    f"so {removal.api} raises ValueError and folds nothing",
                    None,
                )
        return None


def _relation(wanted: list, single: bool) -> str:
    """``child`` for an attribute of the wrapper, ``descendant`` for one further down."""
    word = "child" if all(len(path) == 1 for path, _ in wanted) else "descendant"
    return word if single else word + "ren" if word == "child" else word + "s"


#: A choice among more classes than this (a registry) is not followed: which one is built is not decided by the code.
_MAX_CHOICES = 4


def _built_in_file(summary: FileSummary, model: ProjectModel, owner: str) -> Iterator[tuple[Value, dict[str, Arg]]]:
    """Each construction of the class ``owner`` in the file, with its ``__init__``'s parameters bound to what it passes."""
    for made in summary.constructions.get(owner, ()):
        bound = bind(summary.inits.get(owner, Signature(())), [model.value(summary, a) for a in made.args],
                     {name: model.value(summary, a) for name, a in made.keywords}, made.star)
        if bound is not None:
            yield made, bound


def _flags(tests: tuple[Test, ...], bound: dict[str, Arg]) -> str:
    """The constants the tests read, as the construction passes them (``conv_pre_weight_norm=False``)."""
    return ", ".join(f"{t.param}={bound[t.param]}" for t in tests if isinstance(bound.get(t.param), str))


def _choices(summary: FileSummary, model: ProjectModel, value: Value) -> list[Arg]:
    """What a call may build: one module, or one per class a local choice may be (``SConv1d if causal else NormConv1d``)."""
    if value.kind == "call" and 1 < len(value.names) <= _MAX_CHOICES:
        return [model.value(summary, dataclasses.replace(value, names=(name,))) for name in value.names]
    return [model.value(summary, value)]


def _dotted(path: tuple[str, ...]) -> str:
    """``("resblocks", "[*]", "convs")`` as ``resblocks[*].convs``."""
    return ".".join(path).replace(f".{ELEMENT}", ELEMENT)


def _removes_in_init(first: Removal, later: Removal, norm: Norm) -> bool:
    """``first`` is ``__init__``'s unguarded removal of the same attribute under readable tests, and it folds ``norm``."""
    if first.site.unit != later.site.unit or first.method != "__init__" or first.self_attr != later.self_attr:
        return False
    if first.element or first.guard != "none" or first.star_args or not first.when:
        return False
    if any(test.op == "?" for test in first.when):
        return False
    if first.style == LEGACY:
        return first.kind in norm.kinds and norm.styles == {LEGACY}
    return norm.styles == {MODERN}


def _sought(removal: Removal) -> str:
    """What the removal looks for, as a message names it."""
    return removal.kind if removal.style == LEGACY else "parametrization"
