"""Add a statement at a site: the fold WN110 proposes, where the serving code can take it.

``after``: right after the statement that puts the model in eval mode, but
after the last later statement of that block that loads weights into the
model or what holds it (``model.load_state_dict``, ``self.load_state_dict``
for ``self.vocoder``, ``load_checkpoint(model, ...)``, nested in an ``if`` or
``with`` too): a fold before the load renames the keys the checkpoint has.  ``before``:
before the statement of the enclosing function that holds the site (the
``with torch.inference_mode():`` block, the ``torch.compile`` call), so the
model is folded before it is captured or run.  A model kept on ``self`` is
folded right after the ``self.<name> = ...`` assignment that builds it (and
after its loads there); where ``__init__`` builds it bare and loads nothing,
the rule offers no fix.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from ..serving.fold_point import is_load
from ..rules.base import Candidate, Insertion
from .support import Statement, insert_import



class _Loads(cst.CSTVisitor):
    """Finds a load of the target in a statement, not looking into nested functions or classes (another scope)."""

    def __init__(self, module: cst.Module, target: str) -> None:
        super().__init__()
        self.module = module
        self.target = target
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        arguments = [self.module.code_for_node(a.value) for a in node.args]
        if is_load(self.module.code_for_node(node.func), arguments, self.target):
            self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def add_imports(module: cst.Module, done: Sequence[Candidate]) -> cst.Module:
    """The module with the imports the added statements need (``import wnaudit``; the local fold needs none)."""
    for name in sorted({c.insert.module for c in done if c.insert is not None and c.insert.module}):
        module = insert_import(module, name)
    return module


def _blocks(statement: cst.CSTNode) -> list[cst.IndentedBlock]:
    """The blocks of a compound statement (its body, ``elif``/``else``, handlers, ``finally``), not deeper ones."""
    found: list[cst.IndentedBlock] = []

    class _Find(cst.CSTVisitor):
        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
            found.append(node)
            return False

    statement.visit(_Find())
    return found


class Inserter(cst.CSTTransformer):
    """Adds the candidates' statements while a transformer walks the module (positions: the file as it was)."""

    def __init__(self, module: cst.Module, positions: Mapping[cst.CSTNode, CodeRange], todo: list[Candidate]) -> None:
        super().__init__()
        self.module = module
        self.positions = positions
        self.todo = todo
        self.done: list[Candidate] = []
        self._classes: list[cst.ClassDef] = []
        self._functions: list[cst.FunctionDef] = []
        self._placed: set[tuple[int, str]] = set()

    def _range(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions.get(node)
        return (where.start.line, where.end.line) if where is not None else (-1, -1)

    def _contains(self, node: cst.CSTNode, line: int) -> bool:
        start, end = self._range(node)
        return start <= line <= end

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._functions.pop()
        return updated_node

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        outermost = bool(self._functions) and self._functions[-1].body is original_node
        body = self._place(list(original_node.body), list(updated_node.body), outermost)
        return updated_node.with_changes(body=body)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = self._place(list(original_node.body), list(updated_node.body), True)
        return updated_node.with_changes(body=body)

    def _place(self, original: list, updated: list, outermost: bool) -> list:
        """``updated`` with the statements that belong in this block (``original``: the same block before the walk)."""
        additions: dict[int, list[cst.BaseStatement]] = {}
        for candidate in self.todo:
            insert = candidate.insert
            assert insert is not None
            index = self._index(original, insert, outermost)
            if index is None:
                continue
            if (insert.line, insert.statement) in self._placed:
                if all(candidate is not other for other in self.done):
                    self.done.append(candidate)  # one fold serves every finding that proposed it
                continue
            self._placed.add((insert.line, insert.statement))
            statement = cst.parse_statement(insert.statement + self.module.default_newline, config=self.module.config_for_parsing)
            additions.setdefault(index, []).append(statement)
            self.done.append(candidate)
        if not additions:
            return updated
        out: list[cst.BaseStatement] = []
        for position, statement in enumerate(updated):
            out.extend(additions.get(position, ()))
            out.append(statement)
        out.extend(additions.get(len(updated), ()))
        return out

    def _index(self, body: list, insert: Insertion, outermost: bool) -> int | None:
        """Where in ``body`` the statement goes (None: not in this block)."""
        if insert.target.startswith("self."):
            return self._after_self_assignment(body, insert)
        for index, statement in enumerate(body):
            if not self._contains(statement, insert.line):
                continue
            if insert.placement == "before":
                return index if outermost else None
            if statement is not self._anchor(insert.line, insert.target):
                return None  # the fold belongs in a block nested in this one, or in one enclosing it
            if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(small, cst.Return) for small in statement.body):
                return index
            return self._after_loads(body, index, insert.target)
        return None

    def _scope(self) -> list:
        """The statements of the innermost function being walked (the module's outside any)."""
        return list(self._functions[-1].body.body) if self._functions else list(self.module.body)

    def _anchor(self, line: int, target: str) -> cst.CSTNode | None:
        """The statement, holding ``line``, after which the fold goes (``_after_loads`` then skips the loads after it).

        The one at the outermost level of the scope whose block loads ``target``
        later (a load after the ``if`` that holds the ``eval()``), else the site's own.
        """
        statements = self._scope()
        while True:
            holding = [i for i, s in enumerate(statements) if self._contains(s, line)]
            if not holding:
                return None
            index = holding[0]
            statement = statements[index]
            if isinstance(statement, cst.SimpleStatementLine) or any(self._loads(s, target) for s in statements[index + 1:]):
                return statement
            inner = [b for b in _blocks(statement) if self._contains(b, line)]
            if not inner:
                return None
            statements = list(inner[0].body)

    def _loads(self, statement: cst.CSTNode, target: str) -> bool:
        finder = _Loads(self.module, target)
        statement.visit(finder)
        return finder.found

    def _after_loads(self, body: list, index: int, target: str) -> int:
        """The position after ``body[index]`` and after the last later statement that loads ``target`` (``serving/fold_point.py``).

        A fold before a load renames the keys the checkpoint has, so the load fails (or, not strict, loads nothing).
        """
        last = index
        for later in range(index + 1, len(body)):
            if self._loads(body[later], target):
                last = later
        return last + 1

    def _after_self_assignment(self, body: list[cst.BaseStatement], insert: Insertion) -> int | None:
        """After the first ``self.<name> = ...`` of the class that holds the site."""
        if not self._classes or not self._contains(self._classes[-1], insert.line):
            return None
        cls = self._classes[-1]
        first = self._first_assignment(cls, insert.target)
        if first is None:
            return None
        start = self._range(first)[0]
        for index, statement in enumerate(body):
            if self._contains(statement, start) and statement is self._anchor(start, insert.target):
                return self._after_loads(body, index, insert.target)
        return None

    def _first_assignment(self, cls: cst.ClassDef, target: str) -> Statement | None:
        found: list[Statement] = []

        class _Find(cst.CSTVisitor):
            def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
                for small in node.body:
                    targets = (
                        [t.target for t in small.targets] if isinstance(small, cst.Assign)
                        else [small.target] if isinstance(small, cst.AnnAssign) else []
                    )
                    if any(cst.Module([]).code_for_node(t) == target for t in targets):
                        found.append(node)
                return False

        cls.visit(_Find())
        return found[0] if found else None
