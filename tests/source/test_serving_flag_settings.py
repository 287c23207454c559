"""What the project's code sets a configuration flag to (``serving/flags.py``) is read once per file content.

Every lint of one buffer (an editor, pre-commit on one file, the fuzzers) builds a new serving index and asks about
the project's flags again; the files' settings are a pure function of their bytes and the flag, so a second ask
parses nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wnaudit.source.serving import flags


def test_a_file_s_settings_are_parsed_once_per_content_and_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = flags._python_settings

    def counting(path: Path, data: bytes, flag: str) -> list[bool | None]:
        parsed.append(flag)
        return real(path, data, flag)

    monkeypatch.setattr(flags, "_python_settings", counting)
    monkeypatch.setattr(flags, "_SETTINGS", {})
    off = (tmp_path / "cfg.py", b"class Config:\n    fold_weight_norm = False\n")
    on = (tmp_path / "run.py", b"run(fold_weight_norm=True)\n")
    assert flags.flag_on("fold_weight_norm", [off], []) is False
    assert flags.flag_on("fold_weight_norm", [off], []) is False
    assert flags.flag_on("fold_weight_norm", [off, on], []) is True
    assert parsed == ["fold_weight_norm", "fold_weight_norm"]  # cfg.py once, run.py once
