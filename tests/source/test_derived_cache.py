"""Cross-file answers kept between runs (issue 16): reused only while the code and the layout they rest on hold.

The record (``derived_cache``) holds the import scan's answers, ``may_matter``'s,
the aliases of analysed files and WN110's verdicts, with every observation
they were computed from.  These tests pin the three promises: a warm run on
an unchanged tree recomputes none of them; any change the answers depend on
(a file outside the command line, a file appearing, a directory becoming a
package) is seen; a damaged or hostile record is never believed.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.source.cache_files import entries_of, files_of, forge
from tests.source.test_source_invariance import _module, _write_tree, module_spec
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_run
from wnaudit.source.serving.index import ServingIndex
from wnaudit.source.import_scan import ImportScan

REPO = Path(__file__).resolve().parents[2]
BASE = (
    "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
    "class Base(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = weight_norm(nn.Conv1d(2, 2, 3))\n"
)
MID = "from .base import Base\n\n\nclass Mid(Base):\n    pass\n"
SERVE = "from torch.nn.utils import remove_weight_norm\n\nfrom .mid import Mid\n\n\ndef fold():\n    remove_weight_norm(Mid().conv)\n"


def _answer(paths: list[Path], cache: bool = True) -> list[tuple]:
    result = lint_run.lint_files(paths, RunOptions(jobs=1, cache=cache))
    return [(f.path, f.code, f.line, f.message) for f in result.findings] + sorted((e.path, e.message) for e in result.errors)


def _voc(root: Path) -> Path:
    package = root / "voc"
    package.mkdir(parents=True)
    for name, text in {"__init__.py": "", "base.py": BASE, "mid.py": MID, "serve.py": SERVE}.items():
        (package / name).write_text(text)
    return package


def _counting(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(owner, name)

    def counted(self: object, *args: object) -> object:
        calls.append(args[0] if args else None)
        return real(self, *args)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_warm_run_recomputes_no_cross_file_answer(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``examples/serving``: WN110 and the import scan are answered from the record."""
    paths = sorted((REPO / "examples" / "serving").glob("*.py"))
    cold = _answer(paths)
    assert any(item[1] == "WN110" for item in cold)
    scans = _counting(monkeypatch, ImportScan, "_may_have_findings")
    matters = _counting(monkeypatch, ImportScan, "_may_matter")
    prepares = _counting(monkeypatch, ServingIndex, "prepare")
    assert _answer(paths) == cold == _answer(paths, cache=False)
    scans.clear(), matters.clear(), prepares.clear()
    assert _answer(paths) == cold
    assert scans == [] and matters == [] and prepares == []


def test_a_change_outside_the_command_line_is_seen(tmp_path: Path, cache_dir: Path) -> None:
    """The staged-only shape: ``serve.py`` alone; its cause sits in ``base.py``, which changes between runs."""
    package = _voc(tmp_path)
    serve = [package / "serve.py"]
    assert [item[1] for item in _answer(serve)] == ["WN101"]
    assert [item[1] for item in _answer(serve)] == ["WN101"]  # warm
    (package / "base.py").write_text(BASE.replace("parametrizations import weight_norm", "import weight_norm"))
    assert _answer(serve) == _answer(serve, cache=False) == []


@pytest.mark.parametrize(("before", "after"), [
    # It stops binding an API: whether ``user.py`` (which names none) is analysed at all is the scan's answer.
    ("from torch.nn.utils import weight_norm as wn\n", "def wn(module):\n    return module\n"),
    # Same imports, flags and names; what ``wn`` is bound to changes (the analysis of the file was used).
    ("from torch.nn.utils import spectral_norm, weight_norm\n\nwn = weight_norm\n",
     "from torch.nn.utils import spectral_norm, weight_norm\n\nwn = spectral_norm\n"),
])
def test_a_dependency_that_stops_binding_the_api_is_seen(tmp_path: Path, cache_dir: Path, before: str, after: str) -> None:
    package = tmp_path / "voc"
    package.mkdir()
    (package / "__init__.py").write_text("")
    compat = package / "compat.py"
    compat.write_text(before)
    user = package / "user.py"
    user.write_text("import torch.nn as nn\n\nfrom .compat import wn\n\n\ndef build():\n    return wn(nn.Conv1d(2, 2, 3))\n")
    assert [item[1] for item in _answer([user])] == ["WN103"]
    assert [item[1] for item in _answer([user])] == ["WN103"]
    compat.write_text(after)
    assert _answer([user]) == _answer([user], cache=False) == []


