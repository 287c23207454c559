"""The lint's work is bounded by the import graph (issue 36: NeMo hung it, sglang crashed it).

NeMo's ``nemo/core/neural_types/__init__.py`` star-imports four sibling
modules by absolute name, and they import each other: WN110 followed every
spelling of every path through them (``...comparison.elements.elements...``),
failures included.  sglang's 194-module chain of imports raised
``RecursionError`` from the import scan and no report came out.  The packages
here are generated in that shape; the work is counted (resolutions), not timed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wnaudit.cli.command import run
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.project import Project
from wnaudit.source.serving.file_facts import FileFacts
from wnaudit.source.serving.index import ServingIndex
from wnaudit.source.serving.resolver import Resolver

MODEL = """\
import torch.nn as nn
from torch.nn.utils import weight_norm
from {package}.types import *


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 4, 3))


def load(path):
    model = Net()
    model.eval()
    return model
"""

SERVE = """\
from {package}.chain.m0 import Net


def load(path):
    model = Net()
    model.eval()
    return model
"""


class _TooMuchWork(BaseException):
    """Raised by the counter past the bound (a BaseException: the run's per-file isolation must not swallow it)."""


def _sibling(package: str, index: int, count: int) -> str:
    """A ``neural_types``-like module: it names every sibling, imports the next ones by absolute name, calls ``super()``."""
    names = [f"{package}.types.kind{j}" for j in range(count)]
    lines = [f'"""Kinds {index}: compared with {", ".join(names)}."""', ""]
    for step in (1, 2):
        other = (index + step) % count
        lines.append(f"from {package}.types.kind{other} import Kind{other}")
    lines.append(f"from {package}.types.kind{(index + 3) % count} import *")
    lines += [
        "", "", f"class Kind{index}:", f"    peers = ({', '.join(f'kind{j}' for j in range(count))},)", "",
        "    def __init__(self):", "        super().__init__()", "",
    ]
    return "\n".join(lines)


def _star_tangle(root: Path, count: int = 8) -> Path:
    """``types/__init__`` star-imports ``count`` siblings that import and star-import each other in cycles."""
    package = root / "proj"
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    types = package / "types"
    types.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (types / "__init__.py").write_text("".join(f"from proj.types.kind{j} import *\n" for j in range(count)))
    for j in range(count):
        (types / f"kind{j}.py").write_text(_sibling("proj", j, count))
    (package / "model.py").write_text(MODEL.format(package="proj"))
    return package


def _count_resolutions(monkeypatch: pytest.MonkeyPatch, bound: int) -> list[str]:
    """Every name resolution of the run: a dotted name against the project's modules, a module's facts read for one.

    More than ``bound`` stops the run (``_TooMuchWork``): unbounded linking fails fast instead of hanging.
    """
    calls: list[str] = []

    def count(what: str) -> None:
        calls.append(what)
        if len(calls) > bound:
            raise _TooMuchWork(f"more than {bound} resolutions, e.g. {what}")

    resolve, facts = Project.resolve, FileFacts.get

    def counted_resolve(self: Project, dotted: str, location: object) -> object:
        count(dotted)
        return resolve(self, dotted, location)  # type: ignore[arg-type]

    def counted_facts(self: FileFacts, path: Path) -> object:
        count(str(path))
        return facts(self, path)

    monkeypatch.setattr(Project, "resolve", counted_resolve)
    monkeypatch.setattr(FileFacts, "get", counted_facts)
    return calls


def test_star_imports_in_cycles_resolve_each_name_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NeMo's shape: the lint finishes with its finding, within a bound linear in the package's modules and names."""
    count = 8
    package = _star_tangle(tmp_path, count)
    files = sorted(package.rglob("*.py"))
    # The project's size: each module names every sibling (and a few names of its own); a bound linear in
    # modules x names. The old linking made more than 10^5 resolutions of ever longer spellings here.
    calls = _count_resolutions(monkeypatch, bound=8 * len(files) * count)
    result = lint_files(files, RunOptions())
    assert result.errors == []
    assert [(Path(f.path).name, f.code) for f in result.findings if f.code == "WN110"] == [("model.py", "WN110")]
    assert max(len(dotted.split(".")) for dotted in calls if "/" not in dotted) <= 4  # no spelling grows in the cycles


def test_the_index_resolves_a_module_name_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every (module, name) pair is resolved at most once per run, failures and cycles included."""
    package = _star_tangle(tmp_path)
    names: list[tuple[Path, str]] = []
    real = ServingIndex.__init__

    def spy(self: ServingIndex, *args: object, **kwargs: object) -> None:
        real(self, *args, **kwargs)  # type: ignore[arg-type]
        resolve = self.resolver._names.resolve_name

        def counted(file: Path, head: str, depth: int) -> object:
            names.append((file, head))
            if len(names) > 10_000:
                raise _TooMuchWork("a name resolved again and again")
            return resolve(file, head, depth)

        self.resolver._names.resolve_name = counted  # type: ignore[method-assign]

    monkeypatch.setattr(ServingIndex, "__init__", spy)
    index = ServingIndex(Project([tmp_path]), lambda path: path.read_bytes(), lambda path: [])
    init = package / "types" / "__init__.py"
    for j in range(8):
        for name in (f"Kind{j}", f"kind{j}", "Missing", f"kind{j}.Kind{j}", f"kind{j}.kind{(j + 1) % 8}.Missing"):
            index.lookup(init, f"proj.types.{name}")
            index.lookup(package / "model.py", f"proj.types.{name}")
    assert names and len(names) == len(set(names))
    found = index.lookup(package / "model.py", "proj.types.Kind3")
    assert found is not None and found[0] == (package / "types" / "kind3.py", "proj.types.kind3.Kind3")


def _chain(root: Path, length: int) -> Path:
    """``chain/m0`` re-exports ``Net`` from ``m1``, ... ``m{length}`` defines it: each module imports the next."""
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    chain = root / "proj" / "chain"
    chain.mkdir(parents=True)
    (root / "proj" / "__init__.py").write_text("")
    (chain / "__init__.py").write_text("")
    for j in range(length):
        (chain / f"m{j}.py").write_text(f"from proj.chain.m{j + 1} import *\nfrom proj.chain.m{j + 1} import Net\n")
    (chain / f"m{length}.py").write_text(MODEL.replace("from {package}.types import *\n", "").format())
    (root / "proj" / "serve.py").write_text(SERVE.format(package="proj"))
    return root / "proj"


def test_a_long_chain_of_imports_gives_a_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """sglang's shape: 400 modules each importing the next; no RecursionError, the defining file's findings stand."""
    package = _chain(tmp_path, 400)
    files = sorted(package.rglob("*.py"))
    _count_resolutions(monkeypatch, bound=20 * len(files))  # linear: a few per module (each re-export once)
    result = lint_files(files, RunOptions())
    assert result.errors == []
    assert sorted((Path(f.path).name, f.code) for f in result.findings) == [("m400.py", "WN103"), ("m400.py", "WN110")]


def test_a_file_that_cannot_be_analysed_costs_its_findings_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One file whose WN110 work raises: one error line naming it, the other file's findings still reported."""
    package = tmp_path / "proj"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (package / "__init__.py").write_text("")
    plain = MODEL.replace("from {package}.types import *\n", "")
    (package / "good.py").write_text(plain)
    (package / "bad.py").write_text(plain.replace("Net", "Other"))
    real = ServingIndex.served

    def served(self: ServingIndex, start: tuple[Path, str]) -> object:
        if start[0].name == "bad.py":
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, start)

    monkeypatch.setattr(ServingIndex, "served", served)
    result = lint_files(sorted(package.rglob("*.py")), RunOptions())
    assert [(Path(e.path).name, e.message) for e in result.errors] == [
        ("bad.py", "cannot be analysed (RecursionError: maximum recursion depth exceeded); its findings are left out"),
    ]
    assert sorted({Path(f.path).name for f in result.findings}) == ["good.py"]
    assert {f.code for f in result.findings} == {"WN103", "WN110"}


