"""What the project's code sets a configuration flag to (``serving/flags.py``) is read once per file content.

Every lint of one buffer (an editor, pre-commit on one file, the fuzzers) builds a new serving index and asks about
the project's flags again; the files' settings are a pure function of their bytes, so a second ask parses nothing,
and one walk of a file answers every flag (a run asks about hundreds: each used to parse the file again).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wnaudit.source.serving import flags

OFF = b"class Config:\n    fold_weight_norm = False\n    causal = False\n"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files parsed for their settings, in order."""
    seen: list[str] = []
    real = flags._python_settings

    def counting(path: Path, data: bytes) -> dict[str, bool] | None:
        seen.append(path.name)
        return real(path, data)

    monkeypatch.setattr(flags, "_python_settings", counting)
    monkeypatch.setattr(flags, "_SETTINGS", {})
    return seen


def test_a_file_s_settings_are_parsed_once_per_content_for_every_flag(tmp_path: Path, parsed: list[str]) -> None:
    off = (tmp_path / "cfg.py", OFF)
    on = (tmp_path / "run.py", b"run(fold_weight_norm=True)\n")
    assert flags.ProjectFlags([off], []).on("fold_weight_norm") is False
    assert flags.ProjectFlags([off], []).on("fold_weight_norm") is False  # a new index (one buffer linted again)
    project = flags.ProjectFlags([off, on], [])
    assert project.on("fold_weight_norm") is True
    assert project.on("causal") is False  # another flag of the same file: no parse
    assert parsed == ["cfg.py", "run.py"]  # each file once, whatever the flags asked


def test_the_project_s_files_are_read_once_for_every_flag(tmp_path: Path, parsed: list[str]) -> None:
    reads: list[str] = []

    def python() -> object:
        for path, data in [(tmp_path / "cfg.py", OFF), (tmp_path / "other.py", b"x = 1\n")]:
            reads.append(path.name)
            yield path, data

    project = flags.ProjectFlags(python(), [])  # type: ignore[arg-type]
    assert [project.on(flag) for flag in ("causal", "fold_weight_norm", "never_set")] == [False, False, True]
    assert reads == ["cfg.py", "other.py"]


def test_a_flag_is_a_whole_word_and_a_command_line_option_is_found_dashed(tmp_path: Path, parsed: list[str]) -> None:
    config = tmp_path / "conf.yaml"
    config.write_text("use_norm: false\nfold-weight-norm: false\n")
    code = [
        (tmp_path / "cfg.py", OFF),
        (tmp_path / "cli.py", b"parser.add_argument('--fold-weight-norm', action='store_true')\n"),
        (tmp_path / "users.py", b"users = [\n"),  # does not parse, holds "use" only inside a longer word
        (tmp_path / "use.py", b"use = False\n"),
    ]
    project = flags.ProjectFlags(code, [config.read_bytes()])
    assert project.on("fold_weight_norm") is True  # the option may turn it on
    assert project.on("use") is False  # the file that cannot say does not hold the word
    assert project.on("use_norm") is False  # set off by the shipped config
    assert project.on("never_set") is True  # not shown: on
    assert "users.py" not in parsed


def test_a_file_read_for_the_serving_path_is_not_parsed_again_for_its_flags(tmp_path: Path, parsed: list[str]) -> None:
    from wnaudit.source.serving.reader import read_serving_facts

    read = read_serving_facts(OFF, str(tmp_path / "cfg.py"), "cfg", False)
    assert read.settings == {"fold_weight_norm": False, "causal": False}  # from the serving walk's own parse
    known = {"cfg.py": read.settings}
    code = [(tmp_path / "cfg.py", OFF), (tmp_path / "run.py", b"run(causal=True)\n")]
    project = flags.ProjectFlags(code, [], lambda path, data: known.get(path.name, flags.NOT_KNOWN))
    assert project.on("fold_weight_norm") is False
    assert project.on("causal") is True
    assert parsed == ["run.py"]  # cfg.py's settings came with its serving facts


def test_a_deeply_nested_file_s_settings_are_the_serving_walk_s(tmp_path: Path) -> None:
    """The flag reader parses as deep as the analysis does: a -j worker's serving facts (the walk's ``settings``)
    and the flag reader's own parse give one answer (it said "not known" for a file the walk read)."""
    from wnaudit.source.serving.reader import read_serving_facts

    data = OFF + b"TABLE = " + b" + ".join([b"1"] * 5000) + b"\n"
    own = flags._python_settings(tmp_path / "cfg.py", data)
    walked = read_serving_facts(data, str(tmp_path / "cfg.py"), "cfg", False).settings
    assert own == walked and own is not None and own["fold_weight_norm"] is False