def test_a_file_that_appears_is_seen(tmp_path: Path, cache_dir: Path) -> None:
    """An import that resolved to nothing resolves once the module is written (a listing, not a read, changed)."""
    package = _voc(tmp_path)
    (package / "mid.py").write_text("from .compat import Base\n\n\nclass Mid(Base):\n    pass\n")
    serve = [package / "serve.py"]
    assert _answer(serve) == []
    assert _answer(serve) == []
    (package / "compat.py").write_text("from .base import Base\n")
    assert [item[1] for item in _answer(serve)] == ["WN101"] == [item[1] for item in _answer(serve, cache=False)]


def test_a_directory_that_becomes_a_package_is_seen(tmp_path: Path, cache_dir: Path) -> None:
    """Removing ``__init__.py`` changes module names and resolution: the record no longer holds."""
    package = _voc(tmp_path)
    serve = [package / "serve.py"]
    warm = _answer(serve)
    assert _answer(serve) == warm
    (package / "__init__.py").unlink()
    assert _answer(serve) == _answer(serve, cache=False)
    (package / "__init__.py").write_text("")
    assert _answer(serve) == warm


def _served_example(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A copy of ``examples/serving`` whose model file has been linted twice (the record is warm): 2 WN110."""
    package = tmp_path / "serving"
    shutil.copytree(REPO / "examples" / "serving", package)
    model = [package / "vocoder.py"]
    before = _answer(model)
    assert [item[1] for item in before].count("WN110") == 2
    assert _answer(model) == before
    return package, model


def test_the_serving_file_changing_changes_the_verdict(tmp_path: Path, cache_dir: Path) -> None:
    """WN110 from the model file alone; the fold is then added to the serving file, which is not linted."""
    package, model = _served_example(tmp_path)
    serve = package / "serve.py"
    serve.write_text(serve.read_text().replace("    return vocoder.eval()\n", "    wnaudit.fold_weight_norm(vocoder)\n    return vocoder.eval()\n"))
    after = _answer(model)
    assert after == _answer(model, cache=False)
    assert [item[1] for item in after].count("WN110") == 0


def test_a_serving_file_new_in_a_subpackage_is_seen(tmp_path: Path, cache_dir: Path) -> None:
    """A new file nothing imports, found only by WN110's project walk, calls the removal method on what the serving
    loader returns: silent now (a fold of a model it built itself would fold that one only, issue 35)."""
    package, model = _served_example(tmp_path)
    apps = package / "apps"
    apps.mkdir()
    (apps / "__init__.py").write_text("")
    (apps / "app.py").write_text(
        "from ..serve import load_vocoder\n\n\ndef load():\n    model = load_vocoder()\n    model.remove_weight_norm()\n    return model\n"
    )
    assert _answer(model) == _answer(model, cache=False) == []


@pytest.mark.parametrize(
    "kind",
    ["files", "dirs", "exists", "listings", "contents", "definitions", "reads", "serving_reads", "walks", "config_walks",
     "config_reads"],
)
def test_every_kind_of_observation_is_asked_again(tmp_path: Path, kind: str) -> None:
    """Each observation is checked against the disk: one that no longer holds fails its part of the record."""
    from wnaudit.source.content import defined_names, facts_of
    from wnaudit.source.derived_cache import SCAN_KINDS, SERVING_KINDS, Observations, content_digest, definitions_key, facts_key
    from wnaudit.source.project import list_kinds

    module = tmp_path / "m.py"
    module.write_text("import os\n\nx = 1\n")
    config = tmp_path / "conf.yaml"
    config.write_text("fold_weight_norm: false\n")
    data = module.read_bytes()
    digest = content_digest(data)
    holding = Observations(
        files={str(module): True}, dirs={str(tmp_path): True}, exists={str(module): True},
        listings={str(tmp_path): list_kinds(str(tmp_path))},
        contents={str(module): [digest, facts_key(facts_of(data))]},
        definitions={str(module): [digest, definitions_key(defined_names(data))]},
        reads={str(module): digest}, serving_reads={str(module): digest}, walks={"1" + str(tmp_path): [str(module)]},
        config_walks={str(tmp_path): [str(config)]}, config_reads={str(config): content_digest(config.read_bytes())},
    )
    kinds = SCAN_KINDS + SERVING_KINDS
    assert holding.still_hold(kinds)
    other = content_digest(b"x = 2\n")
    stale = {
        "files": {str(module): False}, "dirs": {str(module): True}, "exists": {str(tmp_path / "gone.py"): True},
        "listings": {str(tmp_path): {}}, "contents": {str(module): [other, facts_key(facts_of(b"import sys\n"))]},
        "definitions": {str(module): [other, "y"]}, "reads": {str(module): other}, "serving_reads": {str(module): other},
        "walks": {"1" + str(tmp_path): []}, "config_walks": {str(tmp_path): []},
        "config_reads": {str(config): content_digest(b"fold_weight_norm: true\n")},
    }
    getattr(holding, kind).update(stale[kind])
    assert not holding.still_hold(kinds)
    assert holding.still_hold(SERVING_KINDS if kind in SCAN_KINDS else SCAN_KINDS)


#: Folds only where the shipped config turns the flag on (``serving/flags.py``).
SERVE_FLAGGED = (
    "import yaml\nfrom torch.nn.utils.parametrize import remove_parametrizations\n\nfrom .base import Base\n\n\n"
    "def serve(path):\n    cfg = yaml.safe_load(open(path))\n    model = Base()\n    if cfg['fold_weight_norm']:\n"
    "        remove_parametrizations(model.conv, 'weight')\n    model.eval()\n    return model\n"
)


@pytest.mark.parametrize("edit", ["turned on", "new config"])
def test_a_shipped_config_that_turns_the_fold_s_flag_on_is_seen(tmp_path: Path, cache_dir: Path, edit: str) -> None:
    """A warm run reused WN110's verdict after the YAML config turned the flag on: a finding the fold had removed."""
    package = tmp_path / "voc"
    package.mkdir()
    for name, text in {"__init__.py": "", "base.py": BASE, "serve.py": SERVE_FLAGGED}.items():
        (package / name).write_text(text)
    config = package / "config.yaml"
    config.write_text("fold_weight_norm: false\n")
    paths = sorted(package.glob("*.py"))
    before = _answer(paths)
    assert [item[1] for item in before] == ["WN110"]  # the flag is off: the fold never runs
    if edit == "turned on":
        config.write_text("fold_weight_norm: true\n")
    else:
        (package / "serving.yml").write_text("fold_weight_norm: true\n")
    assert _answer(paths) == _answer(paths, cache=False) == []


def test_a_warm_check_does_not_read_a_config_whose_stat_is_the_same(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its stat key is kept as a source file's is: an unchanged config is not read again (an edited one is)."""
    from wnaudit.source import derived_cache

    project = tmp_path / "proj"  # its own root: the cache's files (under ``tmp_path``) are no configs of it
    package = project / "voc"
    package.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    for name, text in {"__init__.py": "", "base.py": BASE, "serve.py": SERVE_FLAGGED}.items():
        (package / name).write_text(text)
    config = package / "config.yaml"
    config.write_text("fold_weight_norm: false\n")
    paths = sorted(package.glob("*.py"))
    monkeypatch.setattr("wnaudit.common.cache.RACY_NS", 0)  # a stat taken now vouches for the bytes (no 3 s wait)
    cold = _answer(paths)
    read: list[str] = []
    real = derived_cache.read_config
    monkeypatch.setattr(derived_cache, "read_config", lambda path: read.append(path.name) or real(path))
    assert _answer(paths) == cold
    assert read == []
    config.write_text("fold_weight_norm: true\n")  # another size: another stat
    assert _answer(paths) == []
    assert read == ["config.yaml"]


def test_an_edit_inside_a_function_keeps_the_scan_and_drops_only_the_serving_part(tmp_path: Path) -> None:
    """Only flags and imports were used of a file: a new body holds; a new import does not."""
    from wnaudit.source.content import facts_of
    from wnaudit.source.derived_cache import Observations, content_digest, facts_key

    module = tmp_path / "m.py"
    module.write_text("import os\n\n\ndef f():\n    return 1\n")
    data = module.read_bytes()
    observed = Observations(contents={str(module): [content_digest(data), facts_key(facts_of(data))]}, serving_reads={str(module): content_digest(data)})
    module.write_text("import os\n\n\ndef f():\n    return 2\n")
    assert observed.still_hold(("contents",)) and not observed.still_hold(("serving_reads",))
    module.write_text("import os\nimport sys\n\n\ndef f():\n    return 2\n")
    assert not observed.still_hold(("contents",))


def _records(cache_dir: Path) -> list[Path]:
    return files_of(cache_dir, "derived")


@pytest.mark.parametrize("damage", [
    b"not json",
    b'{"format":1}',
    b'{"format":2,"observed":{"files":{},"dirs":{},"exists":{},"listings":{},"contents":{},"definitions":{},'
    b'"reads":{},"serving_reads":{},"walks":{"":[]}},"scan":{},"matters":{},"served":{},"aliases":{}}',
    b'{"format":2,"observed":{"files":{},"dirs":{},"exists":{},"listings":{},"contents":{"x":5},"definitions":{},'
    b'"reads":[],"serving_reads":{},"walks":{}},"scan":{},"matters":{},"served":{},"aliases":{}}',
])
def test_a_damaged_record_is_never_believed(tmp_path: Path, cache_dir: Path, damage: bytes) -> None:
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    expected = _answer(paths)
    records = _records(cache_dir)
    assert records
    for record in records:
        record.write_bytes(damage)
    assert _answer(paths) == expected
    for record in records:  # the same documents, in well-formed files: the record's own check refuses them
        forge(record, {record.stem: json.loads(damage)} if damage.startswith(b"{") else {})
    assert _answer(paths) == expected


def test_a_forged_record_that_no_longer_holds_is_dropped(tmp_path: Path, cache_dir: Path) -> None:
    """A record whose answers were flipped but whose observations are stale: rebuilt, not believed."""
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    expected = _answer(paths)
    records = _records(cache_dir)
    assert records
    for record in records:
        document = entries_of(record)[record.stem]
        document["scan"] = {key: False for key in document["scan"]}
        document["observed"]["contents"] = {key: ["0" * 32, "forged"] for key in document["observed"]["contents"]}
        forge(record, {record.stem: document})
    assert _answer(paths) == expected


#: Lints of subsets (pre-commit's view), edits and deletions of up to four modules, in any order.
LINT_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("lint"), st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=4, unique=True)),
        st.tuples(st.just("edit"), st.integers(min_value=0, max_value=3), module_spec),
        st.tuples(st.just("delete"), st.integers(min_value=0, max_value=3)),
    ),
    min_size=1, max_size=6,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    specs=st.lists(module_spec, min_size=2, max_size=4), steps=LINT_STEPS,
)
def test_kept_answers_equal_fresh_ones_through_edits_and_subsets(
    tmp_path_factory: pytest.TempPathFactory, specs: list, steps: list,
) -> None:
    """Any sequence of lints of subsets (pre-commit's view) and edits: the record never changes an answer."""
    root = tmp_path_factory.mktemp("derived")
    previous = os.environ.get("WNAUDIT_CACHE_DIR")
    os.environ["WNAUDIT_CACHE_DIR"] = str(root / "cache")
    try:
        files = _write_tree(root / "tree", specs)
        for step in steps:
            if step[0] == "lint":
                chosen = [files[i] for i in step[1] if i < len(files) and files[i].exists()]
                if chosen:
                    assert _answer(chosen) == _answer(chosen, cache=False)
            elif step[0] == "edit" and step[1] < len(files):
                files[step[1]].write_text(_module(step[1], step[2], len(files)))
            elif step[0] == "delete" and step[1] < len(files):
                files[step[1]].unlink(missing_ok=True)
        present = [f for f in files if f.exists()]
        if present:
            assert _answer(present) == _answer(present, cache=False)
            assert _answer(present) == _answer(present, cache=False)
    finally:
        if previous is not None:
            os.environ["WNAUDIT_CACHE_DIR"] = previous


