"""How many times a cold source lint parses each file (issue 38: one parse per file, at most 1.05 on average).

Runs ``wnaudit --no-cache --select ALL -j N`` on a tree as a fresh process
whose every process (the main one and its ``-j`` workers) has the parser
observed: each call of ``compile`` that builds a tree (``PyCF_ONLY_AST``, as
``ast.parse`` does) is logged with its file name, the characters handed to the
parser, the digest of the source and the wnaudit functions that asked for it.

A parse is put on a tree file by its name or, for a parse given no name (a
helper's ``ast.parse(text)``), by the digest of the file's whole text.  A file
parsed in pieces (``analysis.pieces.parse_pieces``) counts as parsed once when its
pieces add up to its length: *parses per file* is the characters parsed under
that file divided by its characters, so a piece parsed again after a bad cut
counts for its share.  Reported per ``-j``: files in the tree, files parsed,
the average and the largest parses per file, the files parsed two or more
times (and over 1.05) with the callers, and the characters parsed that belong
to no tree file (expressions, fix checks).

    python benchmarks/parse_count.py --tree /tmp/tree --jobs 1 2
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from wnaudit.cli.discovery import discover
from wnaudit.common.config import Config
from wnaudit.source.reading import SourceError, decode

#: Loaded first by every interpreter of the observed run (``-j`` workers included): logs each tree-building parse.
OBSERVER = '''
import ast, builtins, hashlib, json, os, sys

_LOG = os.environ["WNAUDIT_PARSE_LOG"]
_real_compile = builtins.compile


def _callers():
    frame, found = sys._getframe(2), []
    while frame is not None and len(found) < 7:
        name = frame.f_code.co_filename
        if "/wnaudit/" in name:
            module = name.rsplit("/wnaudit/", 1)[1][:-3].replace("/", ".")
            found.append(f"{module}.{frame.f_code.co_name}")
        frame = frame.f_back
    return " < ".join(found)


def _observed_compile(source, filename, mode, flags=0, *args, **kwargs):
    if flags & ast.PyCF_ONLY_AST and isinstance(source, (str, bytes)):
        text = source if isinstance(source, str) else source.decode("utf-8", "surrogateescape")
        record = [os.fspath(filename), len(text), hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), _callers()]
        with open(os.path.join(_LOG, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\\n")
    return _real_compile(source, filename, mode, flags, *args, **kwargs)


builtins.compile = _observed_compile  # ``ast.parse`` calls it too
'''


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def tree_texts(tree: Path) -> dict[Path, str]:
    """Every source file the lint finds in the tree, as the parser gets it (decoded)."""
    found: dict[Path, str] = {}
    for path in discover([tree], Config()).sources:
        try:
            found[path.resolve()] = decode(path.read_bytes()).text
        except (OSError, SourceError):
            continue
    return found


def observed_run(tree: Path, jobs: int, selection: list[str]) -> list[list]:
    """The parse records of one cold lint of ``tree`` with ``-j jobs`` (a fresh process)."""
    with tempfile.TemporaryDirectory(prefix="wnaudit-parses-") as scratch:
        hook, log = Path(scratch) / "hook", Path(scratch) / "log"
        hook.mkdir()
        log.mkdir()
        (hook / "sitecustomize.py").write_text(OBSERVER)
        env = dict(os.environ, WNAUDIT_PARSE_LOG=str(log))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hook), env.get("PYTHONPATH", "")]))
        command = [sys.executable, "-m", "wnaudit.cli", "--no-cache", "-q", "--exit-zero", *selection, "-j", str(jobs), "."]
        subprocess.run(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, check=True)
        return [json.loads(line) for part in sorted(log.iterdir()) for line in part.read_text().splitlines()]


def count(tree: Path, texts: dict[Path, str], records: list[list]) -> dict:
    """Parses per file (characters parsed under the file / its characters) and who parsed the files parsed again."""
    by_digest = {digest(text): path for path, text in texts.items()}
    parsed: dict[Path, int] = collections.Counter()
    callers: dict[Path, collections.Counter] = collections.defaultdict(collections.Counter)
    unplaced = 0
    for filename, chars, source_digest, where in records:
        path = (tree / filename).resolve() if filename not in ("<unknown>", "<string>") else None
        if path not in texts:
            path = by_digest.get(source_digest)
        if path is None:
            unplaced += chars
            continue
        parsed[path] += chars
        callers[path][where] += 1
    ratios = {path: chars / max(len(texts[path]), 1) for path, chars in parsed.items()}
    again = sorted((p for p, r in ratios.items() if r > 1.05), key=lambda p: -ratios[p])
    return {
        "files in the tree": len(texts),
        "files parsed": len(ratios),
        "parses per file (average)": round(statistics.mean(ratios.values()), 3) if ratios else 0.0,
        "parses per file (max)": round(max(ratios.values()), 2) if ratios else 0.0,
        "files parsed two or more times": sum(1 for r in ratios.values() if r >= 1.95),
        "files parsed over 1.05 times": len(again),
        "characters parsed for no tree file": unplaced,
        "parsed over 1.05 times (first 10: file, parses, callers)": [
            [str(p.relative_to(tree)), round(ratios[p], 2), dict(callers[p])] for p in again[:10]
        ],
        "callers of the repeated parses": dict(sum((callers[p] for p in again), collections.Counter()).most_common(8)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="a directory of packages, linted whole")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="the -j values to count at")
    parser.add_argument("--select", default="ALL", help="the rules selected (default: every rule)")
    parser.add_argument("--records", type=Path, help="also write every parse record here (JSON lines: file, characters, digest, callers)")
    args = parser.parse_args()
    tree = args.tree.resolve()
    texts = tree_texts(tree)
    report = {}
    for jobs in args.jobs:
        records = observed_run(tree, jobs, ["--select", args.select])
        if args.records is not None:
            Path(f"{args.records}.j{jobs}").write_text("".join(json.dumps(r) + "\n" for r in records))
        report[f"-j {jobs}"] = count(tree, texts, records)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
