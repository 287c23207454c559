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
import re
from pathlib import Path
from typing import Callable, Iterable

from ..analysis import deep_recursion, parsed_ahead
from ..ast_visitor import Visitor
from ..reading import SourceError, decode

logger = logging.getLogger(__name__)

_FALSE_WORDS = frozenset({"false", "no", "off", "0", "", "null", "none", "~"})
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
#: What a file's code sets, by the digest of its bytes: for each name it gives a value, whether one of those values
#: may be on (not a false constant); None where the file does not parse (it may set anything).  A pure function of
#: the bytes, found in one walk for every name and kept for the process: a run asks about many flags, most files
#: hold several of their words, and an editor or a test linting one buffer at a time asks again.
_SETTINGS: dict[bytes, "dict[str, bool] | None"] = {}
_MAX_SETTINGS = 8_192


class NotKnown:
    """What ``KnownSettings`` answers for a file whose serving facts are not read yet (its settings are parsed here)."""


NOT_KNOWN = NotKnown()
#: A file's settings where its serving facts are known: ``ServingFacts.settings``, None where it does not parse,
#: else ``NOT_KNOWN``.
KnownSettings = Callable[[Path, bytes], "dict[str, bool] | None | NotKnown"]
#: A word as the index holds it: letters, digits, ``_`` and any non-ASCII byte, joined by ``-`` (``--fold-weight-norm``).
_WORD = re.compile(rb"[A-Za-z0-9_\x80-\xff]+(?:-[A-Za-z0-9_\x80-\xff]+)*")


class ProjectFlags:
    """What one project's code and shipped configs set its flags to, read once for every flag asked.

    A run asks about every condition a fold sits under (hundreds of names on a large tree), each time of the same
    project.  Its files' words are indexed once, and a file holding a flag's word is parsed once for every flag
    (``_kept_settings``): asking is then a lookup, where each flag used to scan every file and parse those holding
    its word.  A flag is found where it is a whole word (``fold_weight_norm``, or ``fold-weight-norm`` for a
    command-line option), never inside a longer one.
    """

    def __init__(
        self, python: Iterable[tuple[Path, bytes]], configs: Iterable[bytes], known: "KnownSettings | None" = None,
    ) -> None:
        self._python: Iterable[tuple[Path, bytes]] | None = python
        #: The settings of files already read for the serving path (``ServingFacts.settings``): no second parse.
        self._known = known
        self._configs: Iterable[bytes] | None = configs  # the shipped configs' contents (``read_configs``)
        self._code: dict[bytes, list[tuple[Path, bytes]]] = {}
        self._shipped: dict[bytes, list[str]] = {}
        self._answers: dict[str, bool] = {}

    def on(self, flag: str) -> bool:
        """Is ``flag`` on, or may it be?  Off only where every value the project shows for it is a false constant."""
        found = self._answers.get(flag)
        if found is None:
            self._index()
            found = self._answers[flag] = self._on(flag)
        return found

    def _index(self) -> None:
        if self._python is not None:
            for path, data in self._python:
                for word in _words(data):
                    self._code.setdefault(word, []).append((path, data))
            self._python = None
        if self._configs is not None:
            for data in self._configs:
                text = data.decode("utf-8", errors="replace")
                for word in _words(data):
                    self._shipped.setdefault(word, []).append(text)
            self._configs = None

    def _on(self, flag: str) -> bool:
        word = flag.encode("utf-8")
        dashed = flag.replace("_", "-").encode("utf-8")  # ``--fold-weight-norm``
        holding = {id(data): (path, data) for path, data in [*self._code.get(word, ()), *self._code.get(dashed, ())]}
        set_off = False  # some value is shown, and every one so far is a false constant
        for path, data in holding.values():
            known = self._known(path, data) if self._known is not None else NOT_KNOWN
            found = _kept_settings(path, data) if isinstance(known, NotKnown) else known
            if found is None or found.get(flag):
                return True
            set_off = set_off or flag in found
        pattern = re.compile(rf"""^\s*(?:-\s+)?["']?{re.escape(flag)}["']?\s*[:=]\s*(?P<value>[^,#\n]*)""", re.MULTILINE)
        for text in self._shipped.get(word, ()):
            for match in pattern.finditer(text):
                if _word(match["value"]) is not False:
                    return True
                set_off = True
        return not set_off


