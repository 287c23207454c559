"""Turn one file's source text into a FileSummary: applications, removals, units.

One pass over CPython's ``ast`` records scopes, bindings and every call with
the context the rules need (enclosing function, ``try`` bodies, ``if`` tests);
a second step resolves only the calls' callees.
"""

from __future__ import annotations

import ast
import contextlib
import re
import sys
from typing import Iterator

from ..core import catalogue
from .model import Application, FileSummary, Removal, Site, Unit
from .resolve import API_ROOTS, Resolver, Scope, bind_import, module_package

_NOQA = re.compile(r"#\s*noqa(?P<sep>:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
#: Exceptions whose handler swallows the ValueError of a legacy remover.
_SWALLOWS = frozenset({"ValueError", "Exception", "BaseException"})
#: The same for remove_parametrizations on a module without that parametrization.
_CATCHES_MODERN = _SWALLOWS | {"KeyError"}
_SPELLING_CHECK = catalogue.SPELLING_GUARD_WORDS
_WEIGHT_NORM = catalogue.Kind.WEIGHT_NORM.value
_SPECTRAL_NORM = catalogue.Kind.SPECTRAL_NORM.value
_MODERN = catalogue.Style.MODERN.value
_LEGACY = catalogue.Style.LEGACY.value


def parse_noqa(lines: list[str]) -> dict[int, frozenset[str]]:
    """Map line number -> suppressed codes (empty set: every code)."""
    out: dict[int, frozenset[str]] = {}
    for number, line in enumerate(lines, start=1):
        if "noqa" not in line.lower():
            continue
        match = _NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        out[number] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else frozenset()
    return out


class _Collector(ast.NodeVisitor):
    """Build scopes and bindings; remember every call with its context."""

    def __init__(self, module: str, package: list[str]) -> None:
        self.module = module
        self.package = package
        self.star_modules: list[str] = []
        self.scope = Scope("module", module, None)
        self.module_scope = self.scope
        self.unit = module
        self.function: ast.AST | None = None
        self.tries: tuple[ast.Try, ...] = ()
        self.ifs: tuple[ast.expr, ...] = ()
        self.calls: list[tuple[ast.Call, Scope, str, ast.AST | None, tuple, tuple]] = []
        self.bases: list[tuple[str, ast.expr, Scope]] = []
        self.units: list[str] = []
        self.import_targets: list[str] = []

    # -- bindings -----------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        self.import_targets.extend(bind_import(self.scope, node, self.package, self.star_modules))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.import_targets.extend(bind_import(self.scope, node, self.package, self.star_modules))

    def _bind_target(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.scope.bind(target.id, ("expr", value, self.scope) if value is not None else ("opaque",))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(element, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._bind_target(target, node.value)
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind_target(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._bind_target(node.target, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind_target(node.target, node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._bind_target(node.target, None)
        self.generic_visit(node)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
        self.generic_visit(node)

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.scope.bind(node.name, ("opaque",))
        self.generic_visit(node)

    # -- scopes -------------------------------------------------------------
    def _enter(self, node: ast.AST, kind: str, name: str) -> tuple:
        qualname = f"{self.scope.qualname}.{name}" if self.scope.kind != "module" else f"{self.module}.{name}" if self.module else name
        self.scope.bind(name, ("qual", qualname))
        saved = (self.scope, self.unit, self.function, self.tries, self.ifs)
        if self.scope.kind == "module":
            self.unit = qualname
            self.units.append(qualname)
        self.scope = Scope(kind, qualname, self.scope)
        self.tries, self.ifs = (), ()
        if kind == "function":
            self.function = node
        return saved

    def _leave(self, saved: tuple) -> None:
        self.scope, self.unit, self.function, self.tries, self.ifs = saved

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        saved = self._enter(node, "function", node.name)
        arguments = node.args
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            self.scope.bind(arg.arg, ("opaque",))
        for star_arg in (arguments.vararg, arguments.kwarg):
            if star_arg is not None:
                self.scope.bind(star_arg.arg, ("opaque",))
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        saved_scope = self.scope
        self.scope = Scope("function", f"{saved_scope.qualname}.<lambda>", saved_scope)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            self.scope.bind(arg.arg, ("opaque",))
        self.visit(node.body)
        self.scope = saved_scope

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for base in node.bases:
            self.visit(base)
        for keyword in node.keywords:
            self.visit(keyword)
        saved = self._enter(node, "class", node.name)
        for base in node.bases:
            self.bases.append((self.unit, base, saved[0]))
        for statement in node.body:
            self.visit(statement)
        self._leave(saved)

    # -- context ------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        saved = self.tries
        self.tries = (*saved, node)
        for statement in node.body:
            self.visit(statement)
        self.tries = saved
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        saved = self.ifs
        self.ifs = (*saved, node.test)
        for statement in (*node.body, *node.orelse):
            self.visit(statement)
        self.ifs = saved

    def visit_Call(self, node: ast.Call) -> None:
        self.calls.append((node, self.scope, self.unit, self.function, self.tries, self.ifs))
        self.generic_visit(node)


class _Positions:
    """Convert ast's UTF-8 byte columns to 1-based character columns."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def column(self, line: int, byte_offset: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_offset + 1
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "replace")) + 1

    def site(self, node: ast.AST, unit: str) -> Site:
        end_line = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return Site(
            line=node.lineno,  # type: ignore[attr-defined]
            column=self.column(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            end_line=end_line,
            end_column=self.column(end_line, node.end_col_offset or 0),  # type: ignore[attr-defined]
            unit=unit,
        )


def split_lines(text: str) -> list[str]:
    """Physical lines as the tokenizer numbers them (\\r\\n, \\r and \\n all end a line)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _caught_names(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names: set[str] = set()
    for node in types:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def _has_star(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def _tensor_name_missing(call: ast.Call) -> bool:
    if _has_star(call):
        return False
    return len(call.args) < 2 and not any(k.arg == "tensor_name" for k in call.keywords)


def _leaves_unparametrized(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg == "leave_parametrized":
            return isinstance(keyword.value, ast.Constant) and keyword.value.value is False
    return len(call.args) >= 3 and isinstance(call.args[2], ast.Constant) and call.args[2].value is False


#: Python frames the tree walk may need: about three per level of nesting, and
#: CPython compiles expressions nested a few thousand levels deep.
_WALK_RECURSION_LIMIT = 30_000


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Let the walk follow any tree CPython itself could parse (pure-Python frames only)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, _WALK_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def analyze(text: str, path: str, module: str, is_package: bool = False) -> FileSummary:
    """Facts of one file. Raises SyntaxError (and ValueError for NUL bytes) from ``ast``."""
    tree = ast.parse(text, filename=path)
    with deep_recursion():
        return _analyze_tree(tree, text, path, module, is_package)


def _analyze_tree(tree: ast.Module, text: str, path: str, module: str, is_package: bool) -> FileSummary:
    lines = split_lines(text)
    positions = _Positions(lines)
    collector = _Collector(module, module_package(module, is_package))
    collector.visit(tree)
    resolver = Resolver(collector.module_scope, collector.star_modules)
    summary = FileSummary(path=path, module=module, noqa=parse_noqa(lines))
    summary.torch_bound = "torch" in collector.module_scope.bindings and resolver.name(
        "torch", collector.module_scope
    ) == frozenset({"torch"})

    direct: dict[str, dict[str, set[str]]] = {}
    refs: dict[str, set[str]] = {unit: set() for unit in collector.units}
    refs.setdefault(module, set())
    modern_remover_in: set[int] = set()
    legacy_remover_in: set[int] = set()
    pending: list[tuple[ast.Call, catalogue.Spelling, str, str, ast.AST | None, tuple, tuple]] = []

    for call, scope, unit, function, tries, ifs in collector.calls:
        names = resolver.expr(call.func, scope)
        if not names:
            continue
        refs.setdefault(unit, set()).update(n for n in names if not n.startswith("torch."))
        applied: dict[str, set[str]] = {}
        removal: tuple[catalogue.Spelling, str] | None = None
        all_legacy_wn = True
        for name in sorted(names):
            found = catalogue.spelling_for_api(name)
            if found is None:
                all_legacy_wn = False
                continue
            spelling, role = found
            if not (spelling.kind is catalogue.Kind.WEIGHT_NORM and spelling.style is catalogue.Style.LEGACY and role == "apply"):
                all_legacy_wn = False
            if role == "apply":
                applied.setdefault(spelling.kind.value, set()).add(spelling.style.value)
            elif role == "remove" and (removal is None or spelling.style is catalogue.Style.MODERN):
                removal = (spelling, name)
        for kind, styles in applied.items():
            direct.setdefault(unit, {}).setdefault(kind, set()).update(styles)
            summary.applications.append(
                Application(
                    site=positions.site(call, unit),
                    kind=kind,
                    styles=frozenset(styles),
                    legacy_only=kind == _WEIGHT_NORM and all_legacy_wn,
                    api=min(n for n in names if catalogue.spelling_for_api(n)),
                )
            )
        if removal is None:
            continue
        spelling, api = removal
        if spelling.style is catalogue.Style.MODERN:
            modern_remover_in.add(id(function))
        else:
            legacy_remover_in.add(id(function))
        pending.append((call, spelling, api, unit, function, tries, ifs))

    for call, spelling, api, unit, function, tries, ifs in pending:
        if spelling.style is catalogue.Style.MODERN:
            summary.removals.append(
                Removal(
                    site=positions.site(call, unit),
                    kind="",
                    style=_MODERN,
                    api=api,
                    guard=_guard(tries, ifs, id(function) in legacy_remover_in, modern=True),
                    missing_tensor_name=_tensor_name_missing(call),
                    leave_parametrized_false=_leaves_unparametrized(call),
                    star_args=_has_star(call),
                )
            )
        else:
            summary.removals.append(
                Removal(
                    site=positions.site(call, unit),
                    kind=spelling.kind.value,
                    style=_LEGACY,
                    api=api,
                    guard=_guard(tries, ifs, id(function) in modern_remover_in, modern=False),
                    star_args=_has_star(call),
                )
            )

    for unit, base, scope in collector.bases:
        refs.setdefault(unit, set()).update(n for n in resolver.expr(base, scope) if not _is_api_name(n))
    for unit in sorted(refs):
        kinds = direct.get(unit, {})
        summary.units[unit] = Unit(
            direct=tuple(sorted((k, frozenset(v)) for k, v in kinds.items())),
            refs=tuple(sorted(refs[unit])),
        )
    summary.imports = tuple(sorted({t for t in collector.import_targets if not _is_api_name(t)}))
    summary.applications.sort(key=lambda a: a.site.key)
    summary.removals.sort(key=lambda r: r.site.key)
    return summary


def _is_api_name(qualified: str) -> bool:
    """A name inside the APIs' own package (``torch...``), not the user's code.

    Compared by top-level package, so a user package named ``torchvoc`` is
    still followed across files.
    """
    return qualified.partition(".")[0] in API_ROOTS


def _guard(tries: tuple[ast.Try, ...], ifs: tuple[ast.expr, ...], other_spelling_nearby: bool, modern: bool) -> str:
    """How a removal is protected against meeting the other spelling.

    ``dual``: the same function also calls the other spelling's remover and
    this call sits in a ``try`` that lets it fall through to it (or the
    function is the both-spellings helper shape); ``checked``: an ``if`` looks
    at the module's parametrizations/hooks first; ``swallowed``: an ``except``
    hides the failure with no fallback.
    """
    for test in ifs:
        if _SPELLING_CHECK.search(ast.unparse(test)):
            return "checked"
    swallowers = _CATCHES_MODERN if modern else _SWALLOWS
    if tries:
        caught: set[str] = set()
        for handler in tries[-1].handlers:
            caught |= _caught_names(handler)
        if other_spelling_nearby and caught & (swallowers | {"AttributeError", "RuntimeError"}):
            return "dual"
        if caught & swallowers:
            return "swallowed"
    elif other_spelling_nearby and modern:
        # The modern call in the handler of a legacy try: the both-spellings remover.
        return "dual"
    return "none"
