"""Audit and fix one checkpoint file of each single-file format.

Each handler returns a :class:`~wnaudit.common.findings.RunResult` for its file and
raises :class:`CheckpointError` for a bad input; a fix is written only after
every fold succeeded, through :func:`wnaudit.common.atomic.atomic_writer`, and
replaces the original only once it reads back as intended (:mod:`verify`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from ..core.catalogue import Kind
from ..common.findings import RunResult
from ..common.gc_pause import cyclic_gc_paused
from ..common.options import RunOptions
from ..core.shapes import StoredStateError
from .errors import CheckpointError
from .plan import Plan, Planned, plan_table
from .progress import progress_bar
from .sniff import Format
from .training import check_training
from .tables import Table, TableEdit, find_objects, find_tables, rebuild

if TYPE_CHECKING:  # imported where a file of that kind is read or written: an audit of a torch zip needs none
    import wnaudit.checkpoint.safetensors_io as safetensors_io
    from .verify import SafetensorsExpectation

logger = logging.getLogger(__name__)


def finish(path: Path, plan: Plan) -> RunResult:
    """Findings of a plan; problems make one error line for the file (raised)."""
    if plan.problems:
        extra = f" (and {len(plan.problems) - 1} more)" if len(plan.problems) > 1 else ""
        raise CheckpointError(plan.problems[0] + extra)
    return RunResult(findings=[item.finding for item in plan.items] + plan.orphans)


def mark_fixed(result: RunResult, folded: Sequence[Planned]) -> RunResult:
    fixed_ids = {id(item.finding) for item in folded}
    result.fixed = [f for f in result.findings if id(f) in fixed_ids]
    result.findings = [f for f in result.findings if id(f) not in fixed_ids]
    return result


def fold_checked(tensors: Any, planned: Sequence[Planned]) -> dict[str, Any]:
    """Fold the planned groups of one table; a fold error becomes a CheckpointError.

    Only the groups' own entries are handed to the fold (the plan already
    checked the whole table for key clashes), so folding one group costs the
    same in a table of ten entries or of a hundred thousand.
    """
    from ..core.state_dict_fold import fold_groups

    parts = {key: tensors[key] for item in planned for key in item.group.keys}
    try:
        folded, _ = fold_groups(parts, [item.group for item in planned])
    except StoredStateError as error:
        raise CheckpointError(str(error)) from error
    return folded


def _storage_keys_for_fix(path: Path, fmt: Format, options: RunOptions) -> Any:
    """The storage keys a streamed fix of a torch zip records (None when not fixing one), once the zip is
    known not to inflate past what a fix may write: a bomb is refused before anything is inflated."""
    if not (options.fix and fmt is Format.TORCH_ZIP):
        return None
    from ..common.write_bound import zip_write_problem

    problem = zip_write_problem(path, options.config.max_fix_bytes)
    if problem is not None:
        raise CheckpointError(problem)
    from .torch_zip import StorageKeys

    return StorageKeys()


def target_of(path: Path, options: RunOptions) -> Path:
    return options.output if options.output is not None else path


def nothing_to_fold(path: Path, result: RunResult, options: RunOptions) -> RunResult:
    """``--fix -o OUT`` on a clean file still produces OUT (a byte copy), so pipelines can rely on it."""
    if options.fix and options.output is not None:
        from ..common.atomic import atomic_copy
        from .verify import VerificationError

        atomic_copy(path, options.output, VerificationError)
    return result


# --------------------------------------------------------------------------
# safetensors
# --------------------------------------------------------------------------


def audit_safetensors(path: Path, options: RunOptions) -> RunResult:
    """Audit from the header alone; fold by streaming the file through a rewrite.

    One open handle serves the header, the folded tensors and the copy, so
    the fix is a fold of one version of the file even if it is replaced meanwhile.
    """
    import wnaudit.checkpoint.safetensors_io as safetensors_io  # not "from . import": no edge to the package

    with open(path, "rb") as source:
        header = safetensors_io.read_header_from(source)
        shapes = {name: entry.shape for name, entry in header.entries.items()}
        plan = plan_table(str(path), list(header.entries), shapes, options)
        result = finish(path, plan)
        if not plan.to_fold:
            return nothing_to_fold(path, result, options)
        check_training(path, None, options)
        from ..common.atomic import atomic_writer
        from .verify import SafetensorsExpectation

        replacements: dict[str, safetensors_io.Replacement] = {}
        dropped: set[str] = set()
        expectation = SafetensorsExpectation(source, header)
        for item in plan.to_fold:
            first, *rest = item.group.keys
            replacements[first] = expect_folded(expectation, lazy_fold(source, header, item))
            dropped.update(rest)
        expectation.kept = [name for name in header.entries if name not in replacements and name not in dropped]
        target = target_of(path, options)
        with progress_bar(f"folding {path.name}", os.fstat(source.fileno()).st_size, options.progress) as update:
            with atomic_writer(target, verify=expectation) as handle:
                safetensors_io.rewrite(source, header, replacements, dropped, handle, update)
    return mark_fixed(result, plan.to_fold)


def expect_folded(expectation: SafetensorsExpectation, replacement: safetensors_io.Replacement) -> safetensors_io.Replacement:
    """The same replacement, recording the digest of what it computes for the read-back check."""
    import wnaudit.checkpoint.safetensors_io as safetensors_io
    from .verify import tensor_digest

    def compute() -> Any:
        tensor = replacement.compute()
        expectation.folded[replacement.key] = (replacement.dtype, replacement.shape, tensor_digest(tensor))
        return tensor

    return safetensors_io.Replacement(replacement.key, replacement.dtype, replacement.shape, compute)


def lazy_fold(source: Any, header: safetensors_io.Header, item: Planned) -> safetensors_io.Replacement:
    """Fold one group when the rewrite reaches it: one folded tensor in memory at a time."""
    import wnaudit.checkpoint.safetensors_io as safetensors_io

    group = item.group
    roles = dict(group.parts)
    shaped_like = roles["v"] if group.spelling.kind is Kind.WEIGHT_NORM else roles["orig"]
    dtypes = {header.entries[key].dtype for key in group.keys}
    if len(dtypes) != 1:
        raise CheckpointError(f"{shaped_like}: the stored parts have different dtypes ({', '.join(sorted(dtypes))})")
    entry = header.entries[shaped_like]

    def compute() -> Any:
        tensors = safetensors_io.read_tensors(source, header, set(group.keys))
        return fold_checked(tensors, [item])[group.folded_key]

    return safetensors_io.Replacement(group.folded_key, entry.dtype, entry.shape, compute)


# --------------------------------------------------------------------------
# torch.save files (zip, legacy, TorchScript) and pickled modules
# --------------------------------------------------------------------------


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _is_module(value: Any) -> bool:
    import torch

    return isinstance(value, torch.nn.Module)


def audit_torch(path: Path, fmt: Format, options: RunOptions) -> RunResult:
    """Audit every state dict nested in the file (and, if trusted, every pickled module).

    The cyclic garbage collector is paused meanwhile: loading, re-pickling and
    reading back a checkpoint of 100,000 tensors allocates hundreds of
    thousands of long-lived objects, and each collection rescans all of them
    (a third of each ``torch.load`` in a fix of 25,000 pairs).  Whatever
    cycles are left are collected once it is back on.
    """
    with cyclic_gc_paused():
        return _audit_torch(path, fmt, options)


def _audit_torch(path: Path, fmt: Format, options: RunOptions) -> RunResult:
    fast = _audit_zip_without_torch(path, options) if fmt is Format.TORCH_ZIP and not (options.fix or options.trust_pickle) else None
    if fast is not None:
        return fast
    keys = _storage_keys_for_fix(path, fmt, options)
    obj = _load_torch(path, fmt, options, keys)
    plan, planned_by_table = _plan_tables(path, find_tables(obj, _is_tensor), options)
    modules = find_objects(obj, _is_module)
    result = finish(path, plan)
    result.findings.extend(f for location, module in modules for f in _audit_module(path, location, module, options))
    if options.fix and (plan.to_fold or modules):
        check_training(path, obj, options)
    folded_modules = _fold_modules(modules, options) if options.fix else set()
    if not plan.to_fold and not folded_modules:
        return nothing_to_fold(path, result, options)
    if keys is not None and keys.layout is not None and not modules and _streamed(path, obj, keys, planned_by_table, options):
        return mark_fixed(result, plan.to_fold)
    _save_folded(path, fmt, obj, planned_by_table, options)
    return _modules_fixed(mark_fixed(result, plan.to_fold), folded_modules)


def _modules_fixed(result: RunResult, folded_modules: set[str]) -> RunResult:
    """Findings on pickled modules that the fix folded move to ``fixed``."""
    result.fixed.extend(f for f in result.findings if f.object in folded_modules)
    result.findings = [f for f in result.findings if f.object not in folded_modules]
    return result


def _load_torch(path: Path, fmt: Format, options: RunOptions, keys: Any) -> Any:
    """The loaded checkpoint (a TorchScript archive: its state dict, audit only)."""
    import wnaudit.checkpoint.torch_io as torch_io

    obj = torch_io.load(path, fmt, trust_pickle=options.trust_pickle, storage_keys=keys)
    if fmt is Format.TORCHSCRIPT:
        if options.fix:
            raise CheckpointError("folding a TorchScript archive is not supported: fold the model before scripting it")
        obj = obj.state_dict()
    return obj


def _plan_tables(path: Path, tables: list[Table], options: RunOptions) -> tuple[Plan, list[tuple[Table, list[Planned]]]]:
    """One plan for the file, and what each table folds."""
    plan = Plan()
    planned_by_table: list[tuple[Table, list[Planned]]] = []
    for table in tables:
        shapes = {key: tuple(t.shape) for key, t in table.tensors.items()}
        table_plan = plan_table(str(path), list(table.tensors), shapes, options, table.qualified)
        plan.extend(table_plan)
        planned_by_table.append((table, table_plan.to_fold))
    return plan, planned_by_table


def _streamed(path: Path, obj: Any, keys: Any, planned_by_table: list[tuple[Table, list[Planned]]], options: RunOptions) -> bool:
    """Fold by streaming the archive if it can be; False: write it with ``torch.save``."""
    from .torch_zip import NotStreamable

    try:
        _stream_fix(path, obj, keys, planned_by_table, options)
    except NotStreamable as reason:
        logger.debug("%s: written with torch.save (%s)", path, reason)
        return False
    return True


def _save_folded(path: Path, fmt: Format, obj: Any, planned_by_table: list[tuple[Table, list[Planned]]], options: RunOptions) -> None:
    """Fold in memory, then ``torch.save`` the rebuilt object (verified before it replaces anything)."""
    import wnaudit.checkpoint.torch_io as torch_io
    from ..common.atomic import atomic_writer
    from .verify import torch_verifier

    edits = {}
    for table, planned in planned_by_table:
        if planned:
            folded = fold_checked(table.tensors, planned)
            edit = TableEdit()
            for item in planned:
                edit.fold(item.group, folded[item.group.folded_key])
            edits[id(table.container)] = edit
    new_obj = rebuild(obj, edits)
    verify = torch_verifier(new_obj, lambda written: torch_io.load(written, fmt, trust_pickle=options.trust_pickle))
    with progress_bar(f"folding {path.name}", path.stat().st_size, options.progress) as update:
        with atomic_writer(target_of(path, options), verify=verify) as handle, _writing(new_obj):
            torch_io.save(new_obj, handle, fmt, update)


@contextlib.contextmanager
def _writing(obj: Any) -> Iterator[None]:
    """Pickling what torch loaded: a tensor whose pickle gave it backward hooks that are no dict
    (``torch.load`` accepts it, ``torch.save`` then fails iterating them) becomes one line."""
    try:
        yield
    except TypeError as error:
        found = find_objects(obj, _has_malformed_hooks)
        if not found:
            raise
        where = ".".join(found[0][0]) or "<root>"
        hooks = type(found[0][1]._backward_hooks).__name__
        raise CheckpointError(
            f"damaged pickle: the tensor {where} carries backward hooks of type {hooks}, not a dict; "
            "torch.save cannot write it back, so nothing was written"
        ) from error


def _has_malformed_hooks(value: Any) -> bool:
    if not _is_tensor(value):
        return False
    hooks = getattr(value, "_backward_hooks", None)
    return hooks is not None and not isinstance(hooks, dict)


def _stream_fix(path: Path, obj: Any, keys: Any, planned_by_table: list[tuple[Table, list[Planned]]], options: RunOptions) -> None:
    """Fold a memory-mapped torch zip by streaming (:mod:`torch_zip`): one folded tensor at a time."""
    import wnaudit.checkpoint.torch_io as torch_io
    from ..common.atomic import atomic_writer
    from .torch_zip import FoldedTensor, NotStreamable, first_free_key, pickle_object, write_archive
    from .verify import tensor_digest, torch_verifier

    layout = keys.layout
    keys.resolve(layout)
    first_key = first_free_key(layout)
    edits: dict[int, TableEdit] = {}
    count = 0
    for table, planned in planned_by_table:
        if not planned:
            continue
        edit = TableEdit()
        for item in planned:
            group = item.group
            roles = dict(group.parts)
            shaped_like = table.tensors[roles["v"] if group.spelling.kind is Kind.WEIGHT_NORM else roles["orig"]]
            if any(type(table.tensors[key]) is not type(shaped_like) or shaped_like.requires_grad for key in group.keys):
                raise NotStreamable("parameters, not plain tensors")
            dtype = str(shaped_like.dtype).removeprefix("torch.")
            if dtype not in ("float64", "float32", "float16", "bfloat16"):
                raise NotStreamable(f"a folded tensor of dtype {dtype}")

            def compute(tensors: Any = table.tensors, one: Planned = item) -> Any:
                return fold_checked(tensors, [one])[one.group.folded_key]

            edit.fold(group, FoldedTensor(str(first_key + count), dtype, tuple(shaped_like.shape), compute))
            count += 1
        edits[id(table.container)] = edit
    new_obj = rebuild(obj, edits)
    with _writing(new_obj):
        pickled, kept, folded = pickle_object(new_obj, layout, keys)
    digests: dict[int, tuple[str, tuple[int, ...], str]] = {}

    def on_folded(item: Any, tensor: Any) -> None:
        digests[id(item)] = (item.dtype, item.shape, tensor_digest(tensor))

    verify = torch_verifier(new_obj, lambda written: torch_io.load(written, Format.TORCH_ZIP, trust_pickle=options.trust_pickle), digests)
    with open(path, "rb") as source:
        if not torch_io.same_file(keys.loaded_stat, os.fstat(source.fileno())):
            raise CheckpointError("the file changed while being fixed; nothing written")
        with progress_bar(f"folding {path.name}", os.fstat(source.fileno()).st_size, options.progress) as update:
            with atomic_writer(target_of(path, options), verify=verify) as handle:
                write_archive(source.fileno(), layout, pickled, kept, folded, handle.fileno(), update, on_folded)
    logger.debug("%s: streamed (%d records copied, %d folded)", path, len(kept), len(folded))


def _audit_zip_without_torch(path: Path, options: RunOptions) -> RunResult | None:
    """Audit from ``data.pkl`` alone (see :mod:`zip_shapes`); None if torch must decide."""
    from .zip_layout import read_layout
    from .zip_shapes import TensorStub, Unsupported, read_structure

    with open(path, "rb") as handle:
        layout = read_layout(handle)  # records that disagree with the pickle make the file unreadable
    if not layout.records:  # bytes before the archive: only torch's reader can say what it holds
        return None
    try:
        obj = read_structure(path)
    except Unsupported as reason:
        logger.debug("%s: auditing through torch.load (%s)", path, reason)
        return None
    plan = Plan()
    for table in find_tables(obj, lambda value: isinstance(value, TensorStub)):
        shapes = {key: stub.shape for key, stub in table.tensors.items()}
        plan.extend(plan_table(str(path), list(table.tensors), shapes, options, table.qualified))
    return finish(path, plan)


def _audit_module(path: Path, location: tuple[str, ...], module: Any, options: RunOptions) -> list[Any]:
    """WN2xx findings of a pickled module, named by the nesting prefix plus qualified names."""
    from dataclasses import replace

    if options.module_auditor is None:
        raise CheckpointError("holds a pickled module, and this run has no module auditor wired in")
    prefix = ".".join(location)
    return [
        replace(f, object=f"{prefix}.{f.object}" if prefix and f.object else f.object)
        for f in options.module_auditor(module, str(path))
    ]


def _fold_modules(modules: list[tuple[tuple[str, ...], Any]], options: RunOptions) -> set[str]:
    """Fold pickled modules in place; returns the finding objects that are now folded."""
    from ..core.module_fold import FoldError, fold

    done: set[str] = set()
    for location, module in modules:
        prefix = ".".join(location)
        try:
            names = fold(module, weight_norm=True, spectral_norm=options.spectral)
        except FoldError as error:
            raise CheckpointError(f"cannot fold the pickled module at {prefix or '<root>'}: {error}") from error
        done.update(f"{prefix}.{name}" if prefix else name for name in names)
    return done
