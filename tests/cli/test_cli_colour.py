"""Colour on a terminal only: ``TERM=dumb`` is a terminal that prints escape sequences as text (issue 23)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cli_helpers import BUGGY
from wnaudit.cli import run


class _Terminal:
    """stdout as a terminal would be: ``isatty()`` is true."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def _coloured(monkeypatch: pytest.MonkeyPatch, *args: str) -> bool:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    run([*args, "b.py"])
    return "\x1b[" in "".join(terminal.parts)


@pytest.fixture
def on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "b.py").write_text(BUGGY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def test_a_real_terminal_gets_colour(on_a_terminal: None, monkeypatch: pytest.MonkeyPatch):
    assert _coloured(monkeypatch)


def test_term_dumb_gets_no_colour(on_a_terminal: None, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TERM", "dumb")
    assert not _coloured(monkeypatch)


def test_force_color_and_the_flag_still_win_over_term_dumb(on_a_terminal: None, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TERM", "dumb")
    assert _coloured(monkeypatch, "--color", "always")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert _coloured(monkeypatch)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not _coloured(monkeypatch), "NO_COLOR wins over FORCE_COLOR, as before"
