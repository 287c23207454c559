"""The WN110 evaluation script: matching findings to labelled sites, the labels file itself,
and one package failing without stopping the others.  No network: fake packages and reports."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "serving_rule_eval.py"
LABELS = REPO / "benchmarks" / "serving_eval" / "labels.json"


@pytest.fixture(scope="module")
def ev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("serving_rule_eval", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _site(ev: ModuleType, path: str, line: int, label: str, via: tuple[str, ...] = (), why: str = "") -> Any:
    return ev.Site(path=path, line=line, label=label, reason=f"why {path}:{line}", via=via, why_undecidable=why)


def _finding(ev: ModuleType, path: str, line: int) -> Any:
    return ev.Finding(path=path, line=line, message="m")


def test_a_finding_at_a_report_site_is_a_true_positive_and_a_missed_one_a_false_negative(ev: ModuleType) -> None:
    sites = [_site(ev, "pkg/a.py", 10, "report"), _site(ev, "pkg/a.py", 20, "report")]
    score = ev.score_package("pkg", "1", sites, [_finding(ev, "pkg/a.py", 10)])
    assert (score.tp, score.fp, score.fn) == (1, 0, 1)
    assert [s.key for s in score.false_negatives] == ["pkg/a.py:20"]
    assert ev.totals([score])["recall"] == 0.5
    assert ev.totals([score])["precision"] == 1.0


def test_a_finding_at_a_silent_site_or_an_unlabelled_line_is_a_false_positive(ev: ModuleType) -> None:
    sites = [_site(ev, "pkg/a.py", 10, "silent"), _site(ev, "pkg/a.py", 30, "report")]
    findings = [_finding(ev, "pkg/a.py", 10), _finding(ev, "pkg/a.py", 11), _finding(ev, "pkg/b.py", 30)]
    score = ev.score_package("pkg", "1", sites, findings)
    assert score.tp == 0
    assert [f.key for f, _ in score.false_positives] == ["pkg/a.py:10"]
    assert [f.key for f in score.unlabelled] == ["pkg/a.py:11", "pkg/b.py:30"]
    assert score.fp == 3 and score.fn == 1
    assert ev.totals([score])["precision"] == 0.0


def test_a_finding_at_an_unsure_site_with_a_why_undecidable_counts_neither_way(ev: ModuleType) -> None:
    sites = [_site(ev, "pkg/a.py", 10, "unsure", why="a YAML outside the package picks the norm"),
             _site(ev, "pkg/a.py", 20, "report")]
    score = ev.score_package("pkg", "1", sites, [_finding(ev, "pkg/a.py", 10), _finding(ev, "pkg/a.py", 20)])
    assert (score.tp, score.fp, score.fn) == (1, 0, 0)
    assert [f.key for f, _ in score.unsure_hits] == ["pkg/a.py:10"]
    assert score.unsure_counted == []
    assert score.sites == {"report": 1, "silent": 0, "unsure": 1}


def test_a_finding_at_an_unsure_site_without_a_why_undecidable_is_a_false_positive(ev: ModuleType) -> None:
    """Issue 22: "unsure" must not keep a rule's own findings out of its precision."""
    sites = [_site(ev, "pkg/a.py", 10, "unsure"), _site(ev, "pkg/a.py", 20, "report")]
    score = ev.score_package("pkg", "1", sites, [_finding(ev, "pkg/a.py", 10), _finding(ev, "pkg/a.py", 20)])
    assert (score.tp, score.fp, score.fn) == (1, 1, 0)
    assert [f.key for f, _ in score.unsure_counted] == ["pkg/a.py:10"]
    totals = ev.totals([score])
    assert (totals["precision"], totals["unsure_hits"], totals["unsure_counted"]) == (0.5, 1, 1)
    raw = {"name": "pkg", "sites": [{"path": "pkg/a.py", "line": 1, "label": "unsure", "reason": "r",
                                     "why_undecidable": "  the checkpoint's config picks the class "}]}
    assert ev.parse_sites(raw)[0].why_undecidable == "the checkpoint's config picks the class"