def test_the_cli_reports_the_file_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """The report still comes out, with the error line, and the run exits 2 (bad input)."""
    package = tmp_path / "proj"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (package / "good.py").write_text(MODEL.replace("from {package}.types import *\n", ""))
    monkeypatch.setattr(ServingIndex, "served", lambda self, start: (_ for _ in ()).throw(RecursionError("deep")))
    assert run(["--no-cache", str(package)]) == 2
    out = capsys.readouterr()
    assert "good.py" in out.err and "cannot be analysed (RecursionError: deep)" in out.err


def test_a_failed_resolution_leaves_no_answer_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The placeholder a cycle guard holds is dropped when the resolution raises: the next file asking gets the answer."""
    package = _star_tangle(tmp_path, 4)
    index = ServingIndex(Project([tmp_path]), lambda path: path.read_bytes(), lambda path: [])
    real, failures = Resolver._lookup, [RecursionError("deep")]

    def failing_once(self: Resolver, file: Path, dotted: str, depth: int) -> object:
        if failures:
            raise failures.pop()
        return real(self, file, dotted, depth)

    monkeypatch.setattr(Resolver, "_lookup", failing_once)
    with pytest.raises(RecursionError):
        index.lookup(package / "model.py", "proj.types.Kind1")
    found = index.lookup(package / "model.py", "proj.types.Kind1")
    assert found is not None and found[0][1] == "proj.types.kind1.Kind1"


def _reachable_truth(edges: dict[int, list[int]], holds: set[int], start: int) -> bool:
    seen, queue = {start}, [start]
    while queue:
        node = queue.pop()
        if node in holds:
            return True
        for nxt in edges[node]:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return False


def test_reachability_matches_a_plain_search_whatever_is_asked_first() -> None:
    """Random import graphs with cycles: every answer is plain reachability, each node's own part computed once."""
    import random

    from wnaudit.source.reachability import Reachable

    generator = random.Random(36)
    for _ in range(200):
        size = generator.randrange(1, 12)
        edges = {n: [generator.randrange(size) for _ in range(generator.randrange(4))] for n in range(size)}
        holds = {n for n in range(size) if generator.random() < 0.15}
        steps: list[int] = []

        def step(path: Path, name: str) -> object:
            node = int(name)
            steps.append(node)
            return True if node in holds else [(path, str(n)) for n in edges[node]]

        reach = Reachable()
        for node in generator.sample(range(size), size):
            assert reach.ask((Path("m"), str(node)), step) == _reachable_truth(edges, holds, node)  # type: ignore[arg-type]
        assert len(steps) == len(set(steps))


