"""Does the project's own configuration turn a flag on (a fold behind ``if cfg.fold_weight_norm:``)?

A fold under a configuration flag folds only where the flag is on.  The
project shows what it sets the flag to in its Python code (a dataclass or
class default, a keyword, a dict entry, an assignment, a ``.get`` default)
and in the YAML/JSON configs it ships.  The flag counts as off only where
every such value is a false constant; a value the code does not show (an
expression, a command-line option the user may pass) or no value at all
counts as on, so a fold is never discounted on a guess.
"""

from __future__ import annotations

import ast
import hashlib
import logging
import os
import re
from pathlib import Path
from typing import Iterable

from ...common.config import DEFAULT_MAX_SOURCE_BYTES
from ...common.files import FileRefused, read_regular_file
from .walk import MAX_PROJECT_FILES, skipped

logger = logging.getLogger(__name__)

#: The configuration files a project ships beside its code.
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
#: A project with more config files than this is read up to it (the rest is data).
_MAX_CONFIG_FILES = 2_000
_FALSE_WORDS = frozenset({"false", "no", "off", "0", "", "null", "none", "~"})
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
#: What a file's code sets a flag to, by (digest of its bytes, flag): a pure function of both, kept for the process
#: (a run asks for each flag once per project, but an editor or a test linting one buffer at a time asks again).
_SETTINGS: dict[tuple[bytes, str], list[bool | None]] = {}
_MAX_SETTINGS = 8_192


def config_files(root: Path) -> list[Path]:
    """The YAML/JSON files under ``root``, walked as the project's Python files are."""
    found: list[Path] = []
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        seen += len(dirs) + len(files)
        if seen > MAX_PROJECT_FILES or len(found) >= _MAX_CONFIG_FILES:
            break
        found.extend(Path(directory) / name for name in sorted(files) if name.endswith(_CONFIG_SUFFIXES))
    return found[:_MAX_CONFIG_FILES]


def flag_on(flag: str, python: Iterable[tuple[Path, bytes]], configs: Iterable[Path]) -> bool:
    """Is ``flag`` on, or may it be, by the project's code (``python``: its files' bytes) and shipped configs?"""
    word = flag.encode("utf-8")
    dashed = flag.replace("_", "-").encode("utf-8")  # ``--fold-weight-norm``
    settings: list[bool | None] = []
    for path, data in python:
        if word in data or dashed in data:
            settings.extend(_kept_settings(path, data, flag))
    pattern = re.compile(rf"""^\s*(?:-\s+)?["']?{re.escape(flag)}["']?\s*[:=]\s*(?P<value>[^,#\n]*)""", re.MULTILINE)
    for path in configs:
        try:
            data = read_regular_file(str(path), DEFAULT_MAX_SOURCE_BYTES)
        except (OSError, FileRefused) as error:
            logger.debug("%s: not read: %s", path, error)
            continue
        if word in data:
            text = data.decode("utf-8", errors="replace")
            settings.extend(_word(match["value"]) for match in pattern.finditer(text))
    return not settings or any(setting is not False for setting in settings)


def _word(value: str) -> bool | None:
    """A config file's value as written: a false or true word, else not shown."""
    word = value.strip().strip("'\"").strip().lower()
    if word in _FALSE_WORDS:
        return False
    return True if word in _TRUE_WORDS else None


def _kept_settings(path: Path, data: bytes, flag: str) -> list[bool | None]:
    """``_python_settings``, parsed once per content and flag in this process."""
    key = (hashlib.blake2b(data, digest_size=16).digest(), flag)
    found = _SETTINGS.get(key)
    if found is None:
        if len(_SETTINGS) >= _MAX_SETTINGS:
            _SETTINGS.clear()
        found = _SETTINGS[key] = _python_settings(path, data, flag)
    return found


def _python_settings(path: Path, data: bytes, flag: str) -> list[bool | None]:
    try:
        tree = ast.parse(data, str(path))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        logger.debug("%s: not read for configuration flags: %s", path, error)
        return [None]  # the file may set it: not known
    found: list[bool | None] = []
    for node in ast.walk(tree):
        found.extend(_settings_of(node, flag))
    return found


def _settings_of(node: ast.AST, flag: str) -> list[bool | None]:
    """The values ``node`` gives ``flag``: a keyword, a dict entry, an assignment, a default, a ``.get`` default."""
    if isinstance(node, ast.keyword) and node.arg == flag:
        return [_value(node.value)]
    if isinstance(node, ast.Dict):
        return [_value(v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == flag]
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if _named(node.value) == flag or _read_of(node.value) == flag:
            return []  # ``self.flag = flag``, ``flag = cfg.get("flag")``: handed on, set where it comes from
        return [_value(node.value) for t in targets if _named(t) == flag]
    if isinstance(node, ast.arguments):
        positional = [*node.posonlyargs, *node.args]
        pairs = [*zip(positional[len(positional) - len(node.defaults):], node.defaults), *zip(node.kwonlyargs, node.kw_defaults)]
        return [_value(default) for arg, default in pairs if arg.arg == flag and default is not None]
    if isinstance(node, ast.Call):
        return _call_settings(node, flag)
    return []


def _call_settings(node: ast.Call, flag: str) -> list[bool | None]:
    """``cfg.get("flag", False)``/``getattr(cfg, "flag", False)``: the default; ``add_argument("--flag")``: not known."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if name == "add_argument" and any(s.lstrip("-").replace("-", "_") == flag for s in strings):
        return [None]  # a command-line option: the user may turn it on
    at = {"get": 0, "getattr": 1}.get(name)
    if at is None or len(node.args) <= at:
        return []
    key = node.args[at]
    if not (isinstance(key, ast.Constant) and key.value == flag):
        return []
    return [_value(node.args[at + 1]) if len(node.args) > at + 1 else False if name == "get" else None]


def _read_of(node: ast.expr) -> str:
    """``flag`` of ``cfg.get("flag", ...)`` / ``getattr(cfg, "flag", ...)`` (their defaults are settings of their own)."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        key = node.args[1] if name == "getattr" and len(node.args) > 1 else node.args[0] if name == "get" else None
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    return ""


def _named(target: ast.expr) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
        return target.slice.value
    return ""


def _value(node: ast.expr) -> bool | None:
    """A constant's truth (``"false"`` and the like read as a config would), else not known."""
    if isinstance(node, ast.Constant):
        return _word(node.value) if isinstance(node.value, str) else bool(node.value)
    return None
