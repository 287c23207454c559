"""WN110 through mappings of parts, factories and tables of classes (issue 22, shape d)."""

from __future__ import annotations

import os
import textwrap
import threading
from pathlib import Path

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files
from wnaudit.source.serving.configs import config_targets

PARTS = """
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(4, 1, 3, padding=1))

    def forward(self, x):
        return self.conv(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(1, 1, 3, padding=1))

    def forward(self, audio):
        return self.conv(audio)
"""

#: styletts2's shape: a ``Munch`` of parts built by a factory, every part put in eval mode by a loader
#: method, and the serving class reading only some parts of it.
MUNCH_SERVED = """
import torch
from munch import Munch

from .parts import Decoder, Discriminator


def build_model(args):
    decoder = Decoder()
    return Munch(decoder=decoder, mpd=Discriminator(), text=args.text)


class TTS:
    def __init__(self, args):
        self.model = self.load_model(args)

    def load_model(self, args):
        model = build_model(args)
        _ = [model[key].eval() for key in model]
        return model

    def inference(self, x):
        with torch.no_grad():
            return self.model.decoder(x)
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'voc'\n")
    for name, text in {"voc/__init__.py": "", "voc/parts.py": PARTS, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def _wn110(root: Path) -> list[tuple[str, int]]:
    result = lint_files(sorted(root.rglob("*.py")), RunOptions())
    assert result.errors == []
    return sorted((Path(f.path).name, f.line) for f in result.findings if f.code == "WN110")


DECODER_LINE = 8
DISCRIMINATOR_LINE = 17


def test_a_part_of_a_munch_the_serving_code_reads_is_served_and_the_others_are_not(tmp_path: Path):
    root = _project(tmp_path, {"voc/tts.py": MUNCH_SERVED})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]
    result = lint_files([root / "voc" / "parts.py"], RunOptions())
    assert "_fold_weight_norm_for_inference(model[\"decoder\"])" in result.findings[0].message  # the part, not the dict


def test_a_part_the_loader_folds_is_not_reported(tmp_path: Path):
    folded = MUNCH_SERVED.replace(
        "_ = [model[key].eval() for key in model]",
        "_ = [model[key].eval() for key in model]\n        wnaudit.fold_weight_norm(model.decoder)",
    ).replace("import torch\n", "import torch\nimport wnaudit\n")
    served = MUNCH_SERVED.replace("import torch\n", "import torch\nimport wnaudit\n")
    assert _wn110(_project(tmp_path / "a", {"voc/tts.py": served})) == [("parts.py", DECODER_LINE)]
    assert _wn110(_project(tmp_path / "b", {"voc/tts.py": folded})) == []


def test_a_munch_put_in_eval_whole_with_no_reads_shown_serves_every_part(tmp_path: Path):
    """Where nothing shows which parts inference reads, every part counts (as for a class): precision first."""
    served = MUNCH_SERVED.replace("return self.model.decoder(x)", "return run(self.model, x)")
    root = _project(tmp_path, {"voc/tts.py": served})
    assert _wn110(root) == [("parts.py", DECODER_LINE), ("parts.py", DISCRIMINATOR_LINE)]


def test_a_member_of_a_dict_of_parts_put_in_eval_mode(tmp_path: Path):
    root = _project(tmp_path, {"voc/serve.py": """
        from .parts import Decoder, Discriminator


        def build():
            return {"decoder": Decoder(), "mpd": Discriminator()}


        def load():
            model = build()
            model["decoder"].eval()
            return model["decoder"]
        """})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_a_module_dict_built_by_a_comprehension_serves_the_part_read(tmp_path: Path):
    """``nn.ModuleDict({k: build(k) for k in parts})``: the key is not written, so any part read may be it."""
    root = _project(tmp_path, {"voc/serve.py": """
        import torch
        import torch.nn as nn

        from .parts import Decoder


        def build(name):
            return Decoder()


        def load(names):
            parts = nn.ModuleDict({name: build(name) for name in names})
            parts.eval()
            with torch.inference_mode():
                return parts.decoder(torch.zeros(1, 4, 8))
        """})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_a_class_chosen_from_a_table_is_served(tmp_path: Path):
    """``{"v1": A, "v2": B}[version](...)`` and ``MODELS[name](...)``: any class the table holds."""
    root = _project(tmp_path, {"voc/serve.py": """
        from .parts import Decoder, Discriminator

        MODELS = {"dec": Decoder}


        def load(version):
            return {"v1": Decoder, "v2": Discriminator}[version]().eval()


        def load_named(name):
            model = MODELS[name]()
            model.eval()
            return model
        """})
    # The decoder is built and served by two loaders, each its own model: one finding (and fold) per loader.
    assert _wn110(root) == [("parts.py", DECODER_LINE), ("parts.py", DECODER_LINE), ("parts.py", DISCRIMINATOR_LINE)]


def test_a_class_imported_under_another_name_is_followed(tmp_path: Path):
    """``from .s3gen import S3Token2Wav as S3Gen`` in a package ``__init__``: the serving code names the alias."""
    root = _project(tmp_path, {
        "voc/__init__.py": "from .parts import Decoder as Vocoder\n",
        "voc/serve.py": """
            from . import Vocoder


            def load():
                vocoder = Vocoder()
                vocoder.eval()
                return vocoder
            """,
    })
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


#: chatterbox's and stable-audio-tools' shape: the served model is handed to a wrapper's constructor, which
#: keeps it and puts it in eval mode (or runs it) there.
WRAPPER = """
import torch
import torch.nn as nn


