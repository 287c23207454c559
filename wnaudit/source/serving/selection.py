"""Whether any construction in the project selects a weight norm that a constructor parameter guards (WN110).

``apply_parametrization_norm(conv, norm)`` applies weight norm only under
``if norm == "weight_norm":``; ``norm_f = weight_norm if flag else spectral_norm``
only when the flag says so.  Such an application counts only if some call in
the project that builds the class (or calls the function) can pass a value
that passes the test: a constant, the parameter's default, a constant
module-level dict unpacked with ``**``, or a parameter of the calling
constructor, followed to that constructor's own callers one level at a time.
Anything else (a config attribute, ``*args``, the class handed around as a
value, no construction at all) is unknown, and the application counts, as
before.  The syntax is read with ``construction/``, the reader WN109 uses.

Everything is read from the project's files on disk, like the rest of the
serving index, so the answer does not depend on the files of the run.
"""

from __future__ import annotations

import ast
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from .. import construction
from ..construction import passes
from ..provisional import provisional
from ..reading import SourceError, decode
from ...common.cache import digest_of
from .facts import ServingFacts

logger = logging.getLogger(__name__)

Key = tuple[Path, str]
Function = ast.FunctionDef | ast.AsyncFunctionDef
#: Constructor parameters followed outwards at most (a norm passed down through wrappers of wrappers).
_MAX_LEVELS = 8
#: Files read for one question at most: past that the answer is "unknown" (the application counts).
_MAX_FILES = 200
_CONSTRUCTORS = ("__init__",)
#: Parsed files kept at once.
_MAX_TREES = 4
#: A call that builds a class or calls a function: its file, the call, the function it is in, that function's
#: key when its parameters are a constructor's (a top-level function, a top-level class's ``__init__``), the
#: file's constant module-level dicts.
_Call = tuple[Path, ast.Call, "Function | None", "Key | None", dict[str, ast.expr]]


@dataclass
class _Parsed:
    tree: ast.Module
    constants: dict[str, ast.expr]
    #: Qualified name of each top-level class or function -> its node.
    units: dict[str, ast.stmt] = field(default_factory=dict)