def _words(data: bytes) -> set[bytes]:
    """The whole words of ``data``: each dashed word, and its parts (``a-b`` is also ``a`` minus ``b``)."""
    words = set(_WORD.findall(data))
    words.update(part for word in [w for w in words if b"-" in w] for part in word.split(b"-"))
    return words


def _word(value: str) -> bool | None:
    """A config file's value as written: a false or true word, else not shown."""
    word = value.strip().strip("'\"").strip().lower()
    if word in _FALSE_WORDS:
        return False
    return True if word in _TRUE_WORDS else None


def _kept_settings(path: Path, data: bytes) -> dict[str, bool] | None:
    """``_python_settings``, parsed once per content in this process."""
    key = hashlib.blake2b(data, digest_size=16).digest()
    if key in _SETTINGS:
        return _SETTINGS[key]
    if len(_SETTINGS) >= _MAX_SETTINGS:
        _SETTINGS.clear()
    found = _SETTINGS[key] = _python_settings(path, data)
    return found


def _python_settings(path: Path, data: bytes) -> dict[str, bool] | None:
    """Every name the file's code gives a value, and whether one of its values may be on (None: unparsable)."""
    settings = Settings()
    try:
        text = decode(data).text
        with deep_recursion():  # as the analysis parses and walks: the serving walk's ``settings`` agree
            tree = ast.parse(text, str(path))
            settings.visit(tree)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError) as error:
        logger.debug("%s: not read for configuration flags: %s", path, error)
        return None  # the file may set any flag: not known
    parsed_ahead.offer(text, tree)  # the rules often analyse the file next: it is not parsed again
    return settings.found


class Settings(Visitor):
    """Every name a file's trees give a value, and whether one of its values may be on (``visit`` each piece).

    The serving walk's reader runs it on the pieces the analysis parsed (``ServingFacts.settings``), so a file
    read for the serving path is not parsed again for its flags.
    """

    def __init__(self) -> None:
        self.found: dict[str, bool] = {}

    def _note(self, settings: list[Setting], node: ast.AST) -> None:
        found = self.found
        for name, value in settings:
            found[name] = found.get(name, False) or value is not False
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        self._note(_keyword(node), node)

    def visit_Dict(self, node: ast.Dict) -> None:
        self._note(_dict(node), node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._note(_assignment(node), node)

    visit_AnnAssign = visit_Assign  # type: ignore[assignment]

    def visit_arguments(self, node: ast.arguments) -> None:
        self._note(_defaults(node), node)

    def visit_Call(self, node: ast.Call) -> None:
        self._note(_call(node), node)


Setting = tuple[str, "bool | None"]


def _keyword(node: ast.keyword) -> list[Setting]:
    return [(node.arg, _value(node.value))] if node.arg is not None else []


def _dict(node: ast.Dict) -> list[Setting]:
    return [(k.value, _value(v)) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _assignment(node: ast.Assign | ast.AnnAssign) -> list[Setting]:
    """``flag = value``; ``self.flag = flag`` and ``flag = cfg.get("flag")`` hand it on: it is set where it comes from."""
    if node.value is None:
        return []
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    handed = {_named(node.value), _read_of(node.value)}
    return [(name, _value(node.value)) for t in targets if (name := _named(t)) and name not in handed]


def _defaults(node: ast.arguments) -> list[Setting]:
    positional = [*node.posonlyargs, *node.args]
    pairs = [*zip(positional[len(positional) - len(node.defaults):], node.defaults), *zip(node.kwonlyargs, node.kw_defaults)]
    return [(arg.arg, _value(default)) for arg, default in pairs if default is not None]


def _call(node: ast.Call) -> list[Setting]:
    """``cfg.get("flag", False)``/``getattr(cfg, "flag", False)``: the default; ``add_argument("--flag")``: not known."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "add_argument":  # a command-line option: the user may turn it on
        strings = {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
        return [(s.lstrip("-").replace("-", "_"), None) for s in strings]
    at = {"get": 0, "getattr": 1}.get(name)
    if at is None or len(node.args) <= at:
        return []
    key = node.args[at]
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return []
    return [(key.value, _value(node.args[at + 1]) if len(node.args) > at + 1 else False if name == "get" else None)]


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
