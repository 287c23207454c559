"""WN110 and constructor parameters: weight norm a parameter guards counts only where some construction selects it.

``apply_parametrization_norm(conv, norm)`` applies weight norm only for
``norm == "weight_norm"``; moshi builds every SEANet with ``norm="none"``
(issue 22).  The constructions are read with ``construction/``, the reader
WN109 follows; a value the project does not show keeps the finding.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

CONV = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


def apply_norm(module, norm="none"):
    if norm == "weight_norm":
        return weight_norm(module)
    return module


class NormConv(nn.Module):
    def __init__(self, cin, cout, norm="none"):
        super().__init__()
        self.conv = apply_norm(nn.Conv1d(cin, cout, 3, padding=1), norm)

    def forward(self, x):
        return self.conv(x)


class Encoder(nn.Module):
    def __init__(self, channels=1, norm="none", outer=0):
        super().__init__()
        inner = "none" if outer else norm
        self.convs = nn.ModuleList([NormConv(channels, 4, norm=norm), NormConv(4, 4, norm=inner), NormConv(4, 4)])

    def forward(self, x):
        for conv in self.convs:
            x = conv(x)
        return x
"""

LOAD = """
from .conv import Encoder

_encoder_kwargs = {"channels": 1, "norm": "none"}
CONFIG = {"rate": 24000, "encoder": _encoder_kwargs}


def load():
    model = Encoder(**CONFIG["encoder"])
    model.eval()
    return model
"""

FLAG = """
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm, weight_norm


class Block(nn.Module):
    def __init__(self, use_weight_norm=False):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3, padding=1)
        if use_weight_norm:
            self.conv = weight_norm(self.conv)

    def forward(self, x):
        return self.conv(x)


class Head(nn.Module):
    def __init__(self, use_spectral_norm=True):
        super().__init__()
        norm_f = weight_norm if use_spectral_norm is False else spectral_norm
        self.conv = norm_f(nn.Conv1d(4, 1, 3, padding=1))

    def forward(self, x):
        return self.conv(x)


class Model(nn.Module):
    def __init__(self, wn=False):
        super().__init__()
        self.block = Block(use_weight_norm=wn)
        self.head = Head()

    def forward(self, x):
        return self.head(self.block(x))


def load():
    model = Model(wn=False)
    model.eval()
    return model
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    (root / "voc").mkdir()
    (root / "voc" / "__init__.py").write_text("")
    for name, text in files.items():
        (root / "voc" / name).write_text(textwrap.dedent(text).lstrip())
    return root


def _wn110(root: Path, name: str) -> list[int]:
    result = lint_files([root / "voc" / name], RunOptions())
    assert result.errors == []
    return [f.line for f in result.findings if f.code == "WN110"]


def test_a_norm_string_no_construction_selects_is_silent(tmp_path: Path):
    """moshi: ``**`` of a constant module-level dict, an outer constructor passing its parameter down, a default."""
    root = _project(tmp_path, {"conv.py": CONV, "load.py": LOAD})
    assert _wn110(root, "conv.py") == []
    # A constant that selects weight norm is reported.
    (root / "voc" / "load.py").write_text(textwrap.dedent(LOAD).lstrip().replace('"norm": "none"', '"norm": "weight_norm"'))
    assert _wn110(root, "conv.py") == [7]


def test_a_value_the_project_does_not_show_keeps_the_finding(tmp_path: Path):
    """A config attribute, a dict the function is given, the class handed around: not decided, reported as before."""
    assert _wn110(_project(tmp_path, {"conv.py": CONV, "load.py": LOAD}), "conv.py") == []
    for load in (
        LOAD.replace('Encoder(**CONFIG["encoder"])', "Encoder(norm=CONFIG.norm)"),
        LOAD.replace("def load():", "def load(config=CONFIG):").replace('**CONFIG["encoder"]', '**config["encoder"]'),
        LOAD.replace("model = Encoder(**CONFIG[\"encoder\"])", "factory = Encoder\n    model = factory(norm='none')"),
    ):
        root = tmp_path / str(abs(hash(load)))
        root.mkdir()
        _project(root, {"conv.py": CONV, "load.py": load})
        assert _wn110(root, "conv.py") == [7], load


def test_a_parameter_the_constructor_overwrites_is_not_followed(tmp_path: Path):
    """``norm = norm or "weight_norm"``: what the constructions pass is no longer what is tested."""
    conv = CONV.replace('    if norm == "weight_norm":', '    norm = norm or "weight_norm"\n    if norm == "weight_norm":')
    root = _project(tmp_path, {"conv.py": conv, "load.py": LOAD.replace('"norm": "none"', '"norm": ""')})
    assert _wn110(root, "conv.py") == [8]
    (root / "voc" / "conv.py").write_text(textwrap.dedent(CONV).lstrip())
    assert _wn110(root, "conv.py") == []


def test_subclasses_pass_constructions_through(tmp_path: Path):
    """A subclass without ``__init__`` is built like its base; one with it through ``super().__init__``."""
    sub = """
        from .conv import Encoder


        class Plain(Encoder):
            pass


        class Wrapped(Encoder):
            def __init__(self, norm="none"):
                super().__init__(channels=2, norm=norm)


        def load(weight_norm):
            plain = Plain(norm="none")
            wrapped = Wrapped(norm=NORM)
            plain.eval()
            wrapped.eval()
            return plain, wrapped
        """
    for constant, expected in (('"none"', []), ('"weight_norm"', [7])):
        root = tmp_path / constant.strip('"')
        root.mkdir()
        _project(root, {"conv.py": CONV, "sub.py": f"NORM = {constant}\n" + textwrap.dedent(sub)})
        assert _wn110(root, "conv.py") == expected, constant


def test_flags_a_construction_leaves_false_are_silent(tmp_path: Path):
    """``if use_weight_norm:`` and ``norm_f = weight_norm if use_spectral_norm is False else spectral_norm``."""
    root = _project(tmp_path, {"flag.py": FLAG})
    assert _wn110(root, "flag.py") == []
    (root / "voc" / "flag.py").write_text(
        textwrap.dedent(FLAG).lstrip().replace("Model(wn=False)", "Model(wn=True)").replace("self.head = Head()", "self.head = Head(False)")
    )
    assert _wn110(root, "flag.py") == [10, 20]


#: A configuration class whose class-level constants select constructor branches (issue 35: written from the rule's
#: semantics, a constant a project class binds once is as constant as a module-level one).
CONFIG_CLASS = """
class Config:
    up_type = "transpose"
    use_wn = False
    channels = 4
