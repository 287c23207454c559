"""Precision and recall of WN110 (weight norm applied and never folded on an inference path)
on real PyPI packages of the field, against labels made by reading each package's code.

Two splits (issue 22): ``--split dev`` (``benchmarks/serving_eval/labels.json``, the packages the
rule may be tuned on), ``--split test`` (``benchmarks/serving_eval_test/labels.json``, further
packages labelled before the rule was run on them) and ``--split all``.  The labels are
independent of the rule: every weight-norm application in a class was labelled ``report`` (the
class, or a model holding it, is put on an inference path inside the package and nothing folds
it on the way), ``silent`` (training-only, never applied, never executed at inference, or folded
there) or ``unsure`` (only what the package's code cannot decide, with ``why_undecidable``).
``--removals`` scores each package's ``removals`` list (removal targets, WN101 and WN105-WN109)
instead.  How the labels were made: docs/serving-rule-evaluation.md.

Each package is downloaded with ``pip download --no-deps`` into ``benchmarks/.cache/<split folder>``
(never installed, never imported), unpacked there, and linted as a fresh process:

    python -m wnaudit.cli --select WN110 --output-format json --exit-zero --no-cache ROOT...

run from the unpacked package's folder, so finding paths read like the labelled ones.

Matching, per package: findings are taken once per (path, line).  A finding covers the site
labelled at its (path, line) and every site whose ``via`` names that (path, line) (the line
inside an alias helper such as ``def WNConv1d(...): return weight_norm(...)``, for sites that
apply weight norm through it; one "path:line" or a list of them, for a chain of helpers).
A finding is a true positive if it covers a ``report`` site, is left out if it covers no
``report`` site but an ``unsure`` one that says ``why_undecidable``, and is a false positive
otherwise (only ``silent`` sites, an ``unsure`` site without that reason, or no labelled site).
A ``report`` site that no finding covers is a false negative.
Precision = TP / (TP + FP) over findings; recall = covered report sites / report sites.

    python benchmarks/serving_rule_eval.py --split all --markdown   # both splits
    python benchmarks/serving_rule_eval.py --split test --packages chattts,voxcpm
    python benchmarks/serving_rule_eval.py --split test --removals  # removal targets
    PYTHONPATH=/path/to/other/worktree python benchmarks/serving_rule_eval.py --json-out out.json
    python benchmarks/serving_rule_eval.py --src-dir /elsewhere/src --offline   # no download
    python benchmarks/serving_rule_eval.py --save-reports R; ... --findings-dir R  # re-score, no lint
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SPLITS = {"dev": "serving_eval", "test": "serving_eval_test"}
LABELS = HERE / SPLITS["dev"] / "labels.json"
CACHE = HERE / ".cache" / SPLITS["dev"]
RULE = "WN110"
REMOVAL_RULES = "WN105,WN106,WN107,WN108,WN109"
LABEL_VALUES = ("report", "silent", "unsure")


class PackageFailure(Exception):
    """One package could not be downloaded, unpacked or linted; the others still run."""


@dataclass(frozen=True)
class Site:
    """One labelled weight-norm application: where, the verdict and why."""

    path: str
    line: int
    label: str
    reason: str
    via: tuple[str, ...] = ()
    why_undecidable: str = ""

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    message: str = ""

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class PackageScore:
    """The outcome of matching one package's findings to its labels."""

    name: str
    version: str
    sites: dict[str, int] = field(default_factory=dict)
    true_positives: list[tuple[Finding, list[Site]]] = field(default_factory=list)
    false_positives: list[tuple[Finding, list[Site]]] = field(default_factory=list)
    unlabelled: list[Finding] = field(default_factory=list)
    unsure_hits: list[tuple[Finding, list[Site]]] = field(default_factory=list)
    unsure_counted: list[tuple[Finding, list[Site]]] = field(default_factory=list)
    false_negatives: list[Site] = field(default_factory=list)
    covered_report_sites: int = 0
    error: str | None = None
    tool_errors: list[str] = field(default_factory=list)

    @property
    def tp(self) -> int:
        return len(self.true_positives)

    @property
    def fp(self) -> int:
        return len(self.false_positives) + len(self.unlabelled) + len(self.unsure_counted)

    @property
    def fn(self) -> int:
        return len(self.false_negatives)

    @property
    def report_sites(self) -> int:
        return self.sites.get("report", 0)


