"""The cold-run breakdown script charges every part it names: none of its hooks went stale.

The script finds its parts by module and attribute name, and reports a part whose
function a later version renamed as absent rather than failing.  After the
workspace's reads moved to ``Analyses`` and the entry to ``lint_run``, it printed
"index reads: absent" and "files the index read: 0" on every tree, and a round's
notes would have read a breakdown missing its largest part.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "serving_cold_parts.py"


def test_every_part_and_count_is_hooked_on_the_examples() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--tree", str(REPO / "examples"), "--one", "2"],
        capture_output=True, text=True, check=True, cwd=REPO,
    )
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["absent parts"] == []
    assert report["files the index read"] > 0 and report["files the flags parsed"] > 0
    assert all(seconds >= 0 for seconds in report["CPU s by part"].values())
    handover = report["serving facts: where they came from"]
    assert sum(handover.values()) > 0
