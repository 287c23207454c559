"""Weight norm a model applies and that nothing on its inference path ever folds: WN110.

The costliest form of the bug is no removal at all: a vocoder built with
weight norm on every convolution and served that way recomputes every norm
on every call.  The rule follows the project (``serving/index.py``): the
class that applies weight norm, the classes and loaders that build it, the
code that puts one of them in eval mode, runs it under ``inference_mode`` /
``no_grad``, freezes, compiles, scripts, traces or exports it, and any fold on
the way (a removal method something calls, a remover, ``wnaudit.fold*``,
``parametrize.cached()``, an ONNX export).  Training code (a function with an
optimizer, ``backward()`` or ``train()``) and tests are not serving paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from ...common.findings import Applicability, Severity
from ..facts.kinds import SERVED, ServedAt, Verdict
from ..model import FileSummary
from . import _selection_examples as selection
from .base import LOCAL_FOLD, LOCAL_FOLD_TEXT, WEIGHT_NORM, Candidate, Insertion, Invalid, Rule, Site, Valid

if TYPE_CHECKING:
    from ..context import Context

_HEADER = "import torch\nimport torch.nn as nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\n\n"
_GENERATOR = (
    "class Generator(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = weight_norm(nn.Conv1d(80, 1, 7, padding=3))\n\n"
    "    def forward(self, x):\n"
    "        return self.conv(x)\n"
)
_DISCRIMINATOR = (
    "class Discriminator(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = weight_norm(nn.Conv1d(1, 1, 3, padding=1))\n\n"
    "    def forward(self, audio):\n"
    "        return self.conv(audio)\n"
)
#: A block that folds its own conv; the classes below decide whether anything calls that.
_BLOCK = (
    "class Block(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = weight_norm(nn.Conv1d(4, 4, 3, padding=1))\n\n"
    "    def forward(self, x):\n"
    "        return self.conv(x)\n\n"
    "    def remove_weight_norm(self):\n"
    "        torch.nn.utils.parametrize.remove_parametrizations(self.conv, \"weight\")\n\n\n"
)
_BLOCKS = _BLOCK + (
    "class Vocoder(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.blocks = nn.ModuleList([Block(), Block()])\n\n"
    "    def forward(self, x):\n"
    "        for block in self.blocks:\n"
    "            x = block(x)\n"
    "        return x\n\n"
    "    def remove_weight_norm(self):\n"
    "        for block in self.blocks:\n"
    "            block.remove_weight_norm()\n"
)
_CHAIN = _BLOCK + (
    "class Vocoder(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.block = Block()\n\n"
    "    def forward(self, x):\n"
    "        return self.block(x)\n\n"
    "    def remove_weight_norm(self):\n"
    "        self.block.remove_weight_norm()\n\n\n"
)
#: A mapping of parts: a ``Munch`` of parts a factory builds, every part put in eval mode by the loader.
_PARTS = (
    "def build_model():\n"
    "    return Munch(decoder=Generator(), mpd=Discriminator())\n\n\n"
    "def load():\n"
    "    model = build_model()\n"
    "    _ = [model[key].eval() for key in model]\n"
    "    return model\n\n\n"
    "class Server:\n"
    "    def __init__(self):\n"
    "        self.model = load()\n\n"
    "    @torch.no_grad()\n"
    "    def __call__(self, mel):\n"
)
#: Why a model built bare takes no fix where its weights come in after, outside that scope (``serving/fold_point.py``).
_NO_FIX = "; no fix offered: {why}"
_FIXED_HEADER = _HEADER + LOCAL_FOLD_TEXT + "\n\n"
_REMOVAL_METHOD = (
    "\n    def remove_weight_norm(self):\n"
    "        torch.nn.utils.parametrize.remove_parametrizations(self.conv, \"weight\")\n"
)

#: A training loop that folds the model it trained (for export): the fold reaches only that object.
_TRAIN_AND_FOLD = (
    "def train(model, batches):\n"
    "    optimizer = torch.optim.AdamW(model.parameters())\n"
    "    for mel, audio in batches:\n"
    "        (model(mel) - audio).abs().mean().backward()\n"
    "        optimizer.step()\n"
    "    model.remove_weight_norm()\n"
)
#: A registry its decorator fills, and a loader that builds a class from it by name (shape d).
_REGISTRY = (
    "VOCODERS = {}\n\n\n"
    "def register(name):\n"
    "    def wrap(cls):\n"
    "        VOCODERS[name] = cls\n"
    "        return cls\n"
    "    return wrap\n\n\n"
)
_BUILD = (
    "def build(name, path):\n"
    "    model = VOCODERS[name]()\n"
    "    model.load_state_dict(torch.load(path, weights_only=True))\n"
    "    model.eval()\n"
    "    return model\n"
)
#: A training function that folds its own model before saving it: the fold reaches only that copy.
_FIT_AND_FOLD = (
    "def fit(batches):\n"
    "    model = Generator()\n"
    "    optimizer = torch.optim.AdamW(model.parameters())\n"
    "    for mel, audio in batches:\n"
    "        (model(mel) - audio).abs().mean().backward()\n"
    "        optimizer.step()\n"
    "    torch.nn.utils.parametrize.remove_parametrizations(model.conv, \"weight\")\n"
    "    torch.save(model.state_dict(), \"generator.pt\")\n"
)
#: A loader that builds, loads and evaluates the model it serves.
_SERVE = (
    "def serve(path, mel):\n"
    "    model = Generator()\n"
    "    model.load_state_dict(torch.load(path, weights_only=True))\n"
    "    model.eval()\n"
    "    with torch.no_grad():\n"
    "        return model(mel)\n"
)


def _verdicts_of(context: Context) -> Callable[[ServedAt], Verdict | None]:
    """WN110's verdicts from the project model, prepared for every start of the run at once (one walk of the project)."""
    model = context.model()
    model.prepare((f, u) for s in context.summaries for f, u, _ in _starts(s))

    def verdict_of(ask: ServedAt) -> Verdict | None:
        return model.verdict(Path(ask.file), ask.unit, ask.line)

    return verdict_of