def parse_sites(entry: Mapping[str, Any], field_name: str = "sites") -> list[Site]:
    """The labelled sites of one package entry, validated (a bad label fails loudly).
    ``field_name="removals"`` reads the removal-target list (same fields, scored for WN105-WN109)."""
    sites = []
    for raw in entry.get(field_name, ()):
        label = raw["label"]
        if label not in LABEL_VALUES:
            raise ValueError(f"{entry['name']}: {raw['path']}:{raw['line']}: unknown label {label!r}")
        via = raw.get("via") or ()
        sites.append(Site(path=normalize_path(raw["path"]), line=int(raw["line"]), label=label,
                          reason=raw.get("reason", ""), via=(via,) if isinstance(via, str) else tuple(via),
                          why_undecidable=str(raw.get("why_undecidable") or "").strip()))
    return sites


def normalize_path(path: str, base: Path | None = None) -> str:
    """A finding or label path as the labels spell it: relative to the unpacked package, with /."""
    candidate = Path(path)
    if candidate.is_absolute() and base is not None:
        try:
            candidate = candidate.resolve().relative_to(base.resolve())
        except ValueError:
            pass
    text = candidate.as_posix()
    while text.startswith("./"):
        text = text[2:]
    return text


def findings_from_report(report: Mapping[str, Any], base: Path | None = None,
                         code: str = RULE) -> list[Finding]:
    """The source findings of one wnaudit JSON report (design.md: path/line/code) whose code is
    ``code`` or one of a comma-separated list of codes."""
    codes = {part.strip() for part in code.split(",") if part.strip()}
    found = []
    for item in report.get("findings", ()):
        if item.get("code") not in codes or item.get("line") is None:
            continue
        found.append(Finding(path=normalize_path(str(item["path"]), base), line=int(item["line"]),
                             message=str(item.get("message", ""))))
    return found


def score_package(name: str, version: str, sites: Sequence[Site],
                  findings: Iterable[Finding]) -> PackageScore:
    """Match findings to labelled sites by (path, line), or through a site's ``via`` line."""
    score = PackageScore(name=name, version=version)
    for label in LABEL_VALUES:
        score.sites[label] = sum(site.label == label for site in sites)
    by_key: dict[str, list[Site]] = {}
    for site in sites:
        by_key.setdefault(site.key, []).append(site)
        for helper in site.via:
            by_key.setdefault(helper, []).append(site)
    unique: dict[str, Finding] = {}
    for finding in findings:
        unique.setdefault(finding.key, finding)
    covered: set[str] = set()
    for key in sorted(unique, key=_natural_key):
        finding = unique[key]
        hit = by_key.get(key, [])
        if not hit:
            score.unlabelled.append(finding)
            continue
        labels = {site.label for site in hit}
        covered.update(site.key for site in hit)
        if "report" in labels:
            score.true_positives.append((finding, hit))
        elif "unsure" in labels:
            score.unsure_hits.append((finding, hit))
            if not any(site.label == "unsure" and site.why_undecidable for site in hit):
                score.unsure_counted.append((finding, hit))
        else:
            score.false_positives.append((finding, hit))
    for site in sites:
        if site.label != "report":
            continue
        if site.key in covered:
            score.covered_report_sites += 1
        else:
            score.false_negatives.append(site)
    return score


def _natural_key(key: str) -> tuple[str, int]:
    path, _, line = key.rpartition(":")
    return path, int(line) if line.isdigit() else 0


def ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def totals(scores: Sequence[PackageScore]) -> dict[str, Any]:
    ok = [s for s in scores if s.error is None]
    tp = sum(s.tp for s in ok)
    fp = sum(s.fp for s in ok)
    covered = sum(s.covered_report_sites for s in ok)
    report_sites = sum(s.report_sites for s in ok)
    return {
        "packages": len(ok), "failed": [s.name for s in scores if s.error is not None],
        "tp": tp, "fp": fp, "fn": sum(s.fn for s in ok),
        "unlabelled": sum(len(s.unlabelled) for s in ok),
        "unsure_hits": sum(len(s.unsure_hits) for s in ok),
        "unsure_counted": sum(len(s.unsure_counted) for s in ok),
        "sites": {label: sum(s.sites.get(label, 0) for s in ok) for label in LABEL_VALUES},
        "precision": ratio(tp, tp + fp), "recall": ratio(covered, report_sites),
    }


# ---------------------------------------------------------------- download and unpack

def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _archive_identity(filename: str) -> tuple[str, str] | None:
    """(canonical name, version) of a wheel or sdist file name, None for anything else."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return (_canonical(parts[0]), parts[1]) if len(parts) >= 5 else None
    for suffix in (".tar.gz", ".zip", ".tgz"):
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            name, _, version = stem.rpartition("-")
            return (_canonical(name), version) if name else None
    return None


def find_archive(download_dir: Path, name: str, version: str) -> Path | None:
    if not download_dir.is_dir():
        return None
    wanted = (_canonical(name), version)
    for candidate in sorted(download_dir.iterdir()):
        if _archive_identity(candidate.name) == wanted:
            return candidate
    return None


def download(name: str, version: str, download_dir: Path) -> Path:
    """The package's archive, fetched with ``pip download --no-deps`` unless already there."""
    found = find_archive(download_dir, name, version)
    if found is not None:
        return found
    download_dir.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":none:",
               "--disable-pip-version-check", "-q", f"{name}=={version}", "-d", str(download_dir)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise PackageFailure(f"pip download {name}=={version} failed: {tail[0]}")
    found = find_archive(download_dir, name, version)
    if found is None:
        raise PackageFailure(f"pip download {name}=={version} left no matching archive in {download_dir}")
    return found


def unpack(archive: Path, target: Path) -> Path:
    """Unpack a wheel (into ``target``) or an sdist (its one top folder becomes ``target``)."""
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        landing = Path(scratch) / "unpacked"
        if archive.name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as zipped:
                _check_members(zipped.namelist(), archive)
                zipped.extractall(landing)
        else:
            with tarfile.open(archive) as tarred:
                _check_members(tarred.getnames(), archive)
                if hasattr(tarfile, "data_filter"):
                    tarred.extractall(landing, filter="data")
                else:  # pragma: no cover - Python without extraction filters
                    tarred.extractall(landing)
        entries = list(landing.iterdir())
        is_sdist = not archive.name.endswith(".whl")
        root = entries[0] if is_sdist and len(entries) == 1 and entries[0].is_dir() else landing
        root.rename(target)
    return target


def _check_members(names: Iterable[str], archive: Path) -> None:
    for member in names:
        if member.startswith("/") or ".." in Path(member).parts:
            raise PackageFailure(f"{archive.name}: unsafe member path {member!r}")


# ---------------------------------------------------------------- running the rule

def _address_space_limit(limit_bytes: int | None) -> Any:
    """A preexec hook capping the lint's address space: a runaway analysis fails that package
    (MemoryError, no JSON) instead of taking the shared machine's memory."""
    if not limit_bytes:
        return None

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return apply