class Wrapper(nn.Module):
    def __init__(self, model, scale=1.0):
        super().__init__()
        self.model = model
        self.model.requires_grad_(False).eval()

    def decode(self, x):
        return self.model(x)
"""


def test_a_model_handed_to_a_constructor_that_freezes_it_is_served(tmp_path: Path):
    for call in ("Wrapper(build())", "Wrapper(model=build(), scale=2.0)"):
        root = _project(tmp_path / str(len(call)), {"voc/wrap.py": WRAPPER, "voc/factory.py": f"""
            from .parts import Decoder
            from .wrap import Wrapper


            def build():
                return Decoder()


            def pretransform():
                return {call}
            """})
        assert _wn110(root) == [("parts.py", DECODER_LINE)], call


def test_a_constructor_argument_kept_under_another_attribute_is_not_served_by_the_frozen_one(tmp_path: Path):
    """The discriminator handed in beside the model is kept but never run by the wrapper's inference entry."""
    wrapper = WRAPPER.replace("import torch.nn as nn\n", "import torch.nn as nn\n\nfrom . import Decoder, Discriminator\n")
    wrapper = wrapper.replace("def __init__(self, model, scale=1.0):", "def __init__(self, model, critic):").replace(
        "self.model = model\n", "self.model = model\n        self.critic = critic\n",
    )
    root = _project(tmp_path, {"voc/wrap.py": wrapper + """

def serve(x):
    wrapper = Wrapper(Decoder(), Discriminator())
    wrapper.eval()
    with torch.no_grad():
        return wrapper.decode(x)
""", "voc/__init__.py": "from .parts import Decoder, Discriminator\n"})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_a_class_a_hydra_config_names_is_what_instantiate_builds(tmp_path: Path):
    root = _project(tmp_path, {
        "configs/vocoder.yaml": "_target_: voc.parts.Decoder\nchannels: 4\n",
        "configs/train.yaml": "trainer:\n  _target_: lightning.Trainer\ncritic:\n  _target_: voc.parts.Discriminator\n",
        "voc/serve.py": """
            from hydra.utils import instantiate


            def load(cfg):
                model = instantiate(cfg)
                model.eval()
                return model
            """,
    })
    assert _wn110(root) == [("parts.py", DECODER_LINE)]  # the discriminator sits under ``critic:``, not at the top


def test_hydra_configs_beside_a_namespace_package_are_read_where_config_path_points(tmp_path: Path):
    """fish-speech: ``fish_speech/models`` has no ``__init__.py``, the configs sit in ``fish_speech/configs``."""
    base = tmp_path / "src" / "pkg"
    for name, text in {
        "models/voc/__init__.py": "",
        "models/voc/parts.py": PARTS,
        "configs/dac.yaml": "_target_: pkg.models.voc.parts.Decoder\n",
        "models/voc/inference.py": """
            from hydra import compose, initialize
            from hydra.utils import instantiate


            def load(name):
                with initialize(version_base="1.3", config_path="../../configs"):
                    cfg = compose(config_name=name)
                model = instantiate(cfg)
                model.eval()
                return model
            """,
    }.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    assert _wn110(base / "models") == [("parts.py", DECODER_LINE)]


