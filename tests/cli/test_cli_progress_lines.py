"""Signs of life off a terminal (issue 37, item 5): a start line for long work, then one every ten seconds."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from wnaudit.common import progress
from wnaudit.common.progress import Heartbeat, heartbeat


class Lines(logging.Handler):
    """The progress logger's lines, as this test sees them."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def lines():
    handler, level = Lines(), progress.logger.level
    progress.logger.addHandler(handler)
    progress.logger.setLevel(logging.INFO)
    yield handler.messages
    progress.logger.removeHandler(handler)
    progress.logger.setLevel(level)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_interval_and_a_closing_line(lines: list[str]):
    clock = FakeClock()
    beats = Heartbeat("folding g.pt", clock=clock)
    beats.start("1400 MB")
    clock.now += 4
    assert not beats.beat(), "nothing before ten seconds"
    clock.now += 6
    assert beats.beat()
    clock.now += 9.5
    assert not beats.beat()
    clock.now += 0.5
    assert beats.beat()
    beats.finish()
    assert lines == [
        "folding g.pt: started (1400 MB)",
        "folding g.pt: still working, 10 s so far",
        "folding g.pt: still working, 20 s so far",
        "folding g.pt: done in 20 s",
    ]


def test_short_work_says_nothing_unless_announced(lines: list[str]):
    clock = FakeClock()
    beats = Heartbeat("reading g.pt", clock=clock)
    clock.now += 3
    beats.beat()
    beats.finish()
    assert lines == []


def test_the_thread_beats_and_stops(lines: list[str]):
    """The context manager's daemon thread logs while the body runs, and stops with it."""
    import time

    with heartbeat("fixing m.pt2", announce=True, interval=0.05):
        time.sleep(0.3)
    count = len(lines)
    time.sleep(0.15)
    assert lines[0] == "fixing m.pt2: started" and "fixing m.pt2: still working" in lines[1]
    assert lines[-1].startswith("fixing m.pt2: done in") and len(lines) == count


def test_a_big_checkpoint_fold_announces_itself_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch):
    torch = pytest.importorskip("torch")
    from wnaudit.checkpoint import audit
    from wnaudit.cli.command import run

    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 4, 3))
    torch.save(conv.state_dict(), tmp_path / "g.pt")
    monkeypatch.setattr(audit, "PROGRESS_THRESHOLD", 0)  # every file counts as big
    assert run(["--fix", str(tmp_path / "g.pt")]) == 0
    err = capsys.readouterr().err
    assert f"wnaudit: folding {tmp_path / 'g.pt'}: started (0 MB)" in err.splitlines(), err
    monkeypatch.setattr(audit, "PROGRESS_THRESHOLD", 1 << 40)
    torch.save(conv.state_dict(), tmp_path / "g.pt")
    assert run(["--fix", str(tmp_path / "g.pt")]) == 0
    assert "started" not in capsys.readouterr().err, "a small fold stays quiet"
