"""The words WN110's index parts share: a project unit's key, its short name, an inference site.

The parts (``pools.py``, ``instances.py``, ``folds.py``, ...) each answer one
question about the same units; naming the shapes once keeps their signatures
readable and the same.
"""

from __future__ import annotations

from pathlib import Path

from .facts import Ref, Use

#: A class or function of the project: (file, qualified name).
Key = tuple[Path, str]
#: An inference site of a carrier: its file, the use, the carriers its model may be.
Site = tuple[Path, Use, frozenset[Key]]
#: A chain of re-exports, references or callers longer than this is not followed (the Python stack grows with it).
MAX_DEPTH = 24
#: The methods that building an instance runs.
CONSTRUCTION = frozenset({"__init__", "__post_init__", "__new__"})


def short(qualname: str) -> str:
    return qualname.rpartition(".")[2]


def is_container(key: Key) -> bool:
    """A mapping of model parts that ``facts.py`` records as a class of its own (``<Munch@12:5>``)."""
    return short(key[1]).startswith("<")


def named_as(ref: Ref, key: Key) -> bool:
    """``ref`` is the result of calling something named as the unit ``key`` is (``self.g = build_generator()``)."""
    return ref[0] == "new" and short(ref[1]) == short(key[1])