def run_rule(package_dir: Path, roots: Sequence[str], timeout: float, rule: str = RULE,
             memory_limit_gb: float | None = None) -> dict[str, Any]:
    """wnaudit's JSON report for ``roots`` of one unpacked package, run as a fresh process."""
    missing = [root for root in roots if not (package_dir / root).exists()]
    if missing:
        raise PackageFailure(f"{package_dir}: missing package root(s) {', '.join(missing)}")
    env = dict(os.environ)
    if not env.get("PYTHONPATH"):
        env["PYTHONPATH"] = str(REPO)
    env["WNAUDIT_NO_CACHE"] = "1"
    command = [sys.executable, "-m", "wnaudit.cli", "--select", rule, "--output-format", "json",
               "--exit-zero", "--no-cache", *roots]
    try:
        limit = int(memory_limit_gb * 2**30) if memory_limit_gb else None
        result = subprocess.run(command, cwd=package_dir, env=env, capture_output=True, text=True, check=False,
                                timeout=timeout, preexec_fn=_address_space_limit(limit))
    except subprocess.TimeoutExpired as exc:
        raise PackageFailure(f"wnaudit ran past {timeout:.0f} s on {package_dir.name}") from exc
    try:
        report: dict[str, Any] = json.loads(result.stdout)
    except json.JSONDecodeError as exc:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise PackageFailure(f"wnaudit gave no JSON report on {package_dir.name} "
                             f"(exit {result.returncode}): {tail}") from exc
    return report


def evaluate(entries: Sequence[Mapping[str, Any]], *, src_dir: Path, download_dir: Path, offline: bool,
             findings_dir: Path | None, timeout: float, rule: str = RULE,
             save_reports: Path | None = None, memory_limit_gb: float | None = None,
             labelled: str = "sites") -> list[PackageScore]:
    """Score each package entry; ``labelled`` is the list findings are matched to: ``sites``
    (weight-norm applications, WN110) or ``removals`` (removal targets, WN105-WN109)."""
    scores = []
    for entry in entries:
        name, version = entry["name"], entry["version"]
        sites = parse_sites(entry, labelled)
        try:
            if findings_dir is not None:
                report_path = findings_dir / f"{name}.json"
                if not report_path.is_file():
                    raise PackageFailure(f"no findings file {report_path}")
                report = json.loads(report_path.read_text(encoding="utf-8"))
                package_dir = src_dir / entry["dist_dir"]
            else:
                package_dir = src_dir / entry["dist_dir"]
                if not package_dir.is_dir():
                    archive = find_archive(download_dir, name, version)
                    if archive is None and offline:
                        raise PackageFailure(f"{package_dir} is not there, no archive in {download_dir}, "
                                             "and --offline forbids downloading")
                    unpack(archive or download(name, version, download_dir), package_dir)
                report = run_rule(package_dir, entry["roots"], timeout, rule, memory_limit_gb)
                if save_reports is not None:
                    save_reports.mkdir(parents=True, exist_ok=True)
                    (save_reports / f"{name}.json").write_text(json.dumps(report, indent=1) + "\n",
                                                               encoding="utf-8")
            score = score_package(name, version, sites, findings_from_report(report, package_dir, rule))
            score.tool_errors = [f"{e.get('path')}: {e.get('message')}" for e in report.get("errors", ())]
        except PackageFailure as exc:
            score = PackageScore(name=name, version=version, error=str(exc))
            for label in LABEL_VALUES:
                score.sites[label] = sum(site.label == label for site in sites)
        scores.append(score)
        print(f"[{name} {version}] " + (score.error or f"TP {score.tp} FP {score.fp} FN {score.fn}"),
              file=sys.stderr, flush=True)
    return scores


# ---------------------------------------------------------------- output

