"""WN110 follows construction further (issue 35, item 5): a class chosen into a local name by a registry lookup or
``getattr`` (in a factory too), models kept in dicts filled by item assignment, and the project's own type checks
(``isinstance(configs["hift"], HiFTGenerator)``) on a config the package does not ship."""

from __future__ import annotations

from pathlib import Path

from tests.source.test_serving_containers import DECODER_LINE, REGISTRY, _project, _wn110
from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files

#: The registry of issue 35: a decorator fills it (``test_serving_containers.REGISTRY``'s), a factory in the same
#: module looks the class up and builds it; nothing in the module serves it.
REGISTRY_FACTORY = REGISTRY.split("\n\ndef build")[0] + """

import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


@register("G")
class G(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(channels, 1, 3, padding=1))

    def forward(self, x):
        return self.conv(x)


def build(cfg):
    cls = VOCODERS[cfg["type"]]
    return cls(**cfg.get("args", {}))
"""

G_LINE = REGISTRY_FACTORY.lstrip().splitlines().index("        self.conv = weight_norm(nn.Conv1d(channels, 1, 3, padding=1))") + 1


def test_a_registry_lookup_in_a_factory_function_is_followed(tmp_path: Path):
    """Issue 35's reproduction: ``All checks passed!`` before, though the same lookup in the serving function was found."""
    root = _project(tmp_path, {
        "voc/registry.py": REGISTRY_FACTORY,
        "voc/serve.py": 'from .registry import build\n\nmodel = build({"type": "G"})\nmodel.eval()\n',
    })
    assert _wn110(root) == [("registry.py", G_LINE)]


def test_a_class_chosen_into_a_local_name_from_a_table_is_built(tmp_path: Path):
    root = _project(tmp_path, {"voc/serve.py": """
        from .parts import Decoder, Discriminator

        MODELS = {"dec": Decoder, "disc": Discriminator}


        def load(name):
            cls = MODELS[name]
            model = cls()
            return model.eval()
        """})
    assert _wn110(root) == [("parts.py", DECODER_LINE), ("parts.py", 17)]


def test_a_class_fetched_into_a_local_name_by_getattr_is_built(tmp_path: Path):
    root = _project(tmp_path, {"voc/serve.py": """
        from . import parts


        def load(cfg):
            cls = getattr(parts, cfg.model)
            return cls().eval()
        """})
    assert ("parts.py", DECODER_LINE) in _wn110(root)


def test_a_local_name_bound_to_something_else_builds_nothing(tmp_path: Path):
    """``cls = pick(name)``, a function returning a model: calling what it returns runs the model, it builds no
    class; only a lookup in a table or ``getattr`` chooses one. Precision first."""
    root = _project(tmp_path, {"voc/serve.py": """
        from .parts import Decoder


        def pick(name):
            return Decoder()


        def load(name):
            cls = pick(name)
            return cls().eval()
        """})
    assert _wn110(root) == []


KEPT_IN_DICT = """
import torch

from .parts import Decoder, Discriminator


class Engine:
    def __init__(self, path):
        self.models = {}
        self.models["hift"] = Decoder()
        self.models["disc"] = Discriminator()
        self.models["hift"].load_state_dict(torch.load(path))
        self.models["hift"].eval()

    def synth(self, mel):
        with torch.no_grad():
            return self.models["hift"](mel)
"""


def test_a_model_kept_in_a_dict_by_item_assignment_is_served(tmp_path: Path):
    """``self.models["hift"] = HiFT(...)``, later ``.eval()`` and served: the entry read is served, not the others."""
    root = _project(tmp_path, {"voc/serve.py": KEPT_IN_DICT})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]
    result = lint_files(sorted(root.rglob("*.py")), RunOptions(unsafe_fixes=True))
    (finding,) = result.findings
    assert finding.fixable  # the fold goes after the load in ``__init__``
    assert "_fold_weight_norm_for_inference(self.models['hift'])" in finding.message


def test_a_model_kept_in_a_local_dict_is_served(tmp_path: Path):
    root = _project(tmp_path, {"voc/serve.py": """
        from .parts import Decoder


        def load():
            models = {}
            models["hift"] = Decoder()
            models["hift"].eval()
            return models
        """})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_a_dict_entry_built_bare_in_init_and_loaded_elsewhere_gets_no_fix(tmp_path: Path):
    """The entry is built without its weights in ``__init__``: a fold there would come before the load."""
    served = KEPT_IN_DICT.replace('        self.models["hift"].load_state_dict(torch.load(path))\n', "")
    root = _project(tmp_path, {"voc/serve.py": served})
    result = lint_files(sorted(root.rglob("*.py")), RunOptions(unsafe_fixes=True))
    (finding,) = [f for f in result.findings if f.code == "WN110"]
    assert not finding.fixable and "`__init__` builds `self.models['hift']` without its weights" in finding.message


