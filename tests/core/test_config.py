"""[tool.wnaudit] discovery and which codes apply where; input discovery."""

from __future__ import annotations

from pathlib import Path

import json
import os
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from wnaudit.cli.discovery import discover
from wnaudit.common.config import DEFAULT_EXCLUDES, Config, ConfigError, _wnaudit_table, config_from_table, load_config
from wnaudit.report.codes import code_registry


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


# --- every shape of config mistake is one line naming the file and the key (issue 13) -------

KNOWN = code_registry()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('[tool.wnaudit]\nexclude = "x"\n', "[tool.wnaudit] exclude: expected a list of strings, got a string"),
        ("[tool.wnaudit]\nexclude = {a = 1}\n", "[tool.wnaudit] exclude: expected a list of strings, got a table"),
        ("[tool.wnaudit]\nexclude = [1]\n", "[tool.wnaudit] exclude: expected a list of strings, got a list holding an integer"),
        ("[tool.wnaudit]\nextend-exclude = ['[abc']\n", "[tool.wnaudit] extend-exclude: '[abc': unclosed character class"),
        ("[tool.wnaudit]\nexclude = ['']\n", "[tool.wnaudit] exclude: '': empty glob pattern"),
        ("tool = 5\n", "[tool]: expected a table, got an integer"),
        ('tool = "wnaudit"\n', "[tool]: expected a table, got a string"),
        ("[tool]\nwnaudit = 5\n", "[tool.wnaudit]: expected a table, got an integer"),
        ("[tool]\nwnaudit = [1, 2]\n", "[tool.wnaudit]: expected a table, got a list"),
        ("[tool.wnaudit]\nselct = ['WN1']\n", "[tool.wnaudit]: unknown key 'selct'; did you mean 'select'?"),
        ("[tool.wnaudit]\nselect = 3\n", "[tool.wnaudit] select: expected a list of strings, got an integer"),
        ("[tool.wnaudit]\nselect = ['WN9']\n", "[tool.wnaudit] select: unknown rule selector 'WN9' (known prefixes: ALL, WN, WN1, WN2, WN3"),
        ("[tool.wnaudit]\nignore = ['WN999']\n", "[tool.wnaudit] ignore: unknown rule selector 'WN999'"),
        ("[tool.wnaudit]\nextend-select = ['E501']\n", "[tool.wnaudit] extend-select: unknown rule selector 'E501'"),
        ("[tool.wnaudit.per-file-ignores]\n'a.py' = 'WN101'\n", "[tool.wnaudit] per-file-ignores: 'a.py': expected a list of strings, got a string"),
        ("[tool.wnaudit.per-file-ignores]\n'a.py' = ['WN9']\n", "[tool.wnaudit] per-file-ignores: 'a.py': unknown rule selector 'WN9'"),
        ("[tool.wnaudit]\nper-file-ignores = 5\n", "[tool.wnaudit] per-file-ignores: expected a table of"),
        ("[tool.wnaudit]\nmax-source-bytes = 0\n", "[tool.wnaudit] max-source-bytes: expected a positive integer (bytes), got 0"),
        ("[tool.wnaudit]\nmax-source-bytes = true\n", "[tool.wnaudit] max-source-bytes: expected a positive integer (bytes), got a boolean"),
        ("[tool.wnaudit]\nforce-exclude = 'yes'\n", "[tool.wnaudit] force-exclude: expected true or false, got a string"),
        ("a = " + "[" * 50_000 + "]" * 50_000 + "\n", "invalid TOML: values nested too deeply to read"),
        ("[tool.wnaudit\n", "invalid TOML: "),
        (b"[tool.wnaudit]\nselect = ['\xff']\n", "not UTF-8"),
    ],
    ids=lambda value: None,
)
def test_every_config_mistake_is_one_line_naming_file_and_key(tmp_path, body, expected):
    path = tmp_path / "pyproject.toml"
    path.write_bytes(body if isinstance(body, bytes) else body.encode())
    nested = tmp_path / "pkg" / "deep"
    nested.mkdir(parents=True)
    with pytest.raises(ConfigError) as raised:
        load_config([nested], known_codes=KNOWN)  # found by walking up from the input
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_config_paths_below_the_working_directory_are_shown_relative(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.wnaudit]\nexclude = "x"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        load_config([Path(".")], known_codes=KNOWN)
    assert str(raised.value) == "pyproject.toml: [tool.wnaudit] exclude: expected a list of strings, got a string"