def test_an_answer_on_an_import_cycle_does_not_depend_on_which_file_asked_first(tmp_path: Path) -> None:
    """``a`` and ``b`` re-export each other's ``norm``; only ``a`` also takes it from ``c``, the legacy API.

    Asked first through ``a`` (``first.py`` sorts before ``user.py``), ``b`` used
    to be settled as "no API" while ``a`` was still open, and ``user.py``, which
    applies ``b.norm``, lost its WN103 whenever ``first.py`` was linted with it.
    """
    package = tmp_path / "pkg"
    package.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "from .b import norm\nfrom .c import norm\n",
        "b.py": "from .a import norm\n",
        "c.py": "from torch.nn.utils import weight_norm as norm\n",
        "first.py": "from .a import norm\n\nX = 1\n",
        "user.py": "import torch.nn as nn\n\nfrom .b import norm\n\n\ndef build():\n    return norm(nn.Conv1d(2, 2, 3))\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    user = package / "user.py"
    alone = [item for item in _answer([user], cache=False) if item[0] == str(user)]
    assert [item[1] for item in alone] == ["WN103"]
    together = [item for item in _answer([package / "first.py", user], cache=False) if item[0] == str(user)]
    assert together == alone


def test_resolving_inputs_through_known_directories_agrees_with_path_resolve(tmp_path: Path) -> None:
    """The shared directory realpaths give what ``Path.resolve()`` gives: links, links to files, ``..`` after a link."""
    from wnaudit.source.project import _resolved

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "else" / "y").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "x").symlink_to(tmp_path / "else" / "y")
    (tmp_path / "real" / "sub" / "a.py").write_text("")
    (tmp_path / "real" / "b.py").symlink_to(tmp_path / "real" / "sub" / "a.py")
    (tmp_path / "real" / "sub" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "deep" / "er" / "c.py").write_text("")
    (tmp_path / "real" / "sub" / "up").symlink_to(tmp_path / "x")  # a link below a link, to a link
    (tmp_path / "chain").symlink_to(tmp_path / "link")
    known: dict[str, str] = {}
    for name in [
        "link/sub/a.py", "link/b.py", "link/sub/../sub/a.py", "link/missing/m.py", "link", "x/../y/q.py", "x/q.py",
        "real/sub/deep/er/c.py", "link/sub/deep/er/c.py", "chain/sub/deep/er/c.py", "chain/sub/up/q.py",
        "link/sub/up/../q.py", "real/gone/deeper/m.py",
    ]:
        for spelled in (str(tmp_path / name), tmp_path / name):
            assert _resolved(spelled, known) == Path(spelled).resolve(), name


