"""A cold lint parses each file once (issue 38), in one process or in the ``-j`` workers.

The analysis, WN110's serving facts and the scan's reuse of a dependency's
analysis all read one parse of a file: the workers read the serving facts
from the analysis's trees, the index's own parse of a file analyses it too,
and the scan takes the analysis the import resolution made.  The parser is
observed in every process of the run (the workers are forked with it), by file
name and, for a parse given no name, by the digest of the file's text.
"""

from __future__ import annotations

import ast
import builtins
import collections
import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.source.test_derived_cache import BASE, MID
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_run
from wnaudit.source.serving import flags

#: Serves ``Mid`` (built from ``base``'s weight-normed class) without folding it: a WN110 finding.
SERVE_EVAL = "from .mid import Mid\n\n\ndef serve():\n    model = Mid()\n    model.eval()\n    return model\n"
#: Imports the weight-normed module: the import resolution analyses ``base`` before the scan reaches it.
USER = "from .base import Base\n\n\ndef build():\n    return Base()\n"
#: Files no other file imports, each a finding of its own: with ``-j 2`` the workers analyse them.
LAYER = "import torch.nn as nn\nfrom torch.nn.utils import weight_norm\n\nLAYER = weight_norm(nn.Linear(2, 2))\n"


def _project(root: Path) -> list[Path]:
    package = root / "voc"
    package.mkdir()
    files = {"__init__.py": "", "a_user.py": USER, "base.py": BASE, "mid.py": MID, "serve.py": SERVE_EVAL}
    files.update({f"layer_{n}.py": LAYER.replace("2, 2", f"{n}, {n}") for n in (2, 3, 4)})
    for name, text in files.items():
        (package / name).write_text(text)
    return sorted(package.glob("*.py"))


def _digest(text: str | bytes) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text).hexdigest()