"""
CONFIGURED = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm

from .config import Config


class Up(nn.Module):
    def __init__(self, up_type="interp"):
        super().__init__()
        if up_type == "transpose":
            self.up = nn.ConvTranspose1d(4, 4, 4, stride=2, padding=1)
        else:
            self.up = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

    def forward(self, x):
        return self.up(x)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = weight_norm(nn.Conv1d(80, 4, 7, padding=3))
        self.up = Up(up_type=Config.up_type)
        if Config.use_wn:
            self.wn = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

    def forward(self, mel):
        return self.up(self.pre(mel))
"""
SERVE_CONFIGURED = """
from .model import Generator


def load():
    model = Generator()
    model.eval()
    return model
"""


def _configured(tmp_path: Path, config: str = CONFIG_CLASS, **extra: str) -> list[int]:
    root = tmp_path / "proj"
    files = {"voc/__init__.py": "", "voc/config.py": config, "voc/model.py": CONFIGURED, "voc/serve.py": SERVE_CONFIGURED}
    files.update({f"voc/{name}.py": text for name, text in extra.items()})
    (root / "voc").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip())
    result = lint_files(sorted((root / "voc").glob("*.py")), RunOptions())
    assert result.errors == []
    return sorted(f.line for f in result.findings if f.code == "WN110" and f.path.endswith("model.py"))


def test_class_level_constants_of_a_configuration_class_select_constructor_branches(tmp_path: Path):
    """``Up(up_type=Config.up_type)`` and ``if Config.use_wn:``: the branches the constants never select are not
    reported; the unconditional application is."""
    assert _configured(tmp_path) == [22]


def test_a_configuration_attribute_set_elsewhere_or_true_keeps_the_finding(tmp_path: Path):
    """Set by a script (``Config.use_wn = True``), or on in the class: not known to be off, so it counts."""
    assert _configured(tmp_path / "a", script="from .config import Config\n\nConfig.use_wn = True\nConfig.up_type = 'interp'\n") == [
        13, 22, 25,
    ]
    on = CONFIG_CLASS.replace('up_type = "transpose"', 'up_type = "interp"').replace("use_wn = False", "use_wn = True")
    assert _configured(tmp_path / "b", on) == [13, 22, 25]


def test_a_configuration_class_is_parsed_once_for_all_its_attributes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each attribute read (``Config.up_type``, ``Config.use_wn``, ``Config.channels``) looks into the same class:
    the selection parses its file once, not once per attribute."""
    import ast
    import types

    from wnaudit.source.serving import selection

    parsed: list[str] = []

    def counting(source, filename="<unknown>", *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(str(filename))
        return ast.parse(source, filename, *args, **kwargs)

    monkeypatch.setattr(selection, "ast", types.SimpleNamespace(**{**vars(ast), "parse": counting}))
    model = CONFIGURED.replace("self.wn = weight_norm", "self.wn = nn.Identity() if Config.channels else weight_norm")
    root = tmp_path / "proj"
    (root / "voc").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    files = {"__init__.py": "", "config.py": CONFIG_CLASS, "model.py": model, "serve.py": SERVE_CONFIGURED}
    for name, text in files.items():
        (root / "voc" / name).write_text(textwrap.dedent(text).lstrip())
    result = lint_files(sorted((root / "voc").glob("*.py")), RunOptions(cache=False))
    assert any(f.code == "WN110" for f in result.findings)
    assert sum(name.endswith("config.py") for name in parsed) == 1