def test_a_helper_finding_over_undecidable_and_silent_sites_is_left_out(ev: ModuleType) -> None:
    sites = [_site(ev, "pkg/conv.py", 10, "unsure", via=("pkg/conv.py:5",), why="config"),
             _site(ev, "pkg/conv.py", 20, "silent", via=("pkg/conv.py:5",))]
    score = ev.score_package("pkg", "1", sites, [_finding(ev, "pkg/conv.py", 5)])
    assert (score.tp, score.fp, score.fn) == (0, 0, 0)
    assert [f.key for f, _ in score.unsure_hits] == ["pkg/conv.py:5"]


def test_a_finding_on_the_helper_line_covers_every_site_applying_through_it_once(ev: ModuleType) -> None:
    helper = ("pkg/layers.py:5",)
    sites = [_site(ev, "pkg/model.py", 10, "report", via=helper),
             _site(ev, "pkg/model.py", 11, "report", via=helper),
             _site(ev, "pkg/disc.py", 3, "silent", via=helper)]
    score = ev.score_package("pkg", "1", sites, [_finding(ev, "pkg/layers.py", 5)])
    assert (score.tp, score.fp, score.fn) == (1, 0, 0)
    assert score.covered_report_sites == 2


def test_a_helper_line_serving_only_silent_sites_is_a_false_positive(ev: ModuleType) -> None:
    sites = [_site(ev, "pkg/disc.py", 3, "silent", via=("pkg/layers.py:5",)),
             _site(ev, "pkg/model.py", 10, "report", via=("pkg/layers.py:9",))]
    score = ev.score_package("pkg", "1", sites, [_finding(ev, "pkg/layers.py", 5)])
    assert (score.tp, score.fp, score.fn) == (0, 1, 1)


def test_any_line_of_a_helper_chain_covers_the_site(ev: ModuleType) -> None:
    """conv_class(...) -> CausalWNConv1d (helper call) -> CausalConvNet.weight_norm (the call)."""
    sites = [_site(ev, "pkg/m.py", 40, "report", via=("pkg/m.py:20", "pkg/m.py:30"))]
    for line in (20, 30, 40):
        score = ev.score_package("pkg", "1", sites, [_finding(ev, "pkg/m.py", line)])
        assert (score.tp, score.fp, score.fn) == (1, 0, 0), line
    raw = {"name": "pkg", "sites": [{"path": "pkg/m.py", "line": 1, "label": "report", "reason": "r",
                                     "via": ["pkg/m.py:2", "pkg/m.py:3"]},
                                    {"path": "pkg/m.py", "line": 4, "label": "silent", "reason": "r",
                                     "via": "pkg/m.py:5"}]}
    assert [s.via for s in ev.parse_sites(raw)] == [("pkg/m.py:2", "pkg/m.py:3"), ("pkg/m.py:5",)]


def test_duplicate_findings_at_one_line_count_once(ev: ModuleType) -> None:
    sites = [_site(ev, "pkg/a.py", 10, "report"), _site(ev, "pkg/a.py", 12, "silent")]
    findings = [_finding(ev, "pkg/a.py", 10)] * 3 + [_finding(ev, "pkg/a.py", 12)] * 2
    score = ev.score_package("pkg", "1", sites, findings)
    assert (score.tp, score.fp, score.fn) == (1, 1, 0)


def test_findings_from_report_keeps_the_rules_source_findings_with_normalized_paths(
        ev: ModuleType, tmp_path: Path) -> None:
    report = {"findings": [
        {"path": "./pkg/a.py", "code": "WN110", "line": 3, "column": 1, "message": "x"},
        {"path": str(tmp_path / "pkg" / "b.py"), "code": "WN110", "line": 4, "column": 1, "message": "y"},
        {"path": "pkg/a.py", "code": "WN101", "line": 5, "column": 1, "message": "other rule"},
        {"path": "ckpt.pt", "code": "WN110", "object": "w", "message": "no line"},
    ], "errors": []}
    found = ev.findings_from_report(report, tmp_path)
    assert [(f.path, f.line) for f in found] == [("pkg/a.py", 3), ("pkg/b.py", 4)]


def _write_labels(path: Path, entries: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({"schema": 1, "packages": entries}), encoding="utf-8")