def test_reachability_of_a_very_long_chain_uses_no_python_frame_per_link() -> None:
    from wnaudit.source.reachability import Reachable

    length = 20_000  # far past the interpreter's recursion limit
    reach = Reachable()

    def step(path: Path, name: str) -> object:
        node = int(name)
        return node == length or [(path, str(node + 1))]

    assert reach.ask((Path("m"), "0"), step) is True  # type: ignore[arg-type]
    assert all(reach.settled((Path("m"), str(n))) for n in range(0, length, 997))


def test_a_star_import_cycle_gives_the_same_answers_whatever_is_asked_first(tmp_path: Path) -> None:
    """``a`` and ``b`` star-import each other, ``a`` also ``c`` (which defines ``X``): both bind ``X``, in any order.

    The cycle guard reads "nothing" for a name met again while it is being resolved; the name that met it
    must not keep that as its answer (it reaches the cycle's first name, which finds ``c.X``).
    """
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    package = tmp_path / "proj"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from proj.b import *  # X\nfrom proj.c import *\n")
    (package / "b.py").write_text("from proj.a import *  # X\n")
    (package / "c.py").write_text("class X:\n    pass\n")
    questions = [(package / "a.py", "proj.a.X"), (package / "b.py", "proj.b.X"), (package / "b.py", "proj.a.X")]
    expected = ((package / "c.py", "proj.c.X"), "")
    for order in (questions, questions[::-1], questions[1:] + questions[:1]):
        index = ServingIndex(Project([tmp_path]), lambda path: path.read_bytes(), lambda path: [])
        assert [index.lookup(file, dotted) for file, dotted in order] == [expected] * len(order)


def test_a_file_whose_names_cannot_be_completed_costs_its_findings_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cross-file completion of one linted file raises: an error line for it, the other file's findings stand."""
    from wnaudit.source.api_names import ApiNames

    package = tmp_path / "proj"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    plain = MODEL.replace("from {package}.types import *\n", "")
    (package / "good.py").write_text(plain)
    (package / "bad.py").write_text(plain)
    real = ApiNames.aliases

    def aliases(self: ApiNames, summary: object) -> object:
        if str(getattr(summary, "path", "")).endswith("bad.py"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, summary)  # type: ignore[arg-type]

    monkeypatch.setattr(ApiNames, "aliases", aliases)
    result = lint_files(sorted(package.rglob("*.py")), RunOptions())
    assert [(Path(e.path).name, e.message.partition(";")[0]) for e in result.errors] == [
        ("bad.py", "cannot be analysed (RecursionError: maximum recursion depth exceeded)"),
    ]
    assert {Path(f.path).name for f in result.findings} == {"good.py"}
