"""Classes a project's YAML configs name for instantiation, by where they sit.

A loader that builds its model from a config file names the class there, not in the code.

``model = hydra.utils.instantiate(cfg)`` builds the class the config's
top-level ``_target_`` names; ``instantiate(cfg.generator)`` the one under
``generator:``; hyperpyyaml's ``hift: !new:pkg.hifigan.HiFTGenerator`` builds
``configs["hift"]`` when ``load_hyperpyyaml`` reads it; jsonargparse and
Lightning spell the key ``class_path``.  The serving code names none of these
classes, so WN110 reads the configs beside it.  The core install has no YAML
parser, and none is needed: a line scan of keys and their indentation gives
each class's key path, which is all the question asks.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from ...common.config import DEFAULT_MAX_SOURCE_BYTES
from ...common.files import FileRefused, read_regular_file
from .walk import MAX_PROJECT_FILES, Listings, skipped, walk_tree

logger = logging.getLogger(__name__)

#: A project with more config files than this is read up to it (the rest is data, not model configs).
MAX_CONFIG_FILES = 2_000
_SUFFIXES = (".yaml", ".yml")
_LINE = re.compile(r"^(?P<indent>\s*)(?:-\s+)?(?P<key>[A-Za-z0-9_.\-]+)\s*:\s*(?P<value>.*?)\s*$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
#: Keys whose value is the class built from the mapping they sit in.
_CLASS_KEYS = frozenset({"_target_", "class_path"})
_NEW_TAG = "!new:"
#: A file holding none of these builds nothing: its lines are not scanned (a data YAML of megabytes costs a search).
_MARKS = (b"_target_", b"class_path", _NEW_TAG.encode())

#: Key path ("" for the top level, ``generator``, ``model.decoder``) -> the dotted class names built there.
Targets = dict[str, set[str]]


def config_targets(root: Path, listings: Listings | None = None) -> Targets:
    """What the YAML files under ``root`` build, by key path (walked as the project's Python files are).

    ``listings``: directories listed already (a record's check walks the same tree for other answers).
    """
    found: Targets = {}
    count = seen = 0
    for directory, dirs, files in walk_tree(root, listings):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        seen += len(dirs) + len(files)
        if seen > MAX_PROJECT_FILES:  # ``config_path="/"``: a file system is not a project's configs
            logger.debug("%s: more than %d entries; the rest are not read for WN110", root, MAX_PROJECT_FILES)
            return found
        for name in sorted(files):
            if not name.endswith(_SUFFIXES):
                continue
            count += 1
            if count > MAX_CONFIG_FILES:
                logger.debug("%s: more than %d config files; the rest are not read for WN110", root, MAX_CONFIG_FILES)
                return found
            path = os.path.join(directory, name)
            try:  # a regular file of bounded size only: a FIFO, a device, a huge file is never read
                data = read_regular_file(path, DEFAULT_MAX_SOURCE_BYTES)
            except (OSError, FileRefused) as error:
                logger.debug("%s: not read: %s", path, error)
                continue
            if any(mark in data for mark in _MARKS):
                scan(data.decode("utf-8", errors="replace"), found)
    return found


def plain_targets(found: Targets) -> dict[str, list[str]]:
    """``found`` as plain JSON (sorted lists): how a record of derived answers keeps and compares it."""
    return {path: sorted(names) for path, names in sorted(found.items())}


def scan(text: str, found: Targets) -> None:
    """Add the classes one YAML text builds to ``found``: each ``_target_``/``class_path``/``!new:`` by its key path."""
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        stripped = line.split(" #", 1)[0].rstrip()
        match = _LINE.match(stripped)
        if match is None or stripped.lstrip().startswith("#"):
            continue
        indent = len(match["indent"]) + (2 if stripped.lstrip().startswith("- ") else 0)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key, value = match["key"], match["value"].strip("'\"")
        parent = ".".join(k for _, k in stack)
        if key in _CLASS_KEYS and _DOTTED.match(value):
            found.setdefault(parent, set()).add(value)
        elif value.startswith(_NEW_TAG) and _DOTTED.match(value[len(_NEW_TAG):].split()[0] if value[len(_NEW_TAG):] else ""):
            found.setdefault(f"{parent}.{key}" if parent else key, set()).add(value[len(_NEW_TAG):].split()[0])
        stack.append((indent, key))