#: cosyvoice-minicpmo 0.1.0's shape: the HiFT comes from a YAML file downloaded with the weights; the package's own
#: ``get_model_type`` checks ``isinstance(configs['hift'], HiFTGenerator)``, and the model class keeps the module it
#: is given and later calls ``self.hift.to(self.device).eval()``.
TYPE_CHECK = """
from .parts import Decoder


def get_model_type(configs):
    if isinstance(configs['hift'], Decoder):
        return "v1"
    return "v2"
"""

SHIPPED_WITH_WEIGHTS = """
import torch
from hyperpyyaml import load_hyperpyyaml

from .checks import get_model_type


class Model:
    def __init__(self, flow, hift):
        self.flow = flow
        self.hift = hift

    def load(self, path):
        self.hift.load_state_dict(torch.load(path))
        self.hift.to("cpu").eval()


class TTS:
    def __init__(self, model_dir):
        with open(f"{model_dir}/tts.yaml") as f:
            configs = load_hyperpyyaml(f)
        assert get_model_type(configs) == "v1"
        self.model = Model(configs['flow'], configs['hift'])
        self.model.load(f"{model_dir}/hift.pt")
"""


def test_an_isinstance_check_types_an_entry_of_a_config_not_shipped(tmp_path: Path):
    """Issue 35: the seeds' own package, WN110 silent before."""
    root = _project(tmp_path, {"voc/checks.py": TYPE_CHECK, "voc/tts.py": SHIPPED_WITH_WEIGHTS})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_without_the_type_check_a_config_not_shipped_builds_nothing_known(tmp_path: Path):
    checks = TYPE_CHECK.replace("isinstance(configs['hift'], Decoder)", "configs['hift'] is not None")
    root = _project(tmp_path, {"voc/checks.py": checks, "voc/tts.py": SHIPPED_WITH_WEIGHTS})
    assert _wn110(root) == []


def test_a_type_check_on_another_key_types_nothing_here(tmp_path: Path):
    checks = TYPE_CHECK.replace("configs['hift']", "configs['flow2']")
    root = _project(tmp_path, {"voc/checks.py": checks, "voc/tts.py": SHIPPED_WITH_WEIGHTS})
    assert _wn110(root) == []


def test_an_annotation_of_the_parameter_kept_types_an_entry_of_a_config_not_shipped(tmp_path: Path):
    """``def __init__(self, flow, hift: HiFT)``: the annotation narrows what the downloaded config gives."""
    checks = TYPE_CHECK.replace("isinstance(configs['hift'], Decoder)", "configs['hift'] is not None")
    typed = SHIPPED_WITH_WEIGHTS.replace("def __init__(self, flow, hift):", "def __init__(self, flow, hift: Decoder):").replace(
        "from .checks import get_model_type\n", "from .checks import get_model_type\nfrom .parts import Decoder\n"
    )
    root = _project(tmp_path, {"voc/checks.py": checks, "voc/tts.py": typed})
    assert _wn110(root) == [("parts.py", DECODER_LINE)]


def test_an_attribute_annotation_types_what_a_config_not_shipped_gives(tmp_path: Path):
    """``hift: HiFT`` in the class body, or ``self.hift: HiFT = hift``: the attribute holds one, whatever builds it."""
    checks = TYPE_CHECK.replace("isinstance(configs['hift'], Decoder)", "configs['hift'] is not None")
    imports = "from .checks import get_model_type\nfrom .parts import Decoder\n"
    in_body = SHIPPED_WITH_WEIGHTS.replace("class Model:\n", "class Model:\n    hift: Decoder\n\n")
    in_init = SHIPPED_WITH_WEIGHTS.replace("        self.hift = hift\n", "        self.hift: Decoder = hift\n")
    for name, tts in (("body", in_body), ("init", in_init)):
        root = _project(tmp_path / name, {"voc/checks.py": checks, "voc/tts.py": tts.replace("from .checks import get_model_type\n", imports)})
        assert _wn110(root) == [("parts.py", DECODER_LINE)], name
    untyped = SHIPPED_WITH_WEIGHTS.replace("from .checks import get_model_type\n", imports)
    assert _wn110(_project(tmp_path / "none", {"voc/checks.py": checks, "voc/tts.py": untyped})) == []