def test_a_hyperpyyaml_entry_handed_to_a_model_is_served(tmp_path: Path):
    """CosyVoice: ``configs = load_hyperpyyaml(f)``, then ``Model(configs["hift"])`` keeps and evaluates it."""
    root = _project(tmp_path, {
        "voc/conf.yaml": "hift: !new:voc.parts.Decoder\n    channels: 4\nmpd: !new:voc.parts.Discriminator\n",
        "voc/wrap.py": WRAPPER,
        "voc/cli.py": """
            from hyperpyyaml import load_hyperpyyaml

            from .wrap import Wrapper


            def load(path):
                with open(path) as f:
                    configs = load_hyperpyyaml(f)
                return Wrapper(configs["hift"])
            """,
    })
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_weight_norm_a_factory_applies_by_calling_a_method_is_applied(tmp_path: Path):
    """``def WNConv1d(*args): return CausalConvNet(*args).weight_norm()``: the method runs when the factory builds."""
    root = _project(tmp_path, {"voc/conv.py": """
        import torch.nn as nn
        from torch.nn.utils.parametrizations import weight_norm


        class ConvNet(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv = nn.Conv1d(channels, channels, 3)

            def weight_norm(self):
                self.conv = weight_norm(self.conv)
                return self

            def forward(self, x):
                return self.conv(x)


        def WNConv1d(channels):
            return ConvNet(channels).weight_norm()


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = WNConv1d(4)

            def forward(self, x):
                return self.conv(x)


        def load():
            return Model().eval()
        """})
    assert _wn110(root) == [("conv.py", 11)]


def test_a_constructor_argument_from_a_config_that_ships_with_the_weights_is_any_class_of_its_type(tmp_path: Path):
    """vocos: ``backbone: Backbone`` is built from the checkpoint's config ``class_path`` (not in the tree):
    the candidates are the project's classes of that type."""
    root = _project(tmp_path, {
        "voc/models.py": """
            import torch.nn as nn
            from torch.nn.utils.parametrizations import weight_norm


            class Backbone(nn.Module):
                def forward(self, x):
                    raise NotImplementedError


            class ResNetBackbone(Backbone):
                def __init__(self):
                    super().__init__()
                    self.conv = weight_norm(nn.Conv1d(4, 4, 3, padding=1))

                def forward(self, x):
                    return self.conv(x)
            """,
        "voc/pretrained.py": """
            import importlib

            import torch
            import torch.nn as nn
            import yaml

            from .models import Backbone


            def instantiate_class(init):
                module, name = init["class_path"].rsplit(".", 1)
                return getattr(importlib.import_module(module), name)(**init.get("init_args", {}))


            class Vocos(nn.Module):
                def __init__(self, backbone: Backbone):
                    super().__init__()
                    self.backbone = backbone

                @classmethod
                def from_pretrained(cls, config_path, model_path):
                    with open(config_path) as f:
                        config = yaml.safe_load(f)
                    model = cls(backbone=instantiate_class(config["backbone"]))
                    model.load_state_dict(torch.load(model_path, weights_only=True))
                    model.eval()
                    return model

                def forward(self, x):
                    return self.backbone(x)
            """,
    })
    assert _wn110(root) == [("models.py", 13)]