def _starts(summary: FileSummary) -> list[tuple[Path, str, int]]:
    """(file, unit, index) of each weight-norm application the file makes inside a class or function."""
    file = Path(summary.file or summary.path)
    return [
        (file, a.site.unit, i) for i, a in enumerate(summary.applications)
        if a.kind == WEIGHT_NORM and a.site.unit != summary.module
    ]


class NeverFoldedWeightNorm(Rule):
    code = "WN110"
    title = "weight norm applied and never folded on an inference path"
    severity = Severity.WARNING
    applicability = Applicability.UNSAFE
    project_wide = True
    VALID = (
        # Used only by training code: the eval() is a validation step.
        Valid(
            _HEADER + _GENERATOR + "\n\n"
            "def train(batches):\n"
            "    model = Generator()\n"
            "    optimizer = torch.optim.AdamW(model.parameters())\n"
            "    for mel, audio in batches:\n"
            "        loss = (model(mel) - audio).abs().mean()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    model.eval()\n"
        ),
        # The removal method exists and the serving path calls it.
        Valid(
            _HEADER + _GENERATOR + _REMOVAL_METHOD + "\n\n"
            "def serve(mel):\n"
            "    model = Generator()\n"
            "    model.remove_weight_norm()\n"
            "    model.eval()\n"
            "    with torch.inference_mode():\n"
            "        return model(mel)\n"
        ),
        # Folded through a project helper that loops over ``modules()``, tolerating
        # modules without weight norm.
        Valid(
            _HEADER + _GENERATOR + "\n\n"
            "def remove_weight_norm_recursively(model):\n"
            "    for m in model.modules():\n"
            "        try:\n"
            "            torch.nn.utils.parametrize.remove_parametrizations(m, \"weight\")\n"
            "        except ValueError:\n"
            "            pass\n\n\n"
            "def inference(path):\n"
            "    model = Generator()\n"
            "    model.load_state_dict(torch.load(path, weights_only=True))\n"
            "    model = model.eval()\n"
            "    remove_weight_norm_recursively(model)\n"
            "    return model\n"
        ),
        # Shape a: each module handed to a helper that removes a ``WeightNorm`` hook it finds.
        Valid(
            _HEADER.replace("parametrizations import weight_norm", "weight_norm import WeightNorm, weight_norm")
            + _GENERATOR + "\n\n"
            "def remove_weight_norm_if_exists(module, name=\"weight\"):\n"
            "    for k, hook in module._forward_pre_hooks.items():\n"
            "        if isinstance(hook, WeightNorm) and hook.name == name:\n"
            "            hook.remove(module)\n"
            "            del module._forward_pre_hooks[k]\n"
            "            return module\n\n\n"
            "def load(path):\n"
            "    net_g = Generator()\n"
            "    net_g.eval()\n"
            "    for m in net_g.modules():\n"
            "        remove_weight_norm_if_exists(m)\n"
            "    return net_g\n"
        ),
        # Shape b: the model's removal method calls each block's, and the loader calls the model's.
        Valid(
            _HEADER + _BLOCKS + "\n\n"
            "def load():\n"
            "    vocoder = Vocoder()\n"
            "    vocoder.remove_weight_norm()\n"
            "    return vocoder.eval()\n"
        ),
        # Shape c: the discriminators sit in the eval()'d training module, but inference runs only the generator
        # (which it folds): they never execute at inference.
        Valid(
            _HEADER + _DISCRIMINATOR + "\n\n" + _GENERATOR + _REMOVAL_METHOD + "\n\n"
            "class GanModule(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.model_g = Generator()\n"
            "        self.model_d = Discriminator()\n\n"
            "    def forward(self, mel):\n"
            "        return self.model_g(mel)\n\n"
            "    def training_step(self, mel, audio):\n"
            "        return self.model_d(self(mel)) - self.model_d(audio)\n\n\n"
            "def main(path, mel):\n"
            "    model = GanModule()\n"
            "    model.load_state_dict(torch.load(path, weights_only=True))\n"
            "    model.eval()\n"
            "    model.model_g.remove_weight_norm()\n"
            "    with torch.no_grad():\n"
            "        return model(mel)\n"
        ),
        # The module's own ``__main__`` smoke test of a class it defines is test code, not an inference path.
        Valid(
            _HEADER + _GENERATOR + "\n\n"
            "def main():\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    with torch.no_grad():\n"
            "        print(model(torch.randn(1, 80, 10)).shape)\n\n\n"
            "if __name__ == \"__main__\":\n"
            "    main()\n"
        ),
        # Shape d: the one weight-normed part of the mapping is a discriminator the serving code never reads.
        Valid(
            _HEADER.replace("import torch\n", "import torch\nfrom munch import Munch\n") + _DISCRIMINATOR + "\n\n"
            + _PARTS.replace("Generator()", "nn.Conv1d(80, 1, 7, padding=3)")
            + "        return self.model.decoder(mel)\n"
        ),
        # Folded once after loading.
        Valid(
            _HEADER + "import wnaudit\n\n\n" + _GENERATOR + "\n\n"
            "def load(path):\n"
            "    model = Generator()\n"
            "    model.load_state_dict(torch.load(path, weights_only=True))\n"
            "    wnaudit.fold_weight_norm(model)\n"
            "    return model.eval()\n"
        ),
        # A training function that folds the model it is given: the caller serves that same object, folded.
        Valid(
            _HEADER + _GENERATOR + _REMOVAL_METHOD + "\n\n" + _TRAIN_AND_FOLD + "\n\n"
            "def main(batches, mel):\n"
            "    model = Generator()\n"
            "    train(model, batches)\n"
            "    model.eval()\n"
            "    with torch.no_grad():\n"
            "        return model(mel)\n"
        ),
        # Shape d: a library base's ``from_pretrained`` evaluates the model, but the class overrides it to fold.
        Valid(
            _HEADER + "from huggingface_hub import PyTorchModelHubMixin\n\n\n"
            + _GENERATOR.replace("(nn.Module)", "(nn.Module, PyTorchModelHubMixin)") + _REMOVAL_METHOD + "\n"
            "    @classmethod\n"
            "    def from_pretrained(cls, *args, **kwargs):\n"
            "        model = super().from_pretrained(*args, **kwargs)\n"
            "        model.remove_weight_norm()\n"
            "        return model\n"
        ),
        # Shape d: the package folds what the inherited ``from_pretrained`` returns.
        Valid(
            _HEADER + "from huggingface_hub import PyTorchModelHubMixin\n\n\n"
            + _GENERATOR.replace("(nn.Module)", "(nn.Module, PyTorchModelHubMixin)") + _REMOVAL_METHOD + "\n\n"
            "def load(repo):\n"
            "    model = Generator.from_pretrained(repo)\n"
            "    model.remove_weight_norm()\n"
            "    return model\n"
        ),
        # Shape d: the registry the loader builds from holds only classes without weight norm.
        Valid(
            _HEADER + _REGISTRY + "@register(\"plain\")\nclass Plain(nn.Module):\n    pass\n\n\n"
            + _GENERATOR + "\n\n" + _BUILD
        ),
        # Weight norm a constructor parameter guards, which no construction selects.
        *selection.VALID,
    )
    INVALID = (
        # A removal nothing runs: the block's removal is called only from the vocoder's, which nothing calls.
        Invalid(
            _HEADER + _CHAIN + "def load(path):\n"
            "    vocoder = Vocoder()\n"
            "    vocoder.load_state_dict(torch.load(path, weights_only=True))\n"
            "    vocoder.eval()\n"
            "    return vocoder\n",
            _FIXED_HEADER + _CHAIN + "def load(path):\n"
            "    vocoder = Vocoder()\n"
            "    vocoder.load_state_dict(torch.load(path, weights_only=True))\n"
            "    vocoder.eval()\n"
            "    _fold_weight_norm_for_inference(vocoder)\n"
            "    return vocoder\n",
        ),
        # A fold that runs only in training code folds the training copy: the serving path builds and loads
        # another model, which nothing folds (the message names the training function).
        Invalid(
            _HEADER + _GENERATOR + _REMOVAL_METHOD + "\n\n" + _FIT_AND_FOLD + "\n\n" + _SERVE,
            _HEADER + _GENERATOR + _REMOVAL_METHOD + "\n\n" + _FIT_AND_FOLD + "\n\n" + _SERVE.replace(
                "    model.eval()\n", "    model.eval()\n    model.remove_weight_norm()\n"
            ),
        ),
        # Shape d: a class whose library base (transformers' ``PreTrainedModel``, diffusers' ``ModelMixin``,
        # ``PyTorchModelHubMixin``) loads it with an inherited ``from_pretrained`` that calls ``eval()``: an inference
        # entry point of the package, though the package never calls it.  The load is library code: no fix.
        Invalid(
            _HEADER + "from transformers import PreTrainedModel\n\n\n"
            + _GENERATOR.replace("(nn.Module)", "(PreTrainedModel)"),
            expected_replacement=None,
        ),
        # Shape d: a class a registry's decorator stores, built by name from the registry (``VOCODERS[name]()``).
        Invalid(
            _HEADER + _REGISTRY + "@register(\"hifigan\")\n" + _GENERATOR + "\n\n" + _BUILD,
            _FIXED_HEADER + _REGISTRY + "@register(\"hifigan\")\n" + _GENERATOR + "\n\n"
            + _BUILD.replace("    model.eval()\n", "    model.eval()\n    _fold_weight_norm_for_inference(model)\n"),
        ),
        # The removal method exists but nothing calls it: the fix calls it (it folds all the model holds).
        Invalid(
            _HEADER + _GENERATOR + _REMOVAL_METHOD + "\n\n"
            "def serve(mel):\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    with torch.inference_mode():\n"
            "        return model(mel)\n",
            _HEADER + _GENERATOR + _REMOVAL_METHOD + "\n\n"
            "def serve(mel):\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    model.remove_weight_norm()\n"
            "    with torch.inference_mode():\n"
            "        return model(mel)\n",
        ),
        # A from_pretrained-style loader that puts the model in eval mode, with no fold anywhere.
        Invalid(
            _HEADER
            + "class PretrainedVocoder(nn.Module):\n"
            "    @classmethod\n"
            "    def from_pretrained(cls, path):\n"
            "        model = cls()\n"
            "        model.load_state_dict(torch.load(path, weights_only=True))\n"
            "        model.eval()\n"
            "        return model\n\n\n"
            + _GENERATOR.replace("class Generator(nn.Module)", "class Generator(PretrainedVocoder)"),
            _FIXED_HEADER
            + "class PretrainedVocoder(nn.Module):\n"
            "    @classmethod\n"
            "    def from_pretrained(cls, path):\n"
            "        model = cls()\n"
            "        model.load_state_dict(torch.load(path, weights_only=True))\n"
            "        model.eval()\n"
            "        _fold_weight_norm_for_inference(model)\n"
            "        return model\n\n\n"
            + _GENERATOR.replace("class Generator(nn.Module)", "class Generator(PretrainedVocoder)"),
        ),
        # Run under no_grad by a serving class that loads the weights where it builds the model: folded after the load.
        Invalid(
            _HEADER + _GENERATOR + "\n\n"
            "class Server:\n"
            "    def __init__(self, path):\n"
            "        self.vocoder = Generator().to(\"cpu\")\n"
            "        self.vocoder.load_state_dict(torch.load(path, weights_only=True))\n\n"
            "    @torch.no_grad()\n"
            "    def __call__(self, mel):\n"
            "        return self.vocoder(mel)\n",
            _FIXED_HEADER + _GENERATOR + "\n\n"
            "class Server:\n"
            "    def __init__(self, path):\n"
            "        self.vocoder = Generator().to(\"cpu\")\n"
            "        self.vocoder.load_state_dict(torch.load(path, weights_only=True))\n"
            "        _fold_weight_norm_for_inference(self.vocoder)\n\n"
            "    @torch.no_grad()\n"
            "    def __call__(self, mel):\n"
            "        return self.vocoder(mel)\n",
        ),
        # Built bare in ``__init__``, its weights loaded elsewhere: no point there has them in, so no fix is offered.
        Invalid(
            _HEADER + _GENERATOR + "\n\n"
            "class Server:\n"
            "    def __init__(self):\n"
            "        self.vocoder = Generator().to(\"cpu\")\n\n"
            "    @torch.no_grad()\n"
            "    def __call__(self, mel):\n"
            "        return self.vocoder(mel)\n"
        ),
        # Built bare and returned for the caller to load: a fold in the builder would come before the load, so no fix.
        Invalid(
            _HEADER + _GENERATOR + "\n\n"
            "def build():\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    return model\n\n\n"
            "def serve(path, mel):\n"
            "    model = build()\n"
            "    model.load_state_dict(torch.load(path, weights_only=True))\n"
            "    with torch.no_grad():\n"
            "        return model(mel)\n"
        ),
        # Loaded by a loader in the same block, after the eval(): folded after the load (it would miss the keys).
        Invalid(
            _HEADER + _GENERATOR + "\n\n"
            "def load(path):\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    load_checkpoint(model, path)\n"
            "    return model\n",
            _FIXED_HEADER + _GENERATOR + "\n\n"
            "def load(path):\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    load_checkpoint(model, path)\n"
            "    _fold_weight_norm_for_inference(model)\n"
            "    return model\n",
        ),
        # The function the ``__main__`` block runs also serves requests: an inference path.
        Invalid(
            _HEADER + _GENERATOR + "\n\n"
            "def synthesize(mel):\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    return model(mel)\n\n\n"
            "def handle(request):\n"
            "    return synthesize(request)\n\n\n"
            "if __name__ == \"__main__\":\n"
            "    synthesize(torch.randn(1, 80, 10))\n",
            _FIXED_HEADER + _GENERATOR + "\n\n"
            "def synthesize(mel):\n"
            "    model = Generator()\n"
            "    model.eval()\n"
            "    _fold_weight_norm_for_inference(model)\n"
            "    return model(mel)\n\n\n"
            "def handle(request):\n"
            "    return synthesize(request)\n\n\n"
            "if __name__ == \"__main__\":\n"
            "    synthesize(torch.randn(1, 80, 10))\n",
        ),
        # Shape d: a ``Munch`` of parts, all put in eval mode; inference reads the decoder (the discriminator it never
        # reads is not served): the fold names that part.
        Invalid(
            _HEADER.replace("import torch\n", "import torch\nfrom munch import Munch\n") + _GENERATOR + "\n\n"
            + _DISCRIMINATOR + "\n\n" + _PARTS + "        return self.model.decoder(mel)\n",
            _FIXED_HEADER.replace("import torch\n", "import torch\nfrom munch import Munch\n") + _GENERATOR + "\n\n"
            + _DISCRIMINATOR + "\n\n"
            + _PARTS.replace("for key in model]\n", "for key in model]\n    _fold_weight_norm_for_inference(model[\"decoder\"])\n")
            + "        return self.model.decoder(mel)\n",
        ),
        # Shape d: the class is chosen from a table by a version string.
        Invalid(
            _HEADER + _GENERATOR + "\n\n"
            "def load(version):\n"
            "    model = {\"v1\": Generator}[version]()\n"
            "    model.eval()\n"
            "    return model\n",
            _FIXED_HEADER + _GENERATOR + "\n\n"
            "def load(version):\n"
            "    model = {\"v1\": Generator}[version]()\n"
            "    model.eval()\n"
            "    _fold_weight_norm_for_inference(model)\n"
            "    return model\n",
        ),
        # Compiled for serving: folded before the capture.
        Invalid(
            _HEADER + _GENERATOR + "\n\n"
            "def compiled():\n"
            "    model = Generator()\n"
            "    return torch.compile(model)\n",
            _FIXED_HEADER + _GENERATOR + "\n\n"
            "def compiled():\n"
            "    model = Generator()\n"
            "    _fold_weight_norm_for_inference(model)\n"
            "    return torch.compile(model)\n",
        ),
        *selection.INVALID,
    )

    def check(self, summary: FileSummary, context: Context) -> Iterator[Candidate]:
        starts = _starts(summary)
        if not starts:
            return
        facts = context.workspace.facts
        asks = [ServedAt(str(file), unit, summary.applications[position].site.line) for file, unit, position in starts]
        verdict_of: Callable[[ServedAt], Verdict | None] | None = None  # every verdict known: nothing to compute
        if not all(facts.has(SERVED, ask) for ask in asks):  # the model reads the project once for every start of the run
            verdict_of = _verdicts_of(context)
        for ask, (_, _, position) in zip(asks, starts):
            verdict = facts.get(SERVED, ask, verdict_of)
            if verdict is None:
                continue
            site = summary.applications[position].site
            # One finding per inference site no fold covers: the fix folds at each (none stays live behind the first).
            for each in verdict.all_sites():
                yield self._candidate(site, each, context.workspace.settings.fix_fold)

    def _candidate(self, site: Site, verdict: Verdict, choice: str) -> Candidate:
        """The finding at the application for one inference site, with the fold the fix adds there."""
        statement, module, local, said = _fold(verdict, choice)
        if verdict.no_fold:
            return Candidate(self.code, site, _message(verdict, said) + _NO_FIX.format(why=verdict.no_fold), None)
        insert = Insertion(
            file=verdict.file, line=verdict.line, statement=statement, module=module,
            placement="after" if verdict.kind == "mode" else "before", target=verdict.target, local=local,
        )
        return Candidate(self.code, site, _message(verdict, said), None, insert)