def _observe_parses(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Log every tree-building parse (file name, digest of the source) of this process and of the workers it forks."""
    real = builtins.compile

    def observed(source, filename, mode, flags=0, *args, **kwargs):  # type: ignore[no-untyped-def]
        if flags & ast.PyCF_ONLY_AST and isinstance(source, (str, bytes)):
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps([os.fspath(filename), _digest(source), os.getpid()]) + "\n")
        return real(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", observed)


def _parses_per_file(files: list[Path], log: Path) -> tuple[dict[str, int], set[int]]:
    """How many times each file was parsed, and the processes that parsed them."""
    by_digest = {_digest(path.read_bytes()): path for path in files}
    counted: collections.Counter[str] = collections.Counter()
    processes: set[int] = set()
    for line in log.read_text().splitlines() if log.exists() else []:
        filename, digest, process = json.loads(line)
        named = Path(filename).resolve() if filename not in ("<unknown>", "<string>") else None
        path = named if named in files else by_digest.get(digest)
        if path is not None:
            counted[path.name] += 1
            processes.add(process)
    return dict(counted), processes


def _package(root: Path, files: dict[str, str]) -> Path:
    """``root/voc`` holding ``files`` (name -> text)."""
    package = root / "voc"
    package.mkdir()
    for name, text in files.items():
        (package / name).write_text(text)
    return package


def _observed_lint(
    root: Path, monkeypatch: pytest.MonkeyPatch, linted: list[Path], jobs: int, also: tuple[Path, ...] = (),
) -> tuple[list, dict[str, int], set[int]]:
    """A cold lint of ``linted`` from ``root``, every parse observed: its findings, parses per file (of the linted
    files and ``also``, files the run reads without linting them), processes.  Undoes ``monkeypatch`` after."""
    log = root / "parses.jsonl"
    monkeypatch.chdir(root)
    _observe_parses(monkeypatch, log)
    result = lint_run.lint_files(linted, RunOptions(jobs=jobs, cache=False))
    monkeypatch.undo()
    parses, processes = _parses_per_file([*linted, *also], log)
    return result.findings, parses, processes


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_cold_run_parses_each_file_at_most_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    files = [path.resolve() for path in _project(tmp_path)]
    findings, parses, processes = _observed_lint(tmp_path, monkeypatch, files, jobs)
    assert any(f.code == "WN110" for f in findings)  # the serving path was read: facts and fold point
    assert {"base.py", "mid.py", "serve.py", "a_user.py", "layer_2.py"} <= set(parses)  # the files read as code
    assert (len(processes) > 1) == (jobs > 1)  # -j 2: the workers analysed some of the files
    assert {name: n for name, n in parses.items() if n > 1} == {}


#: A configuration the linted files import but that is not linted: WN110's flag reader parses it (it holds the
#: flag's word), then the rules analyse it (what ``load_config`` stands for).
CONFIG = "class Config:\n    fold_weight_norm = True\n\n\ndef load_config():\n    return Config()\n"
#: Folds under the configuration's flag: the flag reader is asked whether the project turns it on.
SERVE_FLAGGED = (
    "from torch.nn.utils.parametrize import remove_parametrizations\n\nfrom .base import Base\n"
    "from .config import load_config\n\n\ndef serve():\n    cfg = load_config()\n    model = Base()\n"
    "    if cfg.fold_weight_norm:\n        remove_parametrizations(model.conv, 'weight')\n    model.eval()\n"
    "    return model\n"
)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_the_flag_reader_parsed_is_not_parsed_again_for_its_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int,
) -> None:
    package = _package(tmp_path, {"__init__.py": "", "base.py": BASE, "config.py": CONFIG, "serve.py": SERVE_FLAGGED})
    linted = [(package / name).resolve() for name in ("base.py", "serve.py")]
    flag_reads: list[str] = []
    real_settings = flags._python_settings
    monkeypatch.setattr(flags, "_SETTINGS", {})
    monkeypatch.setattr(flags, "_python_settings", lambda path, data: flag_reads.append(path.name) or real_settings(path, data))
    _, parses, _ = _observed_lint(tmp_path, monkeypatch, linted, jobs, also=((package / "config.py").resolve(),))
    assert "config.py" in flag_reads  # the flag reader parsed it
    assert parses == {"base.py": 1, "serve.py": 1, "config.py": 1}


def test_with_workers_a_linted_file_the_import_scan_reads_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``a_base`` and ``a_layer`` go to the workers first; ``b_user`` imports ``a_base``, so the prefilter's import
    scan (in the main process) asks for ``a_base``'s analysis while a worker has it; the serving code then has
    WN110's readers read ``a_base``'s whole tree (its class applies the norm)."""
    package = _package(tmp_path, {
        "__init__.py": "", "a_base.py": BASE, "a_layer.py": LAYER, "b_user.py": USER.replace(".base", ".a_base"),
        "c_serve.py": "from .a_base import Base\n\n\ndef serve():\n    model = Base()\n    model.eval()\n    return model\n",
    })
    findings, parses, processes = _observed_lint(tmp_path, monkeypatch, sorted(p.resolve() for p in package.glob("*.py")), 2)
    assert any(f.code == "WN110" for f in findings)
    assert len(processes) > 1
    assert {name: n for name, n in parses.items() if n > 1} == {}


#: Defines a name its importers call: completing ``a_model``'s analysis reads this file's (is ``make`` a torch API?).
COMPAT = "from torch.nn.utils import weight_norm\n\n\ndef make(channels):\n    return channels\n"
#: Applies the norm and calls ``b_compat``'s ``make``, which stands for no torch API (no second analysis).
MODEL = (
    "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\nfrom .b_compat import make\n\n\n"
    "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.a = weight_norm(nn.Conv1d(make(2), 2, 3))\n"
)


def test_with_workers_completing_one_file_reads_another_s_analysis_without_a_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both files are analysed by the workers; ``a_model`` is completed first and asks for ``b_compat``'s analysis."""
    package = _package(tmp_path, {"__init__.py": "", "a_model.py": MODEL, "b_compat.py": COMPAT, "c_layer.py": LAYER})
    _, parses, processes = _observed_lint(tmp_path, monkeypatch, sorted(p.resolve() for p in package.glob("*.py")), 2)
    assert len(processes) > 1
    assert {"a_model.py", "b_compat.py"} <= set(parses)
    assert {name: n for name, n in parses.items() if n > 1} == {}


#: An expression nested about 1,000 levels deep: CPython parses it, the default recursion limit does not walk it.
DEEP = " + ".join(["1"] * 1000)


@pytest.mark.parametrize("jobs", [1, 2])
def test_deeply_nested_model_and_serving_files_keep_their_findings(tmp_path: Path, jobs: int) -> None:
    """A worker sends the model file's tree pickled (the pickler recursed past the limit: the run crashed at -j 2);
    the fold point walks the serving file's tree (it raised RecursionError: the model's findings were left out)."""
    package = _package(tmp_path, {
        "__init__.py": "", "a_layer.py": LAYER, "b_model.py": BASE + f"\n\nTABLE = {DEEP}\n",
        "c_serve.py": "from .b_model import Base\n\n\nclass Server:\n    def __init__(self):\n        self.vocoder = Base()\n"
                      f"        self.table = {DEEP}\n\n    def run(self, x):\n        self.vocoder.eval()\n"
                      "        return self.vocoder(x)\n",
    })
    result = lint_run.lint_files(sorted(package.glob("*.py")), RunOptions(jobs=jobs, cache=False))
    assert result.errors == []
    assert sorted((Path(f.path).name, f.code) for f in result.findings) == [("a_layer.py", "WN103"), ("b_model.py", "WN110")]
