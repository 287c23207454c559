"""Removals whose target, as its class builds it, holds no norm at all: WN109.

``remove_weight_norm(self.conv)`` where ``self.conv = nn.Conv1d(...)`` (no
norm ever applied), or ``remove_weight_norm(self.block)`` where
``self.block = SConv(...)`` and the norm sits on ``SConv``'s own ``self.conv``:
both removers raise ``ValueError`` on every torch version, whichever spelling
they are.  Reported only where the class's code shows every assignment of the
attribute and nothing else can have normed it (see ``FileSummary.plain_classes``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ...common.findings import Applicability, Severity
from ...core import catalogue
from ..model import Built, FileSummary, Removal
from .base import LEGACY, WEIGHT_NORM, Candidate, Fix, Invalid, Rule, Valid

if TYPE_CHECKING:
    from ..context import Context
    import libcst as cst


def call_on_child(child: str, call: cst.Call, kind: str) -> cst.Call | None:
    """``remove_weight_norm(self.block)`` -> ``remove_weight_norm(self.block.conv)``: the module that holds the norm."""
    import libcst as cst

    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value == "module":
            args[index] = arg.with_changes(value=cst.Attribute(value=arg.value, attr=cst.Name(child)))
            return call.with_changes(args=args)
    return None


def _torch_module_class(name: str) -> bool:
    """A ``torch.nn`` layer class (``torch.nn.Conv1d``): constructing one applies no norm."""
    module, _, last = name.rpartition(".")
    return module == "torch.nn" and last[:1].isupper() and catalogue.spelling_for_api(name) is None


def _applied_kinds(names: tuple[str, ...]) -> set[str]:
    """The norm kinds an attribute's constructor applies, when it is nothing but norm appliers."""
    kinds: set[str] = set()
    for name in names:
        found = catalogue.spelling_for_api(name)
        if found is None or found[1] != "apply":
            return set()
        kinds.add(found[0].kind.value)
    return kinds


class RemovalFromModuleWithoutNorm(Rule):
    code = "WN109"
    title = "removal from a module that holds no norm (built without one, or a wrapper whose child holds it)"
    severity = Severity.ERROR
    applicability = Applicability.UNSAFE
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
    )
    INVALID = (
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
        for removal in summary.removals:
            built = self._plain_attribute(summary, removal)
            if built is None:
                continue
            if all(_torch_module_class(name) for name in built.constructor):
                yield self._never_normed(removal, built)
                continue
            candidate = self._on_wrapper(summary, context, removal, built)
            if candidate is not None:
                yield candidate

    @staticmethod
    def _plain_attribute(summary: FileSummary, removal: Removal) -> Built | None:
        """How the unguarded removal's ``self.<attr>`` is built, when its class's code shows it and nothing else gets it."""
        attr = removal.self_attr
        if not attr or removal.guard != "none" or removal.star_args:
            return None
        owner = removal.site.unit
        built = summary.plain_classes.get(owner, {}).get(attr)
        if built is None or not built.constructor or summary.handed.get((owner, attr)):
            return None
        return built

    def _never_normed(self, removal: Removal, built: Built) -> Candidate:
        """The attribute is a torch module built without a norm: the removal raises."""
        return Candidate(
            self.code,
            removal.site,
            f"`self.{removal.self_attr}` holds no norm: it is built as {' or '.join(built.constructor)} at line {built.line} "
            f"and never normed, so {removal.api} finds no {_sought(removal)} on it, raises ValueError and folds nothing",
            None,
        )

    def _on_wrapper(self, summary: FileSummary, context: Context, removal: Removal, built: Built) -> Candidate | None:
        """The attribute is a project class whose child holds the norm: fixable when exactly one child does."""
        found = self._wrapper(summary, context, removal, built.constructor)
        if found is None:
            return None
        wrapper, children = found
        child = children[0][0]
        where = ", ".join(f"`.{name}` (applied at {Path(p).name}:{n})" for name, (p, n) in children)
        attr = removal.self_attr
        advice = f"; remove it from `self.{attr}.{child}`" if len(children) == 1 else ""
        return Candidate(
            self.code,
            removal.site,
            f"`self.{attr}` is a {wrapper} (built at line {built.line}) whose norm sits on its child {where}: "
            f"{removal.api} on the wrapper finds no {_sought(removal)}, raises ValueError and folds nothing{advice}",
            Fix(functools.partial(call_on_child, child), removal.kind or WEIGHT_NORM) if len(children) == 1 else None,
        )

    @staticmethod
    def _wrapper(
        summary: FileSummary, context: Context, removal: Removal, constructor: tuple[str, ...],
    ) -> tuple[str, list[tuple[str, tuple[str, int]]]] | None:
        """The project class the attribute is built from, and its children that hold the norm the removal wants."""
        if len(constructor) != 1:
            return None
        keys = context.resolve(summary, constructor[0])
        if len(keys) != 1:
            return None
        file, unit = keys[0]
        target = context.summary_at(file)
        if target is None or target.applies_in_place:
            return None
        attrs = target.plain_classes.get(unit)
        if attrs is None:
            return None
        children: list[tuple[str, tuple[str, int]]] = []
        for name, child in sorted(attrs.items()):
            kinds = _applied_kinds(child.constructor)
            if kinds and (removal.style != LEGACY or removal.kind in kinds):
                children.append((name, (target.path, child.line)))
        if not children:
            return None
        return unit.rpartition(".")[2], children


def _sought(removal: Removal) -> str:
    """What the removal looks for, as a message names it."""
    return removal.kind if removal.style == LEGACY else "parametrization"
