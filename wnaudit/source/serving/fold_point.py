"""Where WN110's fold can go: after the weights are loaded, or nowhere in the scope that builds the model.

A fold renames the state-dict keys (``conv.parametrizations.weight.original0``
becomes ``conv.weight``): a strict ``load_state_dict`` of the checkpoint after
it fails, and a ``strict=False`` one silently loads nothing into the folded
weights.  The fixer (``rewrite/insert.py``) therefore places the fold after the
last load of the model in the block, and the rule offers no fix where a
constructor builds the model bare and loads nothing into it (its weights come
in later, elsewhere).  Pure ``ast`` and text: linting never imports libcst.
"""

from __future__ import annotations

import ast
import logging
from functools import lru_cache
from typing import Iterator, Sequence

from ..analysis import deep_recursion
from ..ast_visitor import Visitor
from ..reading import SourceError, decode

log = logging.getLogger(__name__)

#: Calls chained on a construction that return the same module, still holding the initial weights.
_SAME_MODULE = frozenset({"to", "eval", "train", "cuda", "cpu", "half", "float", "double", "bfloat16", "requires_grad_"})


def holders(target: str) -> set[str]:
    """``target`` and each dotted prefix of it: ``self.vocoder`` is held by ``self``."""
    parts = target.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts) + 1)}


def is_load(callee: str, arguments: Sequence[str], target: str) -> bool:
    """A call that loads weights into ``target``: a ``*load*`` method of it or of what holds it, or a loader taking it.

    ``model.load_state_dict(sd)``, ``self.load_state_dict(sd)`` for ``self.vocoder``,
    ``load_checkpoint(model, path)``; not ``torch.load(path)`` (it only reads a file).
    """
    owner, _, name = callee.rpartition(".")
    if "load" not in name.lower():
        return False
    held = holders(target)
    return owner in held or any(argument in held for argument in arguments)