def _fold(verdict: Verdict, choice: str) -> tuple[str, str, bool, str]:
    """The fold the fix adds: its statement, the module it imports, whether it is the local fold, its words."""
    return fold_statement(verdict.target, choice, imported=verdict.imported, method=verdict.method)


def fold_statement(target: str, choice: str, *, imported: bool, method: str = "") -> tuple[str, str, bool, str]:
    """The statement that folds ``target``, the module it imports, whether it is the local fold, its words.

    The model's own removal ``method`` when it folds all of it; else a fix adds no
    dependency: ``wnaudit.fold_weight_norm`` only where the project already
    imports wnaudit (``imported``) or ``fix-fold = "wnaudit"`` asks for it, the
    local fold otherwise.  WN110's fix and ``wnaudit probe --fix`` both write this.
    """
    if method:
        statement = f"{target}.{method}()"
        return statement, "", False, f"`{statement}`"
    if choice == "wnaudit" or (choice == "auto" and imported):
        statement = f"wnaudit.fold_weight_norm({target})"
        return statement, "wnaudit", False, f"`{statement}`"
    return f"{LOCAL_FOLD}({target})", "", True, f"a local fold, `{LOCAL_FOLD}({target})` (torch only)"


def _message(verdict: Verdict, fold: str) -> str:
    text = f"weight norm applied here stays live at `{verdict.where}` ({verdict.what})"
    if verdict.why:
        text += f"; {verdict.why}"
    elif verdict.uncalled:
        text += f"; `{verdict.uncalled}` exists but nothing calls it"
    if verdict.kind == "capture":
        text += "; the exported or compiled artifact (torch.export program, AOTInductor package, torch.compile) keeps computing the norm on every call"
    return text + f"; fold once after loading with {fold}"
