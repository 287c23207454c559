"""The ``wnaudit`` process keeps a lint's collection thresholds and walks no heap at exit (issue 21).

A cold lint of a big tree leaves a large cyclic heap; a full collection after
the lint and Python's own at exit each walked all of it (about a second each).
"""

from __future__ import annotations

import gc
import subprocess
import sys
from typing import Callable

import pytest

from wnaudit.cli import command
from wnaudit.common.gc_pause import LINT_THRESHOLDS


def test_the_process_entry_keeps_lint_thresholds_and_freezes_at_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[Callable[[], None]] = []
    seen: list[tuple[int, int, int]] = []
    monkeypatch.setattr(command.atexit, "register", registered.append)
    monkeypatch.setattr(command, "main", lambda: seen.append(gc.get_threshold()))
    before = gc.get_threshold()
    try:
        command.process_main()
    finally:
        gc.set_threshold(*before)
    assert seen == [LINT_THRESHOLDS]
    assert registered == [gc.freeze]


def test_python_m_wnaudit_cli_is_the_process_entry() -> None:
    done = subprocess.run([sys.executable, "-m", "wnaudit.cli", "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "wnaudit" in done.stdout
