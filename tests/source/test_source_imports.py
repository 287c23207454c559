"""Findings depend on the file and the code it imports, resolved as Python resolves imports.

The three shapes of issue 16: a file linted alone (pre-commit passes only
staged files), a package whose middle module names no weight-norm API, and
same-named modules in unrelated folders.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from wnaudit.common.config import Config, ConfigError, load_config
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files, lint_source

REPO = Path(__file__).resolve().parents[2]


def _codes(paths: list[Path], config: Config | None = None) -> list[tuple[str, str, int]]:
    options = RunOptions(config=config) if config is not None else RunOptions()
    files = [f for p in paths for f in (sorted(p.rglob("*.py")) if p.is_dir() else [p])]
    result = lint_files(files, options)
    assert result.errors == []
    return [(Path(f.path).name, f.code, f.line or 0) for f in result.findings]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_file_linted_alone_reads_its_package(tmp_path):
    shutil.copytree(REPO / "examples" / "codec", tmp_path / "codec")
    decoder = tmp_path / "codec" / "decoder.py"
    alone = _codes([decoder])
    assert alone == [("decoder.py", "WN101", 21)]
    assert _codes(sorted((tmp_path / "codec").glob("*.py"))) == alone
    assert [(f.code, f.line) for f in lint_source(decoder.read_text(), str(decoder))] == [("WN101", 21)]


VOC = {
    "voc/__init__.py": "",
    "voc/base.py": """\
        import torch.nn as nn
        from torch.nn.utils import parametrizations

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = parametrizations.weight_norm(nn.Conv1d(2, 2, 3))
        """,
    "voc/mid.py": """\
        from .base import Base

        class Mid(Base):
            pass
        """,
    "voc/serve.py": """\
        from torch.nn.utils import remove_weight_norm
        from voc.mid import Mid

        def fold():
            remove_weight_norm(Mid().conv)
        """,
}


def test_middle_module_without_api_names_is_read(tmp_path):
    _write(tmp_path, VOC)
    expected = [("serve.py", "WN101", 5)]
    package = sorted((tmp_path / "voc").glob("*.py"))
    assert _codes(package) == expected
    assert _codes([tmp_path / "voc" / "serve.py"]) == expected
    # A comment elsewhere changes nothing.
    mid = tmp_path / "voc" / "mid.py"
    mid.write_text(mid.read_text() + "# weight_norm\n")
    assert _codes(package) == expected


def test_registered_parametrization_in_a_base_class_is_seen(tmp_path):
    _write(
        tmp_path,
        {
            "net/__init__.py": "",
            "net/base.py": """\
                import torch.nn as nn
                from torch.nn.utils.parametrize import register_parametrization

                class Scale(nn.Module):
                    def forward(self, w):
                        return w * 2

                class Base(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.proj = nn.Linear(2, 2)
                        register_parametrization(self.proj, "weight", Scale())
                """,
            "net/sub.py": """\
                import torch.nn as nn
                from torch.nn.utils import weight_norm
                from torch.nn.utils.parametrize import remove_parametrizations
                from .base import Base

                class Sub(Base):
                    def __init__(self):
                        super().__init__()
                        self.conv = weight_norm(nn.Conv1d(2, 2, 3))  # noqa: WN103

                    def strip(self):
                        remove_parametrizations(self.proj, "weight")
                """,
        },
    )
    assert _codes([tmp_path / "net" / "sub.py"]) == []
    assert _codes(sorted((tmp_path / "net").glob("*.py"))) == []


SAME_NAMES = {
    "a/hifigan/generator.py": """\
        import torch.nn as nn
        from torch.nn.utils import weight_norm, remove_weight_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = weight_norm(nn.Conv1d(2, 2, 3))  # noqa: WN103

            def remove_weight_norm(self):
                remove_weight_norm(self.conv)
        """,
    "b/vocoder/generator.py": """\
        import torch.nn as nn
        try:
            from torch.nn.utils.parametrizations import weight_norm
        except ImportError:
            from torch.nn.utils import weight_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = weight_norm(nn.Conv1d(2, 2, 3))
        """,
}


def test_same_named_modules_of_unrelated_folders_are_not_merged(tmp_path, monkeypatch):
    _write(tmp_path, SAME_NAMES)
    monkeypatch.chdir(tmp_path)
    assert _codes([Path("a")]) == []
    assert _codes([Path("a"), Path("b")]) == []
    assert _codes([tmp_path / "a" / "hifigan" / "generator.py", tmp_path / "b" / "vocoder" / "generator.py"]) == []


def test_spelling_chosen_in_another_module_counts(tmp_path):
    _write(
        tmp_path,
        {
            "tts/__init__.py": "",
            "tts/compat.py": """\
                try:
                    from torch.nn.utils.parametrizations import weight_norm
                except ImportError:
                    from torch.nn.utils import weight_norm
                """,
            "tts/layers.py": """\
                import torch.nn as nn
                from .compat import weight_norm as wn
                from torch.nn.utils import remove_weight_norm

                class Block(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.conv = wn(nn.Conv1d(2, 2, 3))

                    def fold(self):
                        remove_weight_norm(self.conv)
                """,
        },
    )
    assert _codes([tmp_path / "tts" / "layers.py"]) == [("layers.py", "WN101", 11)]


def test_legacy_spelling_reexported_from_another_module_is_wn103(tmp_path):
    _write(
        tmp_path,
        {
            "tts/__init__.py": "from torch.nn.utils import weight_norm as norm\n",
            "tts/layers.py": """\
                import torch.nn as nn
                from tts import norm

                conv = norm(nn.Conv1d(2, 2, 3))
                """,
        },
    )
    assert _codes([tmp_path / "tts" / "layers.py"]) == [("layers.py", "WN103", 4)]


def test_src_layout_and_namespace_packages(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.wnaudit]\nsrc = ["src"]\n',
            "src/org/models/__init__.py": "",
            "src/org/models/layers.py": """\
                import torch.nn as nn
                from torch.nn.utils.parametrizations import weight_norm

                class Block(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.conv = weight_norm(nn.Conv1d(2, 2, 3))
                """,
            "scripts/export.py": """\
                from torch.nn.utils import remove_weight_norm
                from org.models.layers import Block

                remove_weight_norm(Block().conv)
                """,
            # A same-named module beside the script must not be taken for it.
            "scripts/org/models/layers.py": "class Block:\n    pass\n",
        },
    )
    config = load_config([tmp_path])
    assert config.source_roots == (tmp_path.resolve() / "src",)
    export = tmp_path / "scripts" / "export.py"
    # A script's own directory comes first, as on sys.path: there ``org`` is the local namespace package.
    assert _codes([export], config) == []
    (tmp_path / "scripts" / "org" / "models" / "layers.py").unlink()
    assert _codes([export], config) == [("export.py", "WN101", 4)]
    assert [(f.code, f.line) for f in lint_source(export.read_text(), str(export), config)] == [("WN101", 4)]


def test_src_setting_is_validated(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.wnaudit]\nsrc = "src"\n')
    try:
        load_config([tmp_path])
    except ConfigError as error:
        assert "src" in str(error)
    else:
        raise AssertionError("a string src was accepted")


def test_installed_packages_are_never_followed(tmp_path):
    _write(
        tmp_path,
        {
            "venv/lib/site-packages/vendor/__init__.py": "",
            "venv/lib/site-packages/vendor/layers.py": """\
                import torch.nn as nn
                from torch.nn.utils.parametrizations import weight_norm

                class Block(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.conv = weight_norm(nn.Conv1d(2, 2, 3))
                """,
            "app.py": """\
                from torch.nn.utils import remove_weight_norm
                from vendor.layers import Block

                remove_weight_norm(Block().conv)
                """,
        },
    )
    config = Config(root=tmp_path, src=("venv/lib/site-packages",))
    assert _codes([tmp_path / "app.py"], config) == []
