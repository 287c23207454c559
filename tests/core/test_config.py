"""[tool.wnaudit] discovery and which codes apply where; input discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from wnaudit.common.config import Config, ConfigError, load_config
from wnaudit.cli.discovery import discover


def _pyproject(directory: Path, body: str) -> Path:
    path = directory / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_config_is_found_by_walking_up_from_the_inputs(tmp_path):
    _pyproject(tmp_path, '[tool.wnaudit]\nignore = ["WN103"]\nexclude = ["generated"]\n')
    nested = tmp_path / "pkg" / "models"
    nested.mkdir(parents=True)
    config = load_config([nested])
    assert config.source == tmp_path / "pyproject.toml"
    assert not config.enabled("WN103")
    assert config.enabled("WN101")


def test_a_pyproject_without_the_table_is_skipped(tmp_path):
    _pyproject(tmp_path, '[tool.wnaudit]\nselect = ["WN1"]\n')
    inner = tmp_path / "sub"
    inner.mkdir()
    _pyproject(inner, "[project]\nname = 'x'\n")
    config = load_config([inner])
    assert config.enabled("WN101") and not config.enabled("WN301")


def test_longest_prefix_wins_between_select_and_ignore():
    config = Config(select=("WN", "WN103"), ignore=("WN1",))
    assert not config.enabled("WN101")
    assert config.enabled("WN103")
    assert config.enabled("WN201")


def test_per_file_ignores_match_globs_relative_to_the_config(tmp_path):
    _pyproject(tmp_path, '[tool.wnaudit.per-file-ignores]\n"legacy/*.py" = ["WN103"]\n"tests/**" = ["WN"]\n')
    config = load_config([tmp_path])
    assert not config.enabled("WN103", tmp_path / "legacy" / "old.py")
    assert config.enabled("WN101", tmp_path / "legacy" / "old.py")
    assert config.enabled("WN103", tmp_path / "models" / "new.py")
    assert not config.enabled("WN101", tmp_path / "tests" / "deep" / "t.py")


def test_command_line_overrides_extend_the_file(tmp_path):
    _pyproject(tmp_path, '[tool.wnaudit]\nignore = ["WN103"]\n')
    config = load_config([tmp_path]).with_overrides(select=["WN1"], ignore=["WN104"], exclude=[])
    assert config.enabled("WN101")
    assert not config.enabled("WN103") and not config.enabled("WN104") and not config.enabled("WN201")


@pytest.mark.parametrize(
    "body",
    ["[tool.wnaudit]\nselct = ['WN1']\n", "[tool.wnaudit]\nselect = 3\n", "[tool.wnaudit\n"],
    ids=["unknown-key", "wrong-type", "broken-toml"],
)
def test_bad_configuration_is_a_clear_error_naming_the_file(tmp_path, body):
    path = _pyproject(tmp_path, body)
    with pytest.raises(ConfigError, match=str(path)):
        load_config([tmp_path])


def test_discovery_sorts_inputs_and_honours_excludes(tmp_path):
    (tmp_path / "b.py").write_text("x = 1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "c.py").write_text("x = 1\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "d.py").write_text("x = 1\n")
    (tmp_path / "model.safetensors").write_bytes(b"")
    (tmp_path / "g_00500000").write_bytes(b"PK\x03\x04rest")
    (tmp_path / "LICENSE").write_text("text")
    (tmp_path / "notes.txt").write_text("text")
    found = discover([tmp_path], Config(extend_exclude=("generated",), root=tmp_path))
    assert [p.name for p in found.sources] == ["a.py", "b.py"]
    assert [p.name for p in found.checkpoints] == ["g_00500000", "model.safetensors"]
    assert found.errors == []


def test_explicit_unknown_or_missing_files_are_input_errors(tmp_path):
    (tmp_path / "notes.txt").write_text("text")
    found = discover([tmp_path / "notes.txt", tmp_path / "missing.pt"], Config(root=tmp_path))
    assert [(Path(e.path).name, e.message) for e in found.errors] == [
        ("notes.txt", "not a Python file nor a recognised checkpoint format"),
        ("missing.pt", "no such file or directory"),
    ]


def test_directories_above_the_walked_tree_never_exclude_it(tmp_path):
    tree = tmp_path / "build" / "project"
    (tree / "dist").mkdir(parents=True)
    (tree / "model.py").write_text("x = 1\n")
    (tree / "dist" / "copy.py").write_text("x = 1\n")
    found = discover([tree], Config(root=tmp_path / "elsewhere"))
    assert [p.name for p in found.sources] == ["model.py"]