class Selection:
    """Answers "can the project's constructions select this guarded application?" for one serving index."""

    def __init__(
        self, facts: Callable[[Path], "ServingFacts | None"], read: Callable[[Path], "bytes | None"],
        lookup: Callable[[Path, str], "tuple[Key, str] | None"], mentioning: Callable[[Path, str], list[Path]],
        kept: Callable[[bytes], ast.Module | None] = lambda digest: None,
    ) -> None:
        #: The index's per-file facts, bytes, name lookup, and the project files that mention a name (byte search).
        self._facts, self._read, self._lookup, self._mentioning = facts, read, lookup, mentioning
        #: The tree the analysis kept of a file's bytes (``kept_trees``: not parsed again); read, never changed.
        self._kept = kept
        self._parsed: OrderedDict[Path, _Parsed | None] = OrderedDict()
        self._values: dict[tuple[Key, str], list[str] | None] = {}
        self._building: dict[Key, list[_Call] | None] = {}
        self._attributes: dict[tuple[Key, str], ast.expr | None] = {}
        #: file -> its top-level classes by name, for the class-level constants read there (``_classes_of``).
        self._classes: dict[Path, dict[str, ast.ClassDef]] = {}

    def selected(self, start: Key, line: int) -> bool:
        """False only when no construction can pass what the tests guarding ``line`` in ``start`` require."""
        function = self._function(start, line)
        if function is None:
            return True
        params = construction.parameter_names(function)
        parsed = self._parse(start[0])
        constants = parsed.constants if parsed is not None else {}
        fixed = frozenset(k for k in constants if "." in k and k.partition(".")[0] not in params)
        tests = (
            *construction.guard_tests(function.body, line, params | fixed), *construction.choice_tests(function, line, params | fixed),
        )
        for test in tests:
            if test.param in fixed and _literal_repr(constants[test.param]) is not None:
                if passes((test,), {test.param: _literal_repr(constants[test.param])}) is False:
                    return False  # ``if Config.out_channels > 1:`` with ``out_channels = 1`` in the class body
                continue
            if not test.param or test.param not in params or construction.reassigned(function, test.param):
                continue  # not read, or no longer what the constructions passed (``norm = norm or "weight_norm"``)
            values = self.values(start, test.param)
            if values is not None and all(passes((test,), {test.param: value}) is False for value in values):
                logger.debug("%s:%d: no construction selects %s %s", start[0], line, test.param, test.op)
                return False
        return True

    def _function(self, start: Key, line: int) -> Function | None:
        """The constructor or function holding ``line``: a class's ``__init__``, or the top-level function itself."""
        parsed = self._parse(start[0])
        unit = parsed.units.get(start[1]) if parsed is not None else None
        if isinstance(unit, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return unit
        if isinstance(unit, ast.ClassDef):
            for node in unit.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _CONSTRUCTORS:
                    if node.lineno <= line <= (node.end_lineno or node.lineno):
                        return node
        return None

    # -- what a parameter may be -----------------------------------------------------------
    def values(self, key: Key, param: str, level: int = 0) -> list[str] | None:
        """The constants ``param`` of ``key`` (a class's ``__init__`` or a function) is given across the project."""
        memo = (key, param)
        if memo in self._values:
            return self._values[memo]
        with provisional(self._values, memo, None):  # a cycle of constructors passing the parameter round is unknown
            found = self._values_of(key, param, level) if level <= _MAX_LEVELS else None
        self._values[memo] = found
        return found

    def _values_of(self, key: Key, param: str, level: int) -> list[str] | None:
        signature = self._signature(key)
        if signature is None:
            return None
        positional, defaults = signature
        position = positional.index(param) if param in positional else None
        calls = self._calls(key)
        if not calls:
            return None  # built only where the project does not show (a config, a user): not decided here
        out: list[str] = []
        for file, call, caller, caller_key, constants in calls:
            sources = construction.argument_sources(call, param, position, caller, constants)
            if sources is None:
                return None
            for kind, value in sources:
                if kind == "default":
                    default = defaults.get(param)
                    if default is None:
                        return None
                    out.append(default[1])
                elif kind == "const":
                    out.append(value)
                else:
                    outer = self.values(caller_key, value, level + 1) if caller_key is not None else None
                    if outer is None:
                        return None
                    out.extend(outer)
        return out

    def _signature(self, key: Key) -> tuple[list[str], dict[str, construction.Source | None]] | None:
        parsed = self._parse(key[0])
        unit = parsed.units.get(key[1]) if parsed is not None else None
        if isinstance(unit, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return construction.parameter_defaults(unit, False)
        if isinstance(unit, ast.ClassDef):
            init = next((n for n in unit.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"), None)
            if init is not None:
                return construction.parameter_defaults(init, True)
        return None

    # -- where the project builds it ----------------------------------------------------------
    def _calls(self, key: Key) -> list[_Call] | None:
        """Every call that builds ``key``, with the function it is in; a subclass's constructions pass through.

        A subclass without its own ``__init__`` is built like the class; one
        with an ``__init__`` builds it with ``super().__init__(...)``.  None
        where the name is used otherwise (handed around as a value, ``partial``):
        those constructions cannot be read.
        """
        if key in self._building:
            return self._building[key]
        with provisional(self._building, key, None):  # a cycle of subclasses is unknown
            found = self._building[key] = self._find_calls(key)
        return found

    def _find_calls(self, key: Key) -> list[_Call] | None:
        short = key[1].rpartition(".")[2]
        files = list(dict.fromkeys([key[0], *self._mentioning(key[0], short)]))
        if len(files) > _MAX_FILES:
            return None
        out: list[_Call] = []
        for file in files:
            parsed = self._parse(file)
            if parsed is None:
                return None
            for node, parent, caller, caller_key in self._uses(file, parsed, short):
                if not self._stands_for(file, node, key):
                    continue
                if isinstance(parent, ast.Call) and parent.func is node:
                    out.append((file, parent, caller, caller_key, parsed.constants))
                elif isinstance(parent, ast.ClassDef) and node in parent.bases and parent in parsed.tree.body:
                    inherited = self._subclass_calls(file, parsed, parent)
                    if inherited is None:
                        return None
                    out.extend(inherited)
                elif not _ignorable(node, parent):
                    return None  # a base class, ``partial(Cls, ...)``, ``factory = Cls``: constructions not shown
        return out

    def _subclass_calls(self, file: Path, parsed: _Parsed, subclass: ast.ClassDef) -> list[_Call] | None:
        """How a subclass builds its base: its own constructions, or the ``super().__init__(...)`` of its ``__init__``."""
        facts = self._facts(file)
        sub: Key = (file, f"{facts.module}.{subclass.name}" if facts is not None and facts.module else subclass.name)
        init = next((n for n in subclass.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"), None)
        if init is None:
            return self._calls(sub)
        supers = [
            node for node in ast.walk(init)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "super"
        ]
        return [(file, call, init, sub, parsed.constants) for call in supers] or None

    def _uses(self, file: Path, parsed: _Parsed, short: str) -> Iterator[tuple[ast.expr, ast.AST, Function | None, Key | None]]:
        """Names and attributes spelled ``short`` in the file, each with its parent and the function holding it."""
        module = self._facts(file)
        prefix = f"{module.module}." if module is not None and module.module else ""
        stack: list[tuple[ast.AST, Function | None, Key | None]] = [(parsed.tree, None, None)]
        while stack:
            node, function, owner = stack.pop()
            for child in ast.iter_child_nodes(node):
                inner, inner_owner = function, owner
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inner, inner_owner = child, _owner(file, node, child, prefix, function)
                elif isinstance(child, ast.ClassDef):
                    inner, inner_owner = None, None
                if (isinstance(child, ast.Name) and child.id == short) or (isinstance(child, ast.Attribute) and child.attr == short):
                    yield child, node, function, owner
                stack.append((child, inner, inner_owner))

    def _stands_for(self, file: Path, node: ast.expr, key: Key) -> bool:
        dotted = construction.dotted_name(node)
        if dotted is None:
            return False
        facts = self._facts(file)
        if facts is None:
            return False
        head, _, rest = dotted.partition(".")
        names = list(facts.exports.get(head, ()))
        own = f"{facts.module}.{head}" if facts.module else head
        if own in facts.classes or own in facts.functions:
            names.append(own)
        for name in names:
            found = self._lookup(file, f"{name}.{rest}" if rest else name)
            if found is not None and found[0] == key and not found[1]:
                return True
        return False

    def _parse(self, file: Path) -> _Parsed | None:
        """The file's tree, of the few read last (trees of large model files are big; questions come file by file)."""
        if file in self._parsed:
            self._parsed.move_to_end(file)
            return self._parsed[file]
        while len(self._parsed) >= _MAX_TREES:
            self._parsed.popitem(last=False)
        self._parsed[file] = None
        data = self._read(file)
        facts = self._facts(file)
        if data is None or facts is None:
            return None
        tree = self._kept(digest_of(data))
        if tree is None:
            try:
                tree = ast.parse(decode(data).text, str(file))
            except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError) as error:
                logger.debug("%s: not read for constructor arguments: %s", file, error)
                return None
        prefix = f"{facts.module}." if facts.module else ""
        units: dict[str, ast.stmt] = {f"{prefix}{n.name}": n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
        constants = {**construction.module_constants(tree), **self._class_constants(file, tree)}
        parsed = self._parsed[file] = _Parsed(tree, constants, units)
        return parsed

    # -- class-level constants of configuration classes ----------------------------
    def _class_constants(self, file: Path, tree: ast.Module) -> dict[str, ast.expr]:
        """``Config.up_type`` read in ``file`` -> its constant: a project class's body binds it once to a literal and
        no project file that names the class assigns ``.up_type`` (or calls ``setattr``), so it is what it says."""
        out: dict[str, ast.expr] = {}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            dotted = f"{node.value.id}.{node.attr}"
            if dotted in out:
                continue
            key = self._class_named(file, node.value.id)
            value = self._class_attribute(key, node.attr) if key is not None else None
            if value is not None:
                out[dotted] = value
        return out

    def _class_named(self, file: Path, name: str) -> Key | None:
        """The project class a name of ``file`` stands for (its own, or imported), else None."""
        facts = self._facts(file)
        if facts is None:
            return None
        own = f"{facts.module}.{name}" if facts.module else name
        for qualified in [*facts.exports.get(name, ()), *([own] if own in facts.classes else [])]:
            hit = self._lookup(file, qualified)
            if hit is not None and not hit[1]:
                return hit[0]
        return None

    def _class_attribute(self, key: Key, attribute: str) -> ast.expr | None:
        memo = (key, attribute)
        if memo not in self._attributes:
            self._attributes[memo] = self._find_class_attribute(key, attribute)
        return self._attributes[memo]

    def _classes_of(self, file: Path) -> dict[str, ast.ClassDef]:
        """The file's top-level classes by name, from one parse per run (a configuration class is asked for each of
        its attributes: a file was parsed 19 times on one tree)."""
        found = self._classes.get(file)
        if found is None:
            data = self._read(file)
            tree = self._kept(digest_of(data)) if data is not None else None
            if tree is None and data is not None:
                try:
                    tree = ast.parse(decode(data).text, str(file))
                except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
                    tree = None
            body = tree.body if tree is not None else []
            found = self._classes[file] = {}
            for node in body:
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, node)  # the first, as ``next`` over the body found it
        return found

    def _find_class_attribute(self, key: Key, attribute: str) -> ast.expr | None:
        short = key[1].rpartition(".")[2]
        unit = self._classes_of(key[0]).get(short)
        if unit is None:
            return None
        values = [
            s.value for s in unit.body if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None
            and any(isinstance(t, ast.Name) and t.id == attribute for t in (s.targets if isinstance(s, ast.Assign) else [s.target]))
        ]
        if len(values) != 1 or _literal_repr(values[0]) is None:
            return None
        store = re.compile(rb"\." + re.escape(attribute.encode()) + rb"\s*(=[^=]|[-+*/|&]=)|setattr\(")
        for other in dict.fromkeys([key[0], *self._mentioning(key[0], short)]):
            text = self._read(other)
            if text is None or store.search(text):
                return None  # set elsewhere (``Config.up_type = ...``, ``cfg.up_type = ...``): not known here
        return values[0]


def _literal_repr(node: ast.expr) -> str | None:
    """A literal's value as the selection compares it (``repr``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return repr(node.value)
    return None


def _owner(file: Path, parent: ast.AST, function: Function, prefix: str, outer: Function | None) -> Key | None:
    """The key whose parameters a function's are: a top-level function, or the ``__init__`` of a top-level class."""
    if outer is not None:
        return None  # a nested function or a method's: its parameters are not a constructor's
    if isinstance(parent, ast.Module):
        return (file, f"{prefix}{function.name}")
    if isinstance(parent, ast.ClassDef) and function.name == "__init__":
        return (file, f"{prefix}{parent.name}")
    return None


def _ignorable(node: ast.expr, parent: ast.AST) -> bool:
    """A use that builds nothing: an import, an annotation, ``isinstance(x, Cls)``."""
    if isinstance(parent, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(parent, (ast.arg, ast.AnnAssign)) and getattr(parent, "annotation", None) is node:
        return True
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is node:
        return True
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ("isinstance", "issubclass")