class _Loads(Visitor):
    """Finds a load of the target in one statement, not looking into nested functions or classes (another scope)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.found = False

    def visit_Call(self, node: ast.Call) -> None:
        arguments = [ast.unparse(a) for a in node.args] + [ast.unparse(k.value) for k in node.keywords]
        if is_load(ast.unparse(node.func), arguments, self.target):
            self.found = True
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return None

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]
    visit_ClassDef = visit_FunctionDef  # type: ignore[assignment]
    visit_Lambda = visit_FunctionDef  # type: ignore[assignment]


def loads(statement: ast.stmt, target: str) -> bool:
    """Whether ``statement`` (or a block nested in it, same scope) loads weights into ``target``."""
    finder = _Loads(target)
    finder.visit(statement)
    return finder.found


def is_bare_construction(value: ast.expr) -> bool:
    """A call to a class (``Generator(...)``, ``Generator(...).to(device)``): fresh weights, nothing loaded.

    A lower-case callee (``load_model(path)``, ``Generator.from_pretrained(path)``,
    ``torch.load(path)``) may return loaded weights, so it is not one.
    """
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_MODULE:
        value = value.func.value
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name[:1].isupper()


def _assignments(node: ast.AST, target: str) -> Iterator[ast.Assign | ast.AnnAssign]:
    for child in ast.walk(node):
        if isinstance(child, ast.Assign) and any(ast.unparse(t) == target for t in child.targets):
            yield child
        elif isinstance(child, ast.AnnAssign) and child.value is not None and ast.unparse(child.target) == target:
            yield child


def _path_to(tree: ast.Module, line: int) -> list[ast.stmt]:
    """The statements holding ``line``, outermost first: a descent along line ranges, not a walk of the whole tree."""
    path: list[ast.stmt] = []
    body: list[ast.stmt] = tree.body
    while True:
        holder = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if holder is None:
            return path
        path.append(holder)
        body = [s for s in _blocks(holder) if s.lineno <= line <= (s.end_lineno or s.lineno)]


def _blocks(statement: ast.stmt) -> list[ast.stmt]:
    """The statements directly nested in ``statement`` (bodies, branches, handlers, cases)."""
    nested: list[ast.stmt] = []
    for field in ("body", "orelse", "finalbody"):
        nested.extend(getattr(statement, field, []))
    for handler in getattr(statement, "handlers", []):
        nested.extend(handler.body)
    for case in getattr(statement, "cases", []):
        nested.extend(case.body)
    return nested


def _class_at(tree: ast.Module, line: int) -> ast.ClassDef | None:
    """The innermost class holding ``line``."""
    return next((s for s in reversed(_path_to(tree, line)) if isinstance(s, ast.ClassDef)), None)


def _function_at(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function holding ``line``."""
    return next((s for s in reversed(_path_to(tree, line)) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _is_target(value: ast.expr | None, target: str) -> bool:
    """``target`` itself, or a call chained on it that returns the same module (``model.eval()``, ``model.to(d)``)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_MODULE:
        value = value.func.value
    return isinstance(value, ast.Name) and value.id == target


def returned_unloaded(tree: ast.Module, line: int, target: str) -> str:
    """The function that builds the local ``target`` bare, loads nothing into it and returns it ("": not so).

    ``def build(): model = Generator(); model.eval(); return model``: its
    caller loads the weights (``build().load_state_dict(sd)``), so a fold placed
    in the function would come before the load.
    """
    function = _function_at(tree, line)
    if function is None or not target.isidentifier():
        return ""
    statements = list(_statements(function.body))
    assigned = [a for a in _assignments(function, target) if any(a is s for s in statements)]
    first = min(assigned, key=lambda a: (a.lineno, a.col_offset), default=None)
    if first is None or first.value is None or not is_bare_construction(first.value):
        return ""
    end = first.end_lineno or first.lineno
    if any(s.lineno > end and loads(s, target) for s in statements):
        return ""
    returns = any(isinstance(s, ast.Return) and _is_target(s.value, target) for s in statements)
    return function.name if returns else ""


def built_unloaded(tree: ast.Module, line: int, target: str) -> bool:
    """``self.<name>`` is first assigned in ``__init__`` from a bare construction, and ``__init__`` loads nothing into it.

    The fixer folds right after that assignment (``rewrite/insert.py``): here no
    point of that scope has the weights in, so no fold can be placed safely.
    """
    cls = _class_at(tree, line)
    if cls is None or not target.startswith("self."):
        return False
    found = sorted(_assignments(cls, target), key=lambda a: (a.lineno, a.col_offset))
    if not found:
        return False
    first = found[0]
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None or not any(first is a for a in _assignments(init, target)):
        return False
    if first.value is None or not is_bare_construction(first.value):
        return False
    end = first.end_lineno or first.lineno
    return not any(s.lineno > end and loads(s, target) for s in _statements(init.body))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks nested in it, not those of nested functions or classes."""
    for statement in body:
        yield statement
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _statements(_blocks(statement))


def _as_unparsed(target: str) -> str:
    """``self.models["hift"]`` spelled as ``ast.unparse`` spells the code it is compared with (``['hift']``)."""
    try:
        return ast.unparse(ast.parse(target, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return target


@lru_cache(maxsize=64)
def _parsed(text: str) -> ast.Module | None:
    """The file's tree as the analysis builds it (None: not Python; RecursionError, MemoryError: not here)."""
    try:
        with deep_recursion():
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def no_fold_point(file: str, data: bytes | None, line: int, target: str, kept: ast.Module | None = None) -> str | None:
    """Why the model ``target`` at ``line`` of ``file`` has no safe point for the fold.

    ``data``: the file's source as the run reads it (``Workspace.source_bytes``: a notebook's code cells already
    as one module); ``kept``: the tree the analysis kept of those bytes (``kept_trees``: not parsed again).
    "" when it has one (the fixer places the fold after the last load in scope); None when this process could
    not parse or walk the tree (nested past what it can, out of memory): an answer of the process, not the file.
    """
    if data is None:
        return ""
    try:
        with deep_recursion():  # as deep as the analysis parses and walks
            tree = kept if kept is not None else _parsed(decode(data).text)
            return _reason(tree, line, _as_unparsed(target)) if tree is not None else ""
    except SourceError as error:
        log.debug("WN110: cannot read %s to place the fold: %s", file, error)
        return ""
    except (RecursionError, MemoryError) as error:
        log.debug("WN110: cannot read %s here to place the fold: %r", file, error)
        return None


def _reason(tree: ast.Module, line: int, target: str) -> str:
    if target.startswith("self."):
        return f"`__init__` builds `{target}` without its weights and loads none" if built_unloaded(tree, line, target) else ""
    builder = returned_unloaded(tree, line, target)
    return f"`{builder}()` builds `{target}` without its weights and returns it for its caller to load" if builder else ""