def test_config_files_that_are_not_regular_files_are_never_read(tmp_path: Path):
    """A FIFO named like a config blocked the walk on open(); a link to /dev/zero read without end."""
    root = _project(tmp_path, {"configs/vocoder.yaml": "_target_: voc.parts.Decoder\n"})
    os.mkfifo(root / "configs" / "fifo.yaml")
    (root / "configs" / "zero.yaml").symlink_to("/dev/zero")
    (root / "configs" / "loop.yaml").symlink_to("loop.yaml")
    found: list[dict] = []
    worker = threading.Thread(target=lambda: found.append(config_targets(root)), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # unblock the open so that the test process can end
        with open(root / "configs" / "fifo.yaml", "w"):
            pass
        worker.join(5)
        raise AssertionError("config_targets blocked on a FIFO")
    assert found == [{"": {"voc.parts.Decoder"}}]


def test_a_yaml_file_that_names_no_class_is_not_scanned_line_by_line(tmp_path: Path, monkeypatch):
    """Every warm run reads the configs again: a data YAML of megabytes is a byte search, not a line scan."""
    from wnaudit.source.serving import configs

    root = _project(tmp_path, {"configs/vocoder.yaml": "_target_: voc.parts.Decoder\n", "data/meta.yaml": "key: value\n" * 1000})
    scanned: list[int] = []
    real = configs.scan
    monkeypatch.setattr(configs, "scan", lambda text, found: (scanned.append(len(text)), real(text, found)))
    assert config_targets(root) == {"": {"voc.parts.Decoder"}}
    assert scanned == [len("_target_: voc.parts.Decoder\n")]


def test_the_config_walk_is_bounded_where_config_path_names_a_whole_file_system(tmp_path: Path, monkeypatch):
    """``initialize(config_path="/")`` made WN110 walk the machine (every warm run again) until 2,000 YAML files."""
    from wnaudit.source.serving import configs

    monkeypatch.setattr(configs, "MAX_PROJECT_FILES", 50, raising=False)
    root = _project(tmp_path, {f"data/{n:03}.txt": "" for n in range(100)})
    (root / "zz").mkdir()
    (root / "zz" / "late.yaml").write_text("_target_: voc.parts.Decoder\n")
    assert config_targets(root) == {}


def test_a_class_fetched_from_a_module_by_a_string_is_served(tmp_path: Path):
    """``getattr(models, cfg.name)(**cfg.args)``: any class the module defines or imports; a constant name is that class."""
    root = _project(tmp_path, {
        "voc/models/__init__.py": "from ..parts import Decoder\n",
        "voc/serve.py": """
            import torch

            from . import models


            def load(cfg, path):
                model = getattr(models, cfg.name)(**cfg.args)
                model.load_state_dict(torch.load(path, weights_only=True))
                model.eval()
                return model
            """,
    })
    assert _wn110(root) == [("parts.py", DECODER_LINE)]  # the discriminator is not in ``models``


def test_a_constant_name_fetched_from_a_module_is_that_class(tmp_path: Path):
    root = _project(tmp_path, {"voc/serve.py": """
        from . import parts


        def load():
            return getattr(parts, "Discriminator")().eval()
        """})
    assert _wn110(root) == [("parts.py", DISCRIMINATOR_LINE)]


def test_getattr_on_something_that_is_not_a_module_chooses_nothing(tmp_path: Path):
    root = _project(tmp_path, {"voc/serve.py": """
        from .parts import Decoder


        class Holder:
            def __init__(self):
                self.decoder = Decoder()

            def load(self, name):
                return getattr(self, name)().eval()
        """})
    assert _wn110(root) == []


REGISTRY = """
import torch

VOCODERS = {}


def register(name):
    def wrap(cls):
        VOCODERS[name] = cls
        return cls
    return wrap


def build(name, path):
    model = VOCODERS[name]()
    model.load_state_dict(torch.load(path, weights_only=True))
    return model.eval()
"""


def test_a_class_a_registry_decorator_stores_in_another_module_is_served(tmp_path: Path):
    """``@register("hifigan") class HiFiGAN`` in one module, ``VOCODERS[name]()`` in the registry's: the loader
    names neither the class nor its module, so the search for the class's name alone never reaches it."""
    root = _project(tmp_path, {
        "voc/registry.py": REGISTRY,
        "voc/hifigan.py": """
            import torch.nn as nn
            from torch.nn.utils.parametrizations import weight_norm

            from .registry import register


            @register("hifigan")
            class HiFiGAN(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = weight_norm(nn.Conv1d(4, 1, 3, padding=1))

                def forward(self, x):
                    return self.conv(x)
            """,
    })
    assert _wn110(root) == [("hifigan.py", 11)]


def test_a_registry_built_from_in_another_module_and_a_module_level_store(tmp_path: Path):
    """``VOCODERS["dec"] = Decoder`` where the table lives, ``VOCODERS.get(name)()`` in a module importing it."""
    root = _project(tmp_path, {
        "voc/registry.py": 'from .parts import Decoder\n\nVOCODERS = {}\nVOCODERS["dec"] = Decoder\n',
        "voc/serve.py": """
            from .registry import VOCODERS


            def build(name):
                return VOCODERS.get(name)().eval()
            """,
    })
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_a_class_registered_by_calling_the_decorator_is_served(tmp_path: Path):
    """``register("dec")(Decoder)`` at module level: the decorator applied by hand."""
    root = _project(tmp_path, {
        "voc/registry.py": REGISTRY,
        "voc/setup.py": 'from .parts import Decoder\nfrom .registry import register\n\nregister("dec")(Decoder)\n',
    })
    assert _wn110(root) == [("parts.py", DECODER_LINE)]