def test_main_scores_from_reports_and_a_missing_package_is_reported_and_skipped(
        ev: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    (src / "good-1.0" / "good").mkdir(parents=True)
    (src / "good-1.0" / "good" / "m.py").write_text("x = 1\n", encoding="utf-8")
    labels = tmp_path / "labels.json"
    _write_labels(labels, [
        {"name": "good", "version": "1.0", "dist_dir": "good-1.0", "roots": ["good"], "sites": [
            {"path": "good/m.py", "line": 1, "label": "report", "reason": "eval at serve.py:1"},
            {"path": "good/m.py", "line": 2, "label": "silent", "reason": "training only"},
            {"path": "good/m.py", "line": 3, "label": "report", "reason": "eval at serve.py:2"}]},
        {"name": "gone", "version": "9.9", "dist_dir": "gone-9.9", "roots": ["gone"], "sites": [
            {"path": "gone/x.py", "line": 1, "label": "report", "reason": "r"}]},
    ])
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "good.json").write_text(json.dumps({"findings": [
        {"path": "good/m.py", "code": "WN110", "line": 1, "column": 1, "message": "a"},
        {"path": "good/m.py", "code": "WN110", "line": 2, "column": 1, "message": "b"},
    ], "errors": []}), encoding="utf-8")
    out_json = tmp_path / "out.json"
    rc = ev.main(["--labels", str(labels), "--src-dir", str(src), "--offline", "--findings-dir", str(reports),
                  "--json-out", str(out_json), "--markdown"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "| good | 1.0 | 2/1/0 | 1 | 1 | 1 | 0.500 | 0.500 |" in printed
    assert "| gone | 9.9 | 1/0/0 | – | – | – | failed | failed |" in printed
    assert "FP good: good/m.py:2 (labelled silent: training only)" in printed
    assert "FN good: good/m.py:3 (labelled report: eval at serve.py:2)" in printed
    assert "FAILED gone 9.9" in printed
    result = json.loads(out_json.read_text(encoding="utf-8"))
    assert result["totals"]["failed"] == ["gone"]
    assert result["totals"]["precision"] == 0.5


def test_saved_reports_rescore_without_running_wnaudit(ev: ModuleType, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p-1" / "p").mkdir(parents=True)
    report = {"findings": [{"path": "p/a.py", "code": "WN110", "line": 7, "column": 1, "message": "m"}],
              "errors": []}
    monkeypatch.setattr(ev, "run_rule", lambda *args, **kwargs: report)
    entries = [{"name": "p", "version": "1", "dist_dir": "p-1", "roots": ["p"],
                "sites": [{"path": "p/a.py", "line": 7, "label": "report", "reason": "r"}]}]
    saved = tmp_path / "reports"
    first = ev.evaluate(entries, src_dir=tmp_path, download_dir=tmp_path / "dl", offline=True,
                        findings_dir=None, timeout=5, save_reports=saved)
    again = ev.evaluate(entries, src_dir=tmp_path, download_dir=tmp_path / "dl", offline=True,
                        findings_dir=saved, timeout=5)
    assert json.loads((saved / "p.json").read_text(encoding="utf-8")) == report
    assert (first[0].tp, again[0].tp, again[0].fn) == (1, 1, 0)


def test_offline_without_the_unpacked_package_fails_that_package_only(ev: ModuleType, tmp_path: Path) -> None:
    entries = [{"name": "absent", "version": "1", "dist_dir": "absent-1", "roots": ["absent"], "sites": []}]
    scores = ev.evaluate(entries, src_dir=tmp_path, download_dir=tmp_path / "dl", offline=True,
                         findings_dir=None, timeout=5)
    assert scores[0].error is not None and "--offline" in scores[0].error


def test_unpack_lays_a_wheel_and_an_sdist_out_as_the_labels_expect(ev: ModuleType, tmp_path: Path) -> None:
    wheel = tmp_path / "demo_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zipped:
        zipped.writestr("demo_pkg/__init__.py", "")
        zipped.writestr("demo_pkg-1.0.dist-info/METADATA", "Name: demo-pkg\n")
    sdist = tmp_path / "demo-sd-2.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tarred:
        data = b"x = 1\n"
        info = tarfile.TarInfo("demo-sd-2.0/demo_sd/m.py")
        info.size = len(data)
        tarred.addfile(info, io.BytesIO(data))
    assert ev.find_archive(tmp_path, "demo-pkg", "1.0") == wheel
    assert ev.find_archive(tmp_path, "demo_sd", "2.0") == sdist
    assert ev.find_archive(tmp_path, "demo-pkg", "1.1") is None
    out = tmp_path / "src"
    assert (ev.unpack(wheel, out / "demo_pkg-1.0") / "demo_pkg" / "__init__.py").is_file()
    assert (ev.unpack(sdist, out / "demo_sd-2.0") / "demo_sd" / "m.py").is_file()


def test_unpack_refuses_an_archive_escaping_its_folder(ev: ModuleType, tmp_path: Path) -> None:
    wheel = tmp_path / "evil-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zipped:
        zipped.writestr("../escape.py", "")
    with pytest.raises(ev.PackageFailure):
        ev.unpack(wheel, tmp_path / "src" / "evil-1.0")
    assert not (tmp_path / "escape.py").exists()


def test_the_committed_labels_are_well_formed(ev: ModuleType) -> None:
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    names = [entry["name"] for entry in labels["packages"]]
    assert len(names) == len(set(names)) and len(names) >= 15
    for entry in labels["packages"]:
        assert entry["spec"] == f"{entry['name']}=={entry['version']}"
        assert entry["roots"]
        sites = ev.parse_sites(entry)
        keys = [site.key for site in sites]
        assert len(keys) == len(set(keys)), entry["name"]
        for site in sites:
            assert site.reason.strip(), (entry["name"], site.key)
            assert any(site.path.startswith(root + "/") for root in entry["roots"]), (entry["name"], site.key)
            for helper in site.via:
                path, _, line = helper.rpartition(":")
                assert path and line.isdigit(), (entry["name"], site.key, helper)
    counts = {label: sum(site["label"] == label for entry in labels["packages"] for site in entry["sites"])
              for label in ev.LABEL_VALUES}
    assert counts["report"] >= 50 and counts["silent"] >= 50


TEST_LABELS = REPO / "benchmarks" / "serving_eval_test" / "labels.json"


def test_the_committed_test_split_is_well_formed_and_apart_from_the_development_split(ev: ModuleType) -> None:
    dev = json.loads(LABELS.read_text(encoding="utf-8"))
    test = json.loads(TEST_LABELS.read_text(encoding="utf-8"))
    dev_names = {entry["name"] for entry in dev["packages"]}
    test_names = [entry["name"] for entry in test["packages"]]
    assert len(test_names) == len(set(test_names)) and len(test_names) >= 12
    assert not dev_names & set(test_names)
    for entry in test["packages"]:
        assert entry["spec"] == f"{entry['name']}=={entry['version']}"
        for field_name in ("sites", "removals"):
            sites = ev.parse_sites(entry, field_name)
            keys = [site.key for site in sites]
            assert len(keys) == len(set(keys)), (entry["name"], field_name)
            for site in sites:
                assert site.reason.strip(), (entry["name"], site.key)
                assert any(site.path.startswith(root + "/") for root in entry["roots"]), (entry["name"], site.key)
                assert site.label != "unsure" or site.why_undecidable, (entry["name"], site.key)
        for removal in entry.get("removals", ()):
            assert removal["shape"] in test["removal_shapes"], (entry["name"], removal)
    counts = {label: sum(site["label"] == label for entry in test["packages"] for site in entry["sites"])
              for label in ev.LABEL_VALUES}
    assert counts["report"] >= 50 and counts["silent"] >= 50


def test_every_unsure_label_of_the_development_split_says_why_the_code_cannot_decide(ev: ModuleType) -> None:
    """Issue 22: piper's discriminators and vocos' served sites were decidable; what stays
    unsure must carry the reason, or its findings count against precision."""
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    unsure = [(entry["name"], site) for entry in labels["packages"] for site in ev.parse_sites(entry)
              if site.label == "unsure"]
    assert all(site.why_undecidable for _, site in unsure)
    assert not {name for name, _ in unsure} & {"piper-tts", "vocos"}


def _fake_split(tmp_path: Path, folder: str, name: str, line: int) -> None:
    (tmp_path / folder).mkdir()
    _write_labels(tmp_path / folder / "labels.json", [
        {"name": name, "version": "1", "dist_dir": f"{name}-1", "roots": [name], "sites": [
            {"path": f"{name}/m.py", "line": line, "label": "report", "reason": "eval at serve.py:1"}]}])


def test_split_all_scores_the_development_and_the_test_split_apart_and_together(
        ev: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _fake_split(tmp_path, "serving_eval", "devpkg", 1)
    _fake_split(tmp_path, "serving_eval_test", "testpkg", 2)
    monkeypatch.setattr(ev, "HERE", tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "devpkg.json").write_text(json.dumps({"findings": [
        {"path": "devpkg/m.py", "code": "WN110", "line": 1, "message": "a"}]}), encoding="utf-8")
    (reports / "testpkg.json").write_text(json.dumps({"findings": [
        {"path": "testpkg/m.py", "code": "WN110", "line": 9, "message": "b"}]}), encoding="utf-8")
    out = tmp_path / "out.json"
    assert ev.main(["--split", "all", "--findings-dir", str(reports), "--offline", "--json-out", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["splits"]["dev"]["totals"]["precision"] == 1.0
    assert result["splits"]["test"]["totals"]["precision"] == 0.0
    assert result["splits"]["test"]["totals"]["recall"] == 0.0
    printed = capsys.readouterr().out
    assert "## dev split" in printed and "## test split" in printed
    assert "both splits: TP 1 FP 1 FN 1 precision 0.500 recall 0.500" in printed
    assert ev.main(["--split", "test", "--findings-dir", str(reports), "--offline", "--json-out", str(out)]) == 0
    assert [p["name"] for p in json.loads(out.read_text(encoding="utf-8"))["packages"]] == ["testpkg"]


def test_removals_are_scored_against_their_own_list_with_the_removal_rules(
        ev: ModuleType, tmp_path: Path) -> None:
    labels = tmp_path / "labels.json"
    _write_labels(labels, [{"name": "p", "version": "1", "dist_dir": "p-1", "roots": ["p"],
                            "sites": [{"path": "p/m.py", "line": 3, "label": "report", "reason": "weight norm"}],
                            "removals": [
                                {"path": "p/m.py", "line": 10, "label": "report", "shape": "wrapper",
                                 "reason": "the norm sits on a child"},
                                {"path": "p/m.py", "line": 20, "label": "silent", "shape": "normed",
                                 "reason": "a valid fold"},
                                {"path": "p/m.py", "line": 30, "label": "report", "shape": "never-normed",
                                 "reason": "convs built without norm"}]}])
    reports = tmp_path / "r"
    reports.mkdir()
    (reports / "p.json").write_text(json.dumps({"findings": [
        {"path": "p/m.py", "code": "WN109", "line": 10, "message": "wrapper"},
        {"path": "p/m.py", "code": "WN106", "line": 20, "message": "wrong"},
        {"path": "p/m.py", "code": "WN110", "line": 3, "message": "not a removal rule"}]}), encoding="utf-8")
    out = tmp_path / "o.json"
    assert ev.main(["--labels", str(labels), "--removals", "--findings-dir", str(reports), "--offline",
                    "--src-dir", str(tmp_path), "--json-out", str(out)]) == 0
    totals = json.loads(out.read_text(encoding="utf-8"))["totals"]
    assert (totals["tp"], totals["fp"], totals["fn"]) == (1, 1, 1)
    assert ev.main(["--labels", str(labels), "--removals", "--rule", "WN109", "--findings-dir", str(reports),
                    "--offline", "--src-dir", str(tmp_path), "--json-out", str(out)]) == 0
    totals = json.loads(out.read_text(encoding="utf-8"))["totals"]
    assert (totals["tp"], totals["fp"], totals["fn"]) == (1, 0, 1)


def test_offline_unpacks_an_archive_already_downloaded(ev: ModuleType, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    download_dir = tmp_path / "dl"
    download_dir.mkdir()
    with zipfile.ZipFile(download_dir / "here-1.0-py3-none-any.whl", "w") as zipped:
        zipped.writestr("here/m.py", "x = 1\n")
    seen: list[Path] = []
    monkeypatch.setattr(ev, "run_rule", lambda package_dir, *a, **k: seen.append(package_dir) or {"findings": []})
    entries = [{"name": "here", "version": "1.0", "dist_dir": "here-1.0", "roots": ["here"], "sites": []}]
    scores = ev.evaluate(entries, src_dir=tmp_path / "src", download_dir=download_dir, offline=True,
                         findings_dir=None, timeout=5)
    assert scores[0].error is None
    assert (tmp_path / "src" / "here-1.0" / "here" / "m.py").is_file() and seen == [tmp_path / "src" / "here-1.0"]
