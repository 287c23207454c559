"""The single catalogue of reparametrization spellings.

Every other part of wnaudit (source rules, module inspector, checkpoint reader,
fold) asks this module which API paths, hook classes and state-dict key patterns
exist.  Nothing else hard-codes an API path or a key name, so supporting a new
spelling is a change here and nowhere else.

This module must never import torch: the source lint and the pre-commit hook
read it on machines without torch.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class Kind(enum.Enum):
    """What a reparametrization computes."""

    WEIGHT_NORM = "weight norm"
    SPECTRAL_NORM = "spectral norm"
    OTHER = "parametrization"


class Style(enum.Enum):
    """How torch applies it: a parametrization (modern) or a forward-pre-hook (legacy)."""

    MODERN = "modern"
    LEGACY = "legacy"


@dataclass(frozen=True)
class Spelling:
    """One way torch spells a reparametrization, with every name wnaudit matches on."""

    kind: Kind
    style: Style
    #: Qualified names of the functions that apply it (all public aliases).
    apply_apis: tuple[str, ...]
    #: Qualified names of the functions that remove it.
    remove_apis: tuple[str, ...]
    #: Qualified name of the hook class (legacy) or parametrization class (modern).
    implementation: str
    #: Finding code when found live in a module.
    module_code: str
    #: Finding code when found stored unfolded in a checkpoint (None: not reported).
    checkpoint_code: str | None

    @property
    def label(self) -> str:
        return f"{self.kind.value} ({self.style.value})"


WEIGHT_NORM_MODERN = Spelling(
    kind=Kind.WEIGHT_NORM,
    style=Style.MODERN,
    apply_apis=("torch.nn.utils.parametrizations.weight_norm",),
    remove_apis=("torch.nn.utils.parametrize.remove_parametrizations",),
    implementation="torch.nn.utils.parametrizations._WeightNorm",
    module_code="WN201",
    checkpoint_code="WN301",
)

WEIGHT_NORM_LEGACY = Spelling(
    kind=Kind.WEIGHT_NORM,
    style=Style.LEGACY,
    apply_apis=("torch.nn.utils.weight_norm", "torch.nn.utils.weight_norm.weight_norm"),
    remove_apis=(
        "torch.nn.utils.remove_weight_norm",
        "torch.nn.utils.weight_norm.remove_weight_norm",
    ),
    implementation="torch.nn.utils.weight_norm.WeightNorm",
    module_code="WN202",
    checkpoint_code="WN302",
)

SPECTRAL_NORM_MODERN = Spelling(
    kind=Kind.SPECTRAL_NORM,
    style=Style.MODERN,
    apply_apis=("torch.nn.utils.parametrizations.spectral_norm",),
    remove_apis=("torch.nn.utils.parametrize.remove_parametrizations",),
    implementation="torch.nn.utils.parametrizations._SpectralNorm",
    module_code="WN203",
    checkpoint_code="WN303",
)

SPECTRAL_NORM_LEGACY = Spelling(
    kind=Kind.SPECTRAL_NORM,
    style=Style.LEGACY,
    apply_apis=("torch.nn.utils.spectral_norm", "torch.nn.utils.spectral_norm.spectral_norm"),
    remove_apis=(
        "torch.nn.utils.remove_spectral_norm",
        "torch.nn.utils.spectral_norm.remove_spectral_norm",
    ),
    implementation="torch.nn.utils.spectral_norm.SpectralNorm",
    module_code="WN203",
    checkpoint_code="WN303",
)

OTHER_PARAMETRIZATION = Spelling(
    kind=Kind.OTHER,
    style=Style.MODERN,
    apply_apis=("torch.nn.utils.parametrize.register_parametrization",),
    remove_apis=("torch.nn.utils.parametrize.remove_parametrizations",),
    implementation="torch.nn.utils.parametrize.ParametrizationList",
    module_code="WN204",
    checkpoint_code=None,
)

SPELLINGS: tuple[Spelling, ...] = (
    WEIGHT_NORM_MODERN,
    WEIGHT_NORM_LEGACY,
    SPECTRAL_NORM_MODERN,
    SPECTRAL_NORM_LEGACY,
    OTHER_PARAMETRIZATION,
)

#: Where torch keeps parametrizations on a module, and the names of their originals.
PARAMETRIZATIONS_ATTR = "parametrizations"
ORIGINAL = "original"
#: The modern weight norm stores g as original0 and v as original1.
WEIGHT_NORM_G_INDEX = 0
WEIGHT_NORM_V_INDEX = 1

#: Suffixes the legacy hooks append to the parameter name.
LEGACY_WEIGHT_NORM_SUFFIXES = ("_g", "_v")
LEGACY_SPECTRAL_NORM_SUFFIXES = ("_orig", "_u", "_v")
#: Buffers of the modern spectral-norm parametrization (index 0 in its list).
MODERN_SPECTRAL_NORM_BUFFERS = ("_u", "_v")

#: Name of the load-state-dict pre-hook that the modern weight norm installs to
#: accept legacy ``NAME_g``/``NAME_v`` keys; the fold removes it.
WEIGHT_NORM_COMPAT_HOOK = "_weight_norm_compat_hook"
#: Legacy spectral norm's state-dict hook classes; the fold removes them.
SPECTRAL_NORM_STATE_HOOKS = (
    "torch.nn.utils.spectral_norm.SpectralNormStateDictHook",
    "torch.nn.utils.spectral_norm.SpectralNormLoadStateDictPreHook",
)

#: torch's pruning hook base class and the attribute naming the tensor it recomputes:
#: a pruned tensor is a plain attribute recomputed on every forward, not a leftover.
PRUNING_METHOD = "torch.nn.utils.prune.BasePruningMethod"
PRUNING_TENSOR_ATTR = "_tensor_name"

#: The module holding torch's parametrization machinery, and its cache switch:
#: a fold inside ``parametrize.cached()`` would store a stale value, so it is refused.
PARAMETRIZE_MODULE = "torch.nn.utils.parametrize"
PARAMETRIZE_CACHE_FLAG = "_cache_enabled"

#: Words in a condition showing that code checks which spelling a module carries
#: before removing it (``if hasattr(m, "parametrizations")``, ``"weight_g" in
#: m._parameters``, ``isinstance(hook, WeightNorm)``): such a removal is guarded.
SPELLING_GUARD_WORDS = re.compile(
    r"parametriz|WeightNorm|SpectralNorm|_forward_pre_hooks|\w_g\b.*\w_v\b|weight_g\b|weight_orig\b"
)

#: Names a folded weight-like tensor usually has; used to spot half-done folds.
WEIGHT_LIKE_NAME = re.compile(r"^weight(_(ih|hh|hr)_l\d+(_reverse)?)?$")
#: Names torch's own modules give their weights beyond ``WEIGHT_LIKE_NAME``
#: (``in_proj_weight``, ``q_proj_weight``): a buffer of a torch module under such
#: a name is a weight that ``remove_parametrizations`` left behind under
#: ``no_grad``.  (Not ``weight_u``/``weight_mask``: spectral norm and pruning
#: keep real buffers under those.)
TORCH_WEIGHT_NAME = re.compile(r"^\w+_weight$")

#: Attribute a fold leaves on each module it folded: ``{tensor name: (kind, style,
#: dim, stacked)}`` in builtins only (a pickled model needs no wnaudit to load).
#: ``wnaudit.load_state_dict`` reads it to fold a later unfolded checkpoint with
#: the dim and spelling the live module had, which a state dict does not store.
FOLD_RECORD_ATTR = "_wnaudit_folded"

#: What to tell users whose checkpoint was folded: code that applies weight norm
#: at construction no longer loads it strictly (``Missing key(s)``).
FOLDED_LOAD_HINT = (
    "a folded checkpoint no longer loads strictly into a model that applies weight norm at construction; "
    "load it with wnaudit.load_state_dict(model, state_dict), which accepts folded and unfolded checkpoints "
    "and leaves the model folded"
)


#: Remover names that do not exist where code looks for them -> the real remover.
#: The parametrizations module holds the appliers; the remover lives in
#: ``parametrize``: ``parametrizations.remove_parametrizations(...)`` raises
#: AttributeError (and importing it from there, ImportError).
MISPLACED_REMOVERS: dict[str, str] = {
    "torch.nn.utils.parametrizations.remove_parametrizations": "torch.nn.utils.parametrize.remove_parametrizations",
}


# -- the serving path, as the project-wide source rule (WN110) reads code ---------
#: Module methods that put a model in inference mode, with the first argument they need
#: to do so (None: any call does): ``model.eval()``, ``model.train(False)``, ``model.requires_grad_(False)``.
INFERENCE_METHODS: dict[str, bool | None] = {"eval": None, "train": False, "requires_grad_": False}
#: Functions that compile, script, trace or export a model for inference (the model is the first argument).
INFERENCE_CAPTURES: tuple[str, ...] = (
    "torch.compile",
    "torch.jit.script",
    "torch.jit.trace",
    "torch.jit.trace_module",
    "torch.export.export",
    "torch.fx.symbolic_trace",
)
#: Context managers (and decorators) under which a model call is inference.
INFERENCE_CONTEXTS: tuple[str, ...] = (
    "torch.inference_mode",
    "torch.no_grad",
    "torch.autograd.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.inference_mode",
    "torch.autograd.grad_mode.no_grad",
)
#: Module methods that return the module itself (``model.to(device).eval()`` is still ``model``).
SELF_RETURNING_METHODS: frozenset[str] = frozenset({
    "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "eval", "train", "requires_grad_",
    "share_memory", "to_empty", "type",
})
#: Constructors of a mapping of named model parts (``Munch(decoder=Decoder(...))``, ``nn.ModuleDict({...})``):
#: WN110 follows each entry by its key, so a part that inference never reads is not served.
CONTAINER_CONSTRUCTORS: frozenset[str] = frozenset({
    "dict", "collections.OrderedDict", "types.SimpleNamespace", "argparse.Namespace", "munch.Munch",
    "munch.DefaultMunch", "easydict.EasyDict", "addict.Dict", "torch.nn.ModuleDict",
    "torch.nn.modules.container.ModuleDict",
})
#: Calls that build the classes a config names (Hydra's ``_target_``, jsonargparse/Lightning ``class_path``,
#: hyperpyyaml's ``!new:``): WN110 reads the project's YAML files for what they build.
CONFIG_INSTANTIATORS: frozenset[str] = frozenset({
    "hydra.utils.instantiate", "hydra._internal.instantiate._instantiate2.instantiate",
    "lightning.pytorch.cli.instantiate_class", "pytorch_lightning.cli.instantiate_class",
    "jsonargparse.instantiate_class", "hyperpyyaml.load_hyperpyyaml", "hyperpyyaml.core.load_hyperpyyaml",
})
#: Calls that name the directory Hydra reads configs from (``config_path``, relative to the calling file).
CONFIG_DIRECTORY_CALLS: frozenset[str] = frozenset({
    "hydra.initialize", "hydra.main", "hydra.initialize_config_dir", "hydra.experimental.initialize",
})
#: Calls that fold weight norm away (besides the spellings' removers): wnaudit's own folds, and an
#: ONNX export, whose constant folding bakes ``g * v / ||v||`` into the exported weight.
FOLDING_APIS: tuple[str, ...] = (
    "wnaudit.fold_weight_norm",
    "wnaudit.fold",
    "wnaudit.load_state_dict",
    "wnaudit.core.module_fold.fold_weight_norm",
    "wnaudit.core.module_fold.fold",
    "wnaudit.core.load.load_state_dict",
    "torch.onnx.export",
)
#: The keyword through which those APIs leave named submodules parametrized (a partial fold: ``exclude=("f0",)``).
PARTIAL_FOLD_KEYWORD = "exclude"
#: A context manager under which parametrizations are computed once, not per call.
PARAMETRIZE_CACHED = "torch.nn.utils.parametrize.cached"
#: Signs that a function trains the model (its ``.eval()`` is a validation step, not serving).
TRAINING_METHODS: frozenset[str] = frozenset({"backward", "zero_grad"})
TRAINING_API_PREFIXES: tuple[str, ...] = ("torch.optim.",)
#: Calls that write a checkpoint: a function (or script) making one prepares weights, it does not serve them.
CHECKPOINT_SAVERS: frozenset[str] = frozenset({
    "torch.save", "safetensors.torch.save_file", "safetensors.torch.save_model",
})
#: Library base classes whose inherited ``from_pretrained`` builds the model, loads its weights and calls
#: ``eval()`` on it (transformers, diffusers, huggingface_hub): a subclass is an inference entry point of the
#: package that defines it, whether or not the package itself calls it.
EVAL_LOADING_BASES: frozenset[str] = frozenset({
    "transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel",
    "diffusers.ModelMixin", "diffusers.models.ModelMixin", "diffusers.models.modeling_utils.ModelMixin",
    "huggingface_hub.PyTorchModelHubMixin", "huggingface_hub.hub_mixin.PyTorchModelHubMixin",
})
#: Methods through which a subclass overrides the loading those bases do for it (then its own code is read).
OWN_LOADING_METHODS: frozenset[str] = frozenset({"from_pretrained", "_from_pretrained"})
#: Model methods that Python or torch call without the project naming them.
IMPLICITLY_CALLED_METHODS: frozenset[str] = frozenset({
    "__init__", "__call__", "forward", "__enter__", "__exit__", "__post_init__", "__new__", "__setstate__",
    "load_state_dict", "_load_from_state_dict", "train", "eval",
})


def spelling_for_api(qualified_name: str) -> tuple[Spelling, str] | None:
    """Return (spelling, "apply" | "remove") for a qualified API name, or None."""
    for spelling in SPELLINGS:
        if qualified_name in spelling.apply_apis:
            return spelling, "apply"
    for spelling in SPELLINGS:
        if spelling.kind is not Kind.OTHER and qualified_name in spelling.remove_apis:
            return spelling, "remove"
    return None


# -- exported programs (torch.export archives, AOTInductor packages) -----------------
#: The aten operators torch.export records for a weight norm, as the serialized graph names them:
#: ``_weight_norm(v, g, dim=0)`` (what both spellings call) and the fused kernel it dispatches to,
#: ``_weight_norm_interface(v, g, dim=0)``, which returns ``(w, norms)``.
EXPORTED_WEIGHT_NORM_OPS: tuple[str, ...] = (
    "torch.ops.aten._weight_norm.default",
    "torch.ops.aten._weight_norm_interface.default",
)
#: What ``run_decompositions`` leaves of a weight norm: ``mul(v, div(g, linalg_vector_norm(v, 2, dims, True)))``.
EXPORTED_NORM_OPS: tuple[str, ...] = ("torch.ops.aten.linalg_vector_norm.default", "torch.ops.aten.norm.ScalarOpt_dim")
EXPORTED_DIV_OPS: tuple[str, ...] = ("torch.ops.aten.div.Tensor",)
EXPORTED_MUL_OPS: tuple[str, ...] = ("torch.ops.aten.mul.Tensor",)
#: Members of a ``torch.export.save`` / AOTInductor ``.pt2`` archive, below its one top-level folder.
PT2_ARCHIVE_FORMAT_MEMBER = "archive_format"
PT2_ARCHIVE_FORMAT_VALUE = b"pt2"
PT2_MODELS_DIR = "models/"
PT2_MODEL_JSON_SUFFIX = ".json"
PT2_WEIGHTS_CONFIG = "data/weights/{}_weights_config.json"
PT2_CONSTANTS_CONFIG = "data/constants/{}_constants_config.json"
PT2_SAMPLE_INPUTS = "data/sample_inputs/{}.pt"
PT2_AOTINDUCTOR_DIR = "data/aotinductor/"
#: Where the configs' payload files live (``path_name`` of each config entry is below these).
PT2_WEIGHTS_DIR = "data/weights/"
PT2_CONSTANTS_DIR = "data/constants/"
#: ``torch.export.load`` reads every member here as a string into ``extra_files``: read, never evaluated.
PT2_EXTRA_DIR = "extra/"
#: Members ``torch.export.save`` writes that the loader reads as plain strings or not at all.
PT2_PLAIN_MEMBERS: frozenset[str] = frozenset({"archive_format", "archive_version", "byteorder", ".data/version", ".data/serialization_id"})
#: Where an AOTInductor package names its constants: the generated wrapper source
#: (``constants_info_[i].original_fqn = "..."``) and, with weights outside the library, a weights config.
PT2_AOTI_WRAPPER_SUFFIX = ".wrapper.cpp"
PT2_AOTI_CONSTANT_FQN = re.compile(r'constants_info_\[\d+\]\.original_fqn\s*=\s*"((?:[^"\\]|\\.)*)"')
PT2_AOTI_WEIGHTS_CONFIG_SUFFIX = "weights_config.json"
#: Payload-file prefixes in the weights/constants configs whose loading unpickles
#: (``torch.load(weights_only=False)``, torchbind's pickler, ``pickle.loads``).
PT2_CUSTOM_OBJECT_PREFIX = "custom_obj_"
PT2_OPAQUE_OBJECT_PREFIX = "opaque_obj_"
#: Legacy members that ``torch.export.load`` (2.13) still prefers to the configs when present: a whole
#: state dict or constants dict pickled in one file, read by ``deserialize_torch_artifact``
#: (``torch.load(weights_only=True)``, then again with ``weights_only=False`` when that fails).
PT2_LEGACY_WEIGHTS = "data/weights/{}.pt"
PT2_LEGACY_CONSTANTS = "data/constants/{}.pt"
#: Any ``.pt`` member below the weights or constants folder is such a payload for *some* program name
#: (torch derives names from every member below ``models/``), so each is screened, whatever its name.
PT2_LEGACY_SUFFIX = ".pt"
#: Separator of a node's ``source_fn_stack`` metadata entries (``ST_DELIMITER`` of torch's serializer); each
#: entry is ``name,target`` and the deserializer ``getattr``s along a target that starts with ``torch``.
PT2_METADATA_DELIMITER = ";"
#: The loader of the pt2 layout alone. ``torch.export.load`` falls back, when it raises ``RuntimeError``,
#: to the pre-2.8 layout (top-level ``serialized_*.pt`` members, unpickled as above); wnaudit never takes that path.
PT2_LOAD_API = "torch.export.pt2_archive._package.load_pt2"
#: The one program ``torch.export.load`` returns from an archive.
PT2_LOADED_MODEL = "model"
#: The aten operators whose name is a dunder (``torch.ops.aten.__and__.Tensor``): no other dunder
#: is accepted in a node target, so a target cannot walk to Python internals (``__class__``, ``__globals__``).
PT2_ATEN_DUNDER_OPS: frozenset[str] = frozenset(
    f"__{name}__" for prefix in ("", "i") for name in (prefix + op for op in ("and", "or", "xor", "lshift", "rshift"))
)
#: The names a symbolic-shape expression of an archive may call (``expr_str`` of an ``as_expr``, written by
#: ``sympy.srepr``): sympy's constructors and the functions torch's deserializer hands to ``sympy.sympify``.
#: ``sympify`` evaluates the string as Python, so an expression naming anything else needs ``--trust-pickle``.
PT2_SYMPY_NAMES: frozenset[str] = frozenset({
    "Symbol", "Dummy", "Integer", "Rational", "Float", "Add", "Mul", "Pow", "Max", "Min", "Abs", "Mod", "floor", "ceiling",
    "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "And", "Or", "Not", "Piecewise", "ExprCondPair",
    "StrictLessThan", "LessThan", "StrictGreaterThan", "GreaterThan", "Equality", "Unequality",
    "oo", "zoo", "nan", "true", "false", "True", "False", "None", "pi", "E",
    "FloorDiv", "ModularIndexing", "Where", "PythonMod", "CleanDiv", "CeilToInt", "FloorToInt", "CeilDiv",
    "LShift", "RShift", "PowByNatural", "FloatPow", "FloatTrueDiv", "IntTrueDiv",
    "IsNonOverlappingAndDenseIndicator", "TruncToFloat", "TruncToInt", "RoundToInt", "RoundDecimal",
    "ToFloat", "OpaqueUnaryFn_sqrt", "BitwiseFn_bitwise_and", "BitwiseFn_bitwise_or", "BitwiseFn_bitwise_xor",
    "Identity", "int_oo", "IntInfinity", "NegativeIntInfinity",
})
#: One token of such an expression: a name, a keyword argument's name, a quoted symbol name, a number, an operator.
PT2_SYMPY_TOKEN = re.compile(
    r"\s*(?:(?P<kwarg>[A-Za-z_]\w*)\s*=(?!=)|(?P<name>[A-Za-z_]\w*)|'(?P<quoted>[A-Za-z_]\w*|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)'"
    r"|(?P<number>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|(?P<operator>\*\*|//|[-+*/%(),<>]=?|==|!=))"
)
#: Node targets of symbolic-size arithmetic in programs with dynamic shapes (``s1 * 2``, ``sym_float(s1)``):
#: exact names of pure functions that ``torch.export.load`` resolves by ``getattr`` and that run nothing else.
PT2_SYMBOLIC_TARGETS: frozenset[str] = frozenset(
    {f"_operator.{name}" for name in (
        "add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "neg", "pos", "abs",
        "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "not_",
    )}
    | {f"torch.{name}" for name in ("sym_float", "sym_int", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "_sym_sqrt")}
    | {f"math.{name}" for name in ("ceil", "floor", "trunc", "sqrt")}
)
#: What a program's input guards (``guards_code``, ``exec``'d by ``ep.module()``) may contain to be run
#: without ``--trust-pickle``: sizes of inputs (``L['x'].size()[2]``) compared and combined by arithmetic.
PT2_GUARD_ROOT = "L"
PT2_GUARD_TENSOR_METHODS: frozenset[str] = frozenset({"size", "stride", "storage_offset", "dim", "numel"})
PT2_GUARD_FUNCTIONS: frozenset[str] = frozenset({"max", "min", "abs", "Max", "Min", "Abs"})
PT2_GUARD_MATH_FUNCTIONS: frozenset[str] = frozenset({"floor", "ceil", "trunc", "sqrt", "isnan"})
PT2_GUARD_KEY = re.compile(r"[A-Za-z_]\w*")
#: A node target (or operator argument) that names a registered aten/prims overload, ``torch.ops.NS.OP.OVERLOAD``,
#: or ``operator.getitem``: what a program may call without running code from its file.
PT2_SAFE_TARGET = re.compile(r"torch\.ops\.(?:aten|prims)\.(?P<op>[A-Za-z_]\w*)\.(?!__)[A-Za-z_]\w*|_operator\.getitem")
#: wnaudit's own call that folds a model before it is exported (the AOTInductor message names it).
FOLD_BEFORE_EXPORT_API = "wnaudit.fold_weight_norm"


# -- run time: what the watch (wnaudit.watch, the pytest plugin) matches while a model runs ----------
#: The call that folds each kind of reparametrization in a live module (the inspector's and the watch's hint).
FOLD_CALLS: dict[Kind, str] = {
    Kind.WEIGHT_NORM: "wnaudit.fold_weight_norm(model)",
    Kind.SPECTRAL_NORM: "wnaudit.fold(model, spectral_norm=True)",
    Kind.OTHER: "wnaudit.fold(model, other=True)",
}
#: torch's weight-norm kernels as the dispatcher names them: both spellings call ``torch._weight_norm``, seen as
#: ``_weight_norm`` under ``inference_mode`` and as the fused ``_weight_norm_interface`` otherwise (for ``dim`` 0
#: or the last one; other dims decompose into ``norm``/``div``/``mul``, so the watch also notes the
#: parametrization and hook calls).  Code may call the kernel by hand, as ``HAND_CALLED_WEIGHT_NORM``.
RUNTIME_WEIGHT_NORM_OPS: tuple[str, ...] = ("_weight_norm", "_weight_norm_interface")
HAND_CALLED_WEIGHT_NORM = "torch._weight_norm"
#: aten operators that compute a norm: over a parameter and feeding a weight, a hand-written normalization (WN207).
RUNTIME_NORM_OPS: tuple[str, ...] = ("linalg_vector_norm", "norm", "frobenius_norm", "linalg_norm", "renorm")
#: aten operators that consume a layer's weight, with the position of the weight among their arguments
#: (``F.linear`` reaches ``addmm``/``mm`` through ``t`` outside ``inference_mode``).
RUNTIME_WEIGHT_CONSUMERS: dict[str, int] = {
    **{name: 1 for name in (
        "convolution", "_convolution", "conv1d", "conv2d", "conv3d",
        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "linear", "mm", "matmul",
    )},
    "addmm": 2,
}