def markdown_table(scores: Sequence[PackageScore]) -> str:
    lines = ["| package | version | sites (report/silent/unsure) | TP | FP | FN | precision | recall |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for s in scores:
        counts = f"{s.sites.get('report', 0)}/{s.sites.get('silent', 0)}/{s.sites.get('unsure', 0)}"
        if s.error is not None:
            lines.append(f"| {s.name} | {s.version} | {counts} | – | – | – | failed | failed |")
            continue
        lines.append(f"| {s.name} | {s.version} | {counts} | {s.tp} | {s.fp} | {s.fn} | "
                     f"{fmt(ratio(s.tp, s.tp + s.fp))} | {fmt(ratio(s.covered_report_sites, s.report_sites))} |")
    t = totals(scores)
    sites = t["sites"]
    lines.append(f"| **all** | | {sites['report']}/{sites['silent']}/{sites['unsure']} | {t['tp']} | "
                 f"{t['fp']} | {t['fn']} | **{fmt(t['precision'])}** | **{fmt(t['recall'])}** |")
    return "\n".join(lines)


def details(scores: Sequence[PackageScore]) -> str:
    out = []
    for s in scores:
        if s.error is not None:
            out.append(f"FAILED {s.name} {s.version}: {s.error}")
            continue
        for finding, hit in s.false_positives:
            out.append(f"FP {s.name}: {finding.key} (labelled silent: {hit[0].reason})")
        for finding in s.unlabelled:
            out.append(f"FP {s.name}: {finding.key} (unlabelled site) {finding.message[:160]}")
        for site in s.false_negatives:
            out.append(f"FN {s.name}: {site.key} (labelled report: {site.reason})")
        counted = {finding.key for finding, _ in s.unsure_counted}
        for finding, hit in s.unsure_hits:
            verdict = "counted as FP, no why_undecidable" if finding.key in counted else "left out"
            out.append(f"unsure {s.name}: {finding.key} ({verdict}: {hit[0].reason})")
        for error in s.tool_errors:
            out.append(f"tool error {s.name}: {error}")
    return "\n".join(out)


def as_json(scores: Sequence[PackageScore]) -> dict[str, Any]:
    def site(x: Site) -> dict[str, Any]:
        return {"path": x.path, "line": x.line, "label": x.label, "reason": x.reason}

    return {"totals": totals(scores), "packages": [{
        "name": s.name, "version": s.version, "error": s.error, "sites": s.sites,
        "tp": s.tp, "fp": s.fp, "fn": s.fn,
        "true_positives": [f.key for f, _ in s.true_positives],
        "false_positives": [{"finding": f.key, "sites": [site(x) for x in hit]} for f, hit in s.false_positives],
        "unlabelled": [{"finding": f.key, "message": f.message} for f in s.unlabelled],
        "unsure_hits": [f.key for f, _ in s.unsure_hits],
        "unsure_counted": [f.key for f, _ in s.unsure_counted],
        "false_negatives": [site(x) for x in s.false_negatives],
        "tool_errors": s.tool_errors,
    } for s in scores]}


def split_entries(split: str, labels_path: Path | None) -> list[tuple[str, Path, list[dict[str, Any]]]]:
    """(split name, cache folder, package entries) for ``dev``, ``test`` or both (``all``);
    an explicit ``--labels`` file is one split of its own, cached like the development split."""
    if labels_path is not None:
        chosen = [("labels", labels_path, CACHE)]
    else:
        names = list(SPLITS) if split == "all" else [split]
        chosen = [(name, HERE / SPLITS[name] / "labels.json", HERE / ".cache" / SPLITS[name]) for name in names]
    out = []
    for name, path, cache in chosen:
        labels = json.loads(path.read_text(encoding="utf-8"))
        out.append((name, cache, list(labels["packages"])))
    return out


def _print_plain(scores: Sequence[PackageScore], title: str) -> None:
    for s in scores:
        if s.error is not None:
            print(f"{s.name:<22} {s.version:<12} FAILED: {s.error}")
            continue
        print(f"{s.name:<22} {s.version:<12} TP {s.tp:>3}  FP {s.fp:>3}  FN {s.fn:>3}  "
              f"precision {fmt(ratio(s.tp, s.tp + s.fp)):>5}  "
              f"recall {fmt(ratio(s.covered_report_sites, s.report_sites)):>5}")
    t = totals(scores)
    print(f"{title:<35} TP {t['tp']:>3}  FP {t['fp']:>3}  FN {t['fn']:>3}  "
          f"precision {fmt(t['precision']):>5}  recall {fmt(t['recall']):>5}  "
          f"(findings on unsure sites: {t['unsure_hits']}, {t['unsure_counted']} of them counted as FP)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev",
                        help="dev: benchmarks/serving_eval, test: benchmarks/serving_eval_test, all: both")
    parser.add_argument("--labels", type=Path, help="score this labels file instead of a split")
    parser.add_argument("--packages", help="comma-separated package names (default: all)")
    parser.add_argument("--src-dir", type=Path,
                        help="where the unpacked packages live (default: benchmarks/.cache/<split folder>/src)")
    parser.add_argument("--download-dir", type=Path, help="default: benchmarks/.cache/<split folder>/dl")
    parser.add_argument("--offline", action="store_true",
                        help="never download; a package with no archive in the download folder fails")
    parser.add_argument("--findings-dir", type=Path,
                        help="read NAME.json wnaudit reports from here instead of running wnaudit")
    parser.add_argument("--save-reports", type=Path,
                        help="write each package's raw wnaudit report here as NAME.json (for --findings-dir)")
    parser.add_argument("--removals", action="store_true",
                        help=f"score the removal-target lists (default rules {REMOVAL_RULES}) instead of WN110's sites")
    parser.add_argument("--rule", help="the finding code(s) to score, comma-separated "
                        f"(default: {RULE}, or {REMOVAL_RULES} with --removals)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per package lint")
    parser.add_argument("--memory-limit-gb", type=float, default=6.0,
                        help="address-space cap for each lint process, 0 for none (default: 6)")
    parser.add_argument("--markdown", action="store_true", help="print the results as a markdown table")
    parser.add_argument("--json-out", type=Path, help="also write the full results as JSON here")
    return parser


def run_splits(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[tuple[str, list[PackageScore]]]:
    """Score every chosen split (only the ``--packages`` asked for), one result list per split."""
    rule = args.rule or (REMOVAL_RULES if args.removals else RULE)
    splits = split_entries(args.split, args.labels)
    wanted = {name.strip() for name in (args.packages or "").split(",") if name.strip()}
    unknown = wanted - {entry["name"] for _, _, entries in splits for entry in entries}
    if unknown:
        parser.error(f"not in the labels: {', '.join(sorted(unknown))}")
    results: list[tuple[str, list[PackageScore]]] = []
    for split, cache, entries in splits:
        chosen = [entry for entry in entries if not wanted or entry["name"] in wanted]
        if not chosen:
            continue
        results.append((split, evaluate(
            chosen, src_dir=args.src_dir or cache / "src", download_dir=args.download_dir or cache / "dl",
            offline=args.offline, findings_dir=args.findings_dir, timeout=args.timeout, rule=rule,
            save_reports=args.save_reports, memory_limit_gb=args.memory_limit_gb,
            labelled="removals" if args.removals else "sites")))
    return results


def print_results(results: Sequence[tuple[str, Sequence[PackageScore]]], markdown: bool) -> None:
    for split, scores in results:
        if len(results) > 1:
            print(f"\n## {split} split\n")
        if markdown:
            print(markdown_table(scores))
        else:
            _print_plain(scores, f"all ({split})")
    everything = [score for _, scores in results for score in scores]
    if len(results) > 1:
        t = totals(everything)
        print(f"\nboth splits: TP {t['tp']} FP {t['fp']} FN {t['fn']} precision {fmt(t['precision'])} "
              f"recall {fmt(t['recall'])}")
    detail = details(everything)
    if detail:
        print()
        print(detail)


def write_json(path: Path, results: Sequence[tuple[str, Sequence[PackageScore]]], rule: str,
               labelled: str) -> None:
    """Everything as JSON: per split under ``splits``; a single split also at the top level."""
    payload: dict[str, Any] = {"rule": rule, "labelled": labelled,
                               "splits": {split: as_json(scores) for split, scores in results}}
    if len(results) == 1:
        payload.update(as_json(results[0][1]))
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    results = run_splits(args, parser)
    print_results(results, args.markdown)
    if args.json_out:
        write_json(args.json_out, results, args.rule or (REMOVAL_RULES if args.removals else RULE),
                   "removals" if args.removals else "sites")
    everything = [score for _, scores in results for score in scores]
    return 1 if everything and all(s.error is not None for s in everything) else 0


if __name__ == "__main__":
    sys.exit(main())
