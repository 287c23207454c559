"""The words WN110's index parts share: a project unit's key, its short name, an inference site, the run's hooks.

The parts (``pools.py``, ``instances.py``, ``folds.py``, ...) each answer one
question about the same units; naming the shapes once keeps their signatures
readable and the same.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..model import FileSummary
from .facts import Ref, ServingFacts, Use
from .config_files import read_configs

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


def _adopt_nothing(path: Path, data: bytes, summary: FileSummary) -> None:
    return None


def _no_tree(digest: bytes) -> ast.Module | None:
    return None


def _configs_as_they_are(root: Path) -> list[bytes]:
    return [data for _, data in read_configs(root) if data is not None]


def _nothing_excluded(path: Path) -> bool:
    return False


def _not_modern_only(key: Key) -> bool:
    return False


@dataclass(frozen=True)
class IndexHooks:
    """What the run gives WN110's index besides the files (the defaults: an index on its own, as the tests build).

    Given when the index is built, so no part reads a setting that may still change.
    """

    #: How a file no one gave facts for is read: the analyses' ``read_serving`` (its analysis from the same parse);
    #: None: parsed for its serving facts alone.  Raises ``READ_ERRORS``.
    parse: Callable[[Path, bytes], ServingFacts] | None = None
    #: Takes the analysis a worker made of a file beside its facts (the analyses' ``adopt_analysis``).
    adopt_analysis: Callable[[Path, bytes, FileSummary], None] = _adopt_nothing
    #: A whole-file tree the analysis kept, by the digest of the bytes (``kept_trees``; None: parse the file).
    kept_tree: Callable[[bytes], ast.Module | None] = _no_tree
    #: ``exclude`` patterns in force (``Config.is_path_excluded``): an excluded file is never an inference site.
    excluded: Callable[[Path], bool] = _nothing_excluded
    #: Whether a start applies only the modern weight norm (the context's styles): then a fold by the legacy
    #: remover alone folds nothing (it raises, and WN101 reports it).
    modern_only: Callable[[Key], bool] = _not_modern_only
    #: The contents of the YAML/JSON configs shipped under a project root, for the flag reader (the run's
    #: ``FileReads.flag_configs``: what they are is an observation WN110's kept verdicts rest on).
    flag_configs: Callable[[Path], list[bytes]] = _configs_as_they_are