def test_a_warm_run_reads_no_unchanged_file_twice(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check reads each file once; a file it vouches for is neither read nor decided again; an edited candidate is."""
    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    cold = _answer(paths)
    reads: list[object] = []
    from wnaudit.source.pipeline import prefilter, scan

    real = prefilter.read_source
    for stage in (prefilter, scan):  # the prefilter reads a file, the analysis reads one it passed on
        monkeypatch.setattr(stage, "read_source", lambda path, limit: reads.append(path) or real(path, limit))
    assert _answer(paths) == cold
    assert reads == []
    (package / "mid.py").write_text(MID + "\n# edited\n")
    assert _answer(paths) == cold
    assert reads == []  # the check read the edited mid.py; it names no API, so it is not parsed (issue 21)
    (package / "serve.py").write_text(SERVE + "\n# edited\n")
    assert _answer(paths) == cold
    assert set(reads) == {package / "serve.py"}  # an edited file that can hold a finding is read to be analysed


def test_a_lower_size_limit_still_refuses_a_file_the_record_vouches_for(tmp_path: Path, cache_dir: Path) -> None:
    from wnaudit.common.config import Config

    package = _voc(tmp_path)
    paths = sorted(package.glob("*.py"))
    _answer(paths)
    _answer(paths)
    result = lint_run.lint_files(paths, RunOptions(jobs=1, config=Config(max_source_bytes=100)))
    refused = sorted(Path(error.path).name for error in result.errors)
    assert refused == ["base.py", "serve.py"]  # the two files above 100 bytes
    assert all("above the 100 bytes limit" in error.message for error in result.errors)


GENERATOR = (
    "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
    "class Generator(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.conv = weight_norm(nn.Conv1d(8, 2, 3, padding=1))\n\n"
    "    def forward(self, x):\n        return self.conv(x)\n"
)
#: Served bare: ``load`` returns the model for its caller to load, so WN110 offers no fix (``serving/fold_point.py``).
UNLOADED = "import torch\n\nfrom .model import Generator\n\n\ndef load(path):\n    model = Generator()\n    model.eval()\n    return model\n"
LOADED = UNLOADED.replace("    return model\n", "    model.load_state_dict(torch.load(path))\n    return model\n")
NO_FIX = "no fix offered: `load()` builds `model` without its weights"


def _fold_point_example(tmp_path: Path, serving: str) -> tuple[Path, Path]:
    package = tmp_path / "voc"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(GENERATOR)
    (package / "serve.py").write_text(serving)
    return package / "model.py", package / "serve.py"


@pytest.mark.parametrize("linted", ["model", "both"])
def test_a_warm_run_keeps_the_fold_point_and_parses_no_serving_file(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, linted: str,
) -> None:
    """WN110's "no fix offered" is kept with its verdict: a warm run gives it without reading the serving file again."""
    from wnaudit.source.serving import fold_point

    model, serve = _fold_point_example(tmp_path, UNLOADED)
    paths = [model] if linted == "model" else [model, serve]
    cold = _answer(paths)
    assert [item[1] for item in cold] == ["WN110"] and NO_FIX in cold[0][3]
    checked: list[tuple] = []
    real = fold_point.no_fold_point
    monkeypatch.setattr("wnaudit.source.project_model.no_fold_point", lambda *a: checked.append(a) or real(*a))
    assert _answer(paths) == cold == _answer(paths, cache=False)
    checked.clear()
    assert _answer(paths) == cold
    assert checked == []


def test_the_kept_fold_point_follows_an_edit_of_the_serving_file(tmp_path: Path, cache_dir: Path) -> None:
    """A load added after the model is built (then taken out again) changes the kept answer: warm equals uncached.

    The 3 s waits put each write past the racily-clean window (``common/cache.RACY_NS``): the record keys the
    serving file by its stat, and only the edit's new stat can make the check read it again.
    """
    model, serve = _fold_point_example(tmp_path, UNLOADED)
    time.sleep(3)
    cold = _answer([model])
    assert [item[1] for item in cold] == ["WN110"] and NO_FIX in cold[0][3]
    assert _answer([model]) == cold
    for text, offered in ((LOADED, True), (UNLOADED, False)):
        serve.write_text(text)
        time.sleep(3)
        warm = _answer([model])
        assert warm == _answer([model], cache=False)
        assert [item[1] for item in warm] == ["WN110"] and (NO_FIX not in warm[0][3]) == offered
        assert _answer([model]) == warm
