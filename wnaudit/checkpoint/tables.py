"""Find the state dicts nested anywhere in a loaded checkpoint, and rebuild it with edits.

Checkpoints wrap their state dicts in many ways: ``{"state_dict": ...}``
(trainers), ``{"generator": ..., "discriminator": ...}`` (GAN vocoders),
``{"model": ...}``, ``{"ema": ...}``, nested deeper still.  Rather than know
those names, any mapping's string-keyed tensor entries form a *table*; its
location in the nesting is the prefix of its findings (``generator.ups.0.weight``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from ..core.stored_keys import StoredGroup

Path_ = tuple[str, ...]


@dataclass
class Table:
    """The string-keyed tensor entries of one mapping inside a checkpoint."""

    location: Path_
    container: Any
    tensors: dict[str, Any]

    @property
    def prefix(self) -> str:
        return ".".join(self.location)

    def qualified(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.location else key


@dataclass
class TableEdit:
    """How one table changes: a stored key replaced by ``(new key, value)``, others dropped."""

    replacements: dict[str, tuple[str, Any]] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)

    def fold(self, group: StoredGroup, weight: Any) -> None:
        first, *rest = group.keys
        self.replacements[first] = (group.folded_key, weight)
        self.dropped.update(rest)


def find_tables(obj: Any, is_tensor: Callable[[Any], bool]) -> list[Table]:
    """Every mapping holding string-keyed tensors, outermost first, in insertion order."""
    tables: list[Table] = []
    for location, container in _mappings(obj, (), set()):
        tensors = {k: v for k, v in container.items() if isinstance(k, str) and is_tensor(v)}
        if tensors:
            tables.append(Table(location, container, tensors))
    return tables


def find_objects(obj: Any, wanted: Callable[[Any], bool]) -> list[tuple[Path_, Any]]:
    """Objects (e.g. pickled modules) anywhere in the nesting, with their location."""
    found: list[tuple[Path_, Any]] = []
    if wanted(obj):
        return [((), obj)]
    for location, container in _mappings(obj, (), set()):
        for key, value in container.items():
            if wanted(value):
                found.append(((*location, str(key)), value))
    for location, sequence in _sequences(obj, (), set()):
        for index, value in enumerate(sequence):
            if wanted(value):
                found.append(((*location, str(index)), value))
    return found


def _children(obj: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            yield str(key), value
    elif isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj):
            yield str(index), value


def _mappings(obj: Any, location: Path_, seen: set[int]) -> Iterator[tuple[Path_, Mapping[Any, Any]]]:
    if id(obj) in seen or not isinstance(obj, (Mapping, list, tuple)):
        return
    seen.add(id(obj))
    if isinstance(obj, Mapping):
        yield location, obj
    for name, value in _children(obj):
        yield from _mappings(value, (*location, name), seen)


def _sequences(obj: Any, location: Path_, seen: set[int]) -> Iterator[tuple[Path_, Any]]:
    if id(obj) in seen or not isinstance(obj, (Mapping, list, tuple)):
        return
    seen.add(id(obj))
    if isinstance(obj, (list, tuple)):
        yield location, obj
    for name, value in _children(obj):
        yield from _sequences(value, (*location, name), seen)


def rebuild(obj: Any, edits: Mapping[int, TableEdit]) -> Any:
    """A copy of ``obj`` with the edits applied; unchanged subtrees are the same objects.

    ``edits`` is keyed by ``id`` of the edited container.  Edited mappings keep
    their type and instance attributes (an ``OrderedDict`` state dict keeps its
    ``_metadata``).  A container that holds itself (pickles allow it) is
    rebuilt holding its rebuilt self.
    """
    return _rebuild(obj, edits, {})


def _rebuild(obj: Any, edits: Mapping[int, TableEdit], memo: dict[int, Any]) -> Any:
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, Mapping):
        return _rebuild_mapping(obj, edits, memo)
    result = obj
    if isinstance(obj, list):
        rebuilt: list[Any] = []
        memo[id(obj)] = rebuilt  # a list inside itself gets the rebuilt list
        rebuilt.extend(_rebuild(value, edits, memo) for value in obj)
        result = rebuilt if any(new is not old for new, old in zip(rebuilt, obj)) else obj
    elif isinstance(obj, tuple):
        values = [_rebuild(value, edits, memo) for value in obj]
        if id(obj) in memo:  # reached again through a mutable child while its values were rebuilt
            return memo[id(obj)]
        if any(new is not old for new, old in zip(values, obj)):
            result = type(obj)(values)
    memo[id(obj)] = result
    return result


def _rebuild_mapping(obj: Mapping[Any, Any], edits: Mapping[int, TableEdit], memo: dict[int, Any]) -> Any:
    edit = edits.get(id(obj))
    rebuilt: Any = copy.copy(obj)  # the same mapping type, instance attributes kept; filled below
    memo[id(obj)] = rebuilt  # a mapping inside itself gets the rebuilt mapping
    items: list[tuple[Any, Any]] = []
    changed = edit is not None
    for key, value in obj.items():
        if edit is not None and key in edit.dropped:
            continue
        if edit is not None and key in edit.replacements:
            items.append(edit.replacements[key])
            continue
        new_value = _rebuild(value, edits, memo)
        changed = changed or new_value is not value
        items.append((key, new_value))
    if not changed:
        memo[id(obj)] = obj
        return obj
    rebuilt.clear()
    rebuilt.update(items)
    return rebuilt
