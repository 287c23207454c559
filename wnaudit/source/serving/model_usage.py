"""What code does with a model it holds: the members it reads or calls, and whether the model leaves the code.

WN110 asks which of a model's parts an inference entry executes: a part
nothing runs costs nothing.  The walk notes, for each name and
``self.<name>`` in each function (and class), the members used; the linking
reads them at each inference site.
"""

from __future__ import annotations

import ast
from typing import TypeAlias

from .walk_frame import Frame

#: Members a name is used for: a tuple while few (most names: one), a set past ``_FEW_MEMBERS`` (an empty set alone is
#: 216 bytes; a big file's walk holds one per name and function).
Members: TypeAlias = "tuple[str, ...] | set[str]"
_FEW_MEMBERS = 8


def _add_member(usage: dict[tuple[object, str], Members], key: tuple[object, str], member: str) -> None:
    """Add ``member`` to what ``key`` is used for."""
    members = usage.get(key)
    if members is None:
        usage[key] = (member,)
    elif isinstance(members, set):
        members.add(member)
    elif member not in members:
        usage[key] = (*members, member) if len(members) < _FEW_MEMBERS else {*members, member}


class ModelUsage:
    """What code does with a name or ``self.<name>``: (function number or class, key) -> members used."""

    def __init__(self) -> None:
        self.usage: dict[tuple[object, str], Members] = {}
        #: (function number or class, key) where the model leaves the code (returned, passed, stored).
        self.escaped: set[tuple[object, str]] = set()
        #: The numbers of the functions the walk is inside, innermost last (a closure's use counts for all).
        self.numbers: list[int] = [0]

    def key(self, node: ast.expr, frame: Frame) -> str | None:
        """``model`` or ``self.<name>`` (``self`` as the method spells it), else None."""
        if isinstance(node, ast.Name):
            return "self" if node.id == frame.self_name else node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == frame.self_name:
            return f"self.{node.attr}"
        return None

    def places(self, key: str, frame: Frame) -> list[object]:
        """The function (and the functions around it, for a closure's use) and, for ``self.<name>``, the class."""
        numbers = self.numbers
        places: list[object] = [numbers[-1]] if len(numbers) <= 2 else list(numbers[1:])
        if key.startswith("self.") and frame.class_qual is not None:
            places.append(frame.class_qual)
        return places

    def use(self, node: ast.expr, member: str, frame: Frame) -> None:
        """``member`` of ``node`` (a name or ``self.<name>``) read or called."""
        key = self.key(node, frame)
        if key is None:
            return
        for place in self.places(key, frame):
            _add_member(self.usage, (place, key), member)
        if key == "self" and frame.body is not None and member != "()":
            frame.body.self_members.add(member)

    def escape(self, node: ast.expr, frame: Frame) -> None:
        """``node`` (a name or ``self.<name>``) leaves the code: returned, handed to a call, stored."""
        key = self.key(node, frame)
        if key is None:
            return
        for place in self.places(key, frame):
            self.escaped.add((place, key))
        if key == "self" and frame.body is not None:
            frame.body.self_escapes = True