def test_a_fifo_named_pyproject_toml_is_an_error_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "pyproject.toml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config([tmp_path], explicit=tmp_path / "pyproject.toml")


_TOML_SCALARS = st.one_of(
    st.text(max_size=8), st.integers(), st.floats(allow_nan=False), st.booleans(),
    st.sampled_from(["WN", "WN1", "WN101", "ALL", "wn3", "WN9", "", "[", "*.py", "a/**"]),
)
_TOML_VALUES = st.recursive(
    _TOML_SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
_KEYS = st.sampled_from(
    ["select", "extend-select", "ignore", "exclude", "extend-exclude", "per-file-ignores",
     "extend-per-file-ignores", "force-exclude", "max-source-bytes", "selct", "tool"]
)


@settings(max_examples=300, deadline=None)
@given(table=st.dictionaries(_KEYS | st.text(max_size=6), _TOML_VALUES, max_size=5))
def test_config_loader_fuzz_gives_a_config_or_one_line_error(tmp_path_factory, table):
    path = tmp_path_factory.getbasetemp() / "pyproject.toml"
    try:
        config = config_from_table(table, path, KNOWN)
    except ConfigError as error:
        assert "\n" not in str(error) and str(error).startswith(f"{path}: [tool.wnaudit]")
        return
    # A loaded config always answers every question without raising.
    for code in KNOWN:
        config.enabled(code, path.parent / "a" / "b.py")
    config.is_excluded(path.parent / "x.py")
    config.is_path_excluded(path.parent / "a" / "x.py")


@settings(max_examples=150, deadline=None)
@given(tool=_TOML_VALUES)
def test_any_tool_value_gives_a_config_or_one_line_error(tmp_path_factory, tool):
    try:
        table = _wnaudit_table({"tool": tool}, "pyproject.toml")
        if table is not None:
            config_from_table(table, Path("pyproject.toml"), KNOWN)
    except ConfigError as error:
        assert "\n" not in str(error) and str(error).startswith("pyproject.toml: [tool")


def _toml(value) -> str:
    """A TOML rendering of a generated value (json's string escapes are TOML's; inf/nan spelled as TOML does)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, str)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@settings(max_examples=200, deadline=None)
@given(table=st.dictionaries(_KEYS | st.text(max_size=6), _TOML_VALUES, max_size=5), tool_extra=st.booleans())
def test_pyproject_text_found_by_walking_up_gives_a_config_or_one_line_error(tmp_path_factory, table, tool_extra):
    root = tmp_path_factory.mktemp("project")
    lines = ["[tool.wnaudit]"] + [f"{json.dumps(key)} = {_toml(value)}" for key, value in table.items()]
    if tool_extra:
        lines = ["tool = " + _toml(table)] if table else lines
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    (root / "src").mkdir()
    try:
        load_config([root / "src"], known_codes=KNOWN)
    except ConfigError as error:
        assert "\n" not in str(error) and str(error).startswith(f"{root / 'pyproject.toml'}: ")


# --- selectors and ruff's select / exclude model (issue 14) ----------------------------------


def test_extend_select_adds_to_the_selection(tmp_path):
    _pyproject(tmp_path, '[tool.wnaudit]\nselect = ["WN1"]\nextend-select = ["WN302"]\n')
    config = load_config([tmp_path], known_codes=KNOWN)
    assert config.enabled("WN101") and config.enabled("WN302") and not config.enabled("WN301")


def test_command_line_select_replaces_configured_select_and_extend_select(tmp_path):
    _pyproject(tmp_path, '[tool.wnaudit]\nselect = ["WN1"]\nextend-select = ["WN302"]\n')
    config = load_config([tmp_path], known_codes=KNOWN).with_overrides(select=["WN3"], known_codes=KNOWN)
    assert config.enabled("WN301") and not config.enabled("WN101")
    config = config.with_overrides(extend_select=["WN101"], known_codes=KNOWN)
    assert config.enabled("WN101") and config.enabled("WN301")


@pytest.mark.parametrize("option", ["select", "extend_select", "ignore"])
def test_unknown_command_line_selector_is_an_error(option):
    with pytest.raises(ConfigError, match=r"--.*: unknown rule selector 'WN999' \(known prefixes: ALL, WN, WN1, WN2, WN3"):
        Config().with_overrides(**{option: ["WN999"]}, known_codes=KNOWN)


def test_known_prefixes_and_codes_are_accepted():
    config = Config().with_overrides(select=["WN", "WN1", "WN10", "WN101", "ALL", "wn3"], known_codes=KNOWN)
    assert config.enabled("WN303")


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(tmp_path):
    _pyproject(tmp_path, '[tool.wnaudit]\nexclude = ["generated"]\n')
    assert load_config([tmp_path]).exclusions == ("generated",)
    _pyproject(tmp_path, '[tool.wnaudit]\nextend-exclude = ["generated"]\n')
    assert load_config([tmp_path]).exclusions == (*DEFAULT_EXCLUDES, "generated")


def test_default_excluded_directory_named_explicitly_is_linted(tmp_path):
    tree = tmp_path / "build" / "myproj"
    tree.mkdir(parents=True)
    (tree / "model.py").write_text("x = 1\n")
    found = discover([tree], Config(root=tmp_path))
    assert [p.name for p in found.sources] == ["model.py"]
    # ... but walking the parent still skips it.
    assert discover([tmp_path], Config(root=tmp_path)).sources == []


def test_excluded_file_named_explicitly_is_linted_unless_force_exclude(tmp_path):
    (tmp_path / "third_party").mkdir()
    vendored = tmp_path / "third_party" / "lib.py"
    vendored.write_text("x = 1\n")
    config = Config(extend_exclude=("third_party",), root=tmp_path)
    assert discover([vendored], config).sources == [vendored]
    assert discover([vendored], replace(config, force_exclude=True)).sources == []
    assert discover([tmp_path / "third_party"], replace(config, force_exclude=True)).sources == []


def test_slashed_patterns_match_paths_relative_to_the_config_root(tmp_path):
    (tmp_path / "pkg" / "generated").mkdir(parents=True)
    (tmp_path / "generated").mkdir()
    (tmp_path / "pkg" / "generated" / "a.py").write_text("x = 1\n")
    (tmp_path / "generated" / "b.py").write_text("x = 1\n")
    found = discover([tmp_path], Config(extend_exclude=("pkg/generated",), root=tmp_path))
    assert [p.name for p in found.sources] == ["b.py"]


def test_serving_entries_are_read_and_checked(tmp_path):
    """``serving`` declares the entry points WN110 checks and ``probe`` calls: ``module:callable`` each."""
    (tmp_path / "pyproject.toml").write_text('[tool.wnaudit]\nserving = ["pkg.serve:load_vocoder", "app:Server.load"]\n')
    assert load_config([tmp_path]).serving == ("pkg.serve:load_vocoder", "app:Server.load")
    (tmp_path / "pyproject.toml").write_text('[tool.wnaudit]\nserving = ["pkg/serve.py"]\n')
    with pytest.raises(ConfigError, match=r"serving: 'pkg/serve.py' is not an entry point"):
        load_config([tmp_path])
