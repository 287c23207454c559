"""Hugging Face sharded checkpoints: ``*.index.json`` with its shard files.

The index's ``weight_map`` names every key and the shard holding it, so the
audit groups keys across shards (a ``g`` and its ``v`` may sit in different
shards).  Shards must lie inside the index's directory, symlinks resolved: an
index is data from the internet, and must not make wnaudit read or rewrite
files elsewhere.

A fix replaces the shards and the index all or nothing (:mod:`transaction`);
names that reach the same file (``a.safetensors``, ``sub/../a.safetensors``)
are one shard.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..common.findings import RunResult
from ..common.options import RunOptions
from ..common.write_bound import zip_write_problem
import wnaudit.checkpoint.safetensors_io as safetensors_io  # not "from . import": no edge to the package, which imports audit
from .errors import CheckpointError
from .formats import finish, fold_checked, mark_fixed
from .plan import plan_table
from .progress import progress_bar
from .sniff import Format, UnrecognisedFormat, detect_format
from .tables import TableEdit
from .training import check_training
from .transaction import Transaction, check_pending, discard, recover
from .verify import SafetensorsExpectation, VerificationError, tensor_digest, torch_verifier

logger = logging.getLogger(__name__)

WEIGHT_MAP = "weight_map"
METADATA = "metadata"
TOTAL_SIZE = "total_size"


@dataclass
class Shard:
    name: str
    path: Path
    fmt: Format
    header: safetensors_io.Header | None = None
    state: Any = None  # torch shards: the loaded (memory-mapped) state dict

    def shapes(self) -> dict[str, tuple[int, ...]]:
        if self.header is not None:
            return {k: e.shape for k, e in self.header.entries.items()}
        return {k: tuple(t.shape) for k, t in self.state.items()}

    def nbytes(self, key: str) -> int:
        if self.header is not None:
            return self.header.entries[key].nbytes
        tensor = self.state[key]
        return tensor.numel() * tensor.element_size()


@dataclass
class ShardIndex:
    path: Path
    document: dict[str, Any]
    weight_map: dict[str, str]


def read_index(path: Path) -> ShardIndex:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"shard index is not valid JSON ({error})") from error
    except RecursionError as error:
        raise CheckpointError("shard index JSON is nested too deeply") from error
    weight_map = document.get(WEIGHT_MAP) if isinstance(document, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()):
        raise CheckpointError(f"shard index has no {WEIGHT_MAP!r} mapping tensor names to shard files")
    return ShardIndex(Path(path), document, weight_map)


def shard_path(index_path: Path, name: str) -> Path:
    """The shard's path; refuses one outside the index's directory (symlinks resolved)."""
    if "\0" in name or not name.strip():
        raise CheckpointError(f"shard name {name!r} is not a file name")
    directory = Path(os.path.realpath(index_path)).parent
    candidate = Path(index_path).parent / name
    real = Path(os.path.realpath(candidate))
    if Path(name).is_absolute() or os.path.commonpath([directory, real]) != str(directory):
        raise CheckpointError(f"shard {name!r} lies outside the index's directory; refusing to read it")
    if not candidate.exists():
        raise CheckpointError(f"names a missing shard {name!r}")
    return candidate


def covered_shards(index_path: Path) -> set[Path]:
    """Resolved paths of the shards an index covers (empty if the index is unreadable)."""
    try:
        index = read_index(index_path)
        return {Path(os.path.realpath(shard_path(index_path, name))) for name in set(index.weight_map.values())}
    except Exception:  # noqa: BLE001 - a bad index is reported when it is audited itself
        return set()


def journal_targets(index_path: Path) -> set[str]:
    """What a journal beside this index may replace: the index and its shards, relative to its real directory."""
    real_index = Path(os.path.realpath(index_path))
    directory = str(real_index.parent)
    return {real_index.name} | {os.path.relpath(shard, directory) for shard in covered_shards(index_path)}


def _open_shard(index_path: Path, name: str) -> Shard:
    path = shard_path(index_path, name)
    try:
        fmt = detect_format(path)
    except UnrecognisedFormat as error:
        raise CheckpointError(f"shard {name}: {error}") from error
    if fmt is Format.SAFETENSORS:
        try:
            return Shard(name, path, fmt, header=safetensors_io.read_header(path))
        except CheckpointError as error:
            raise CheckpointError(f"shard {name}: {error}") from error
    if fmt in (Format.TORCH_ZIP, Format.TORCH_LEGACY):
        import wnaudit.checkpoint.torch_io as torch_io

        try:
            state = torch_io.load(path, fmt, trust_pickle=False)
        except CheckpointError as error:
            raise CheckpointError(f"shard {name}: {error}") from error
        if not isinstance(state, dict):
            raise CheckpointError(f"shard {name} holds a {type(state).__name__}, not a state dict")
        return Shard(name, path, fmt, state=state)
    raise CheckpointError(f"shard {name} is a {fmt.value}; shards must be safetensors or torch state dicts")


def audit_index(path: Path, options: RunOptions) -> RunResult:
    index_path = Path(path)
    if options.discard_journal:
        discard(index_path)
    targets = journal_targets(index_path)
    if options.fix:
        recover(index_path, targets)  # finish or roll back a fix a crash interrupted
    else:
        check_pending(index_path, targets)
    index = read_index(index_path)
    if options.fix and options.output is not None:
        raise CheckpointError("-o/--output is not supported for a sharded checkpoint; fix it in place (or copy the directory first)")
    shards = _open_shards(index_path, index)
    shapes: dict[str, tuple[int, ...]] = {}
    for key, name in index.weight_map.items():
        shard_shapes = shards[name].shapes()
        if key not in shard_shapes:
            raise CheckpointError(f"{WEIGHT_MAP} puts {key!r} in shard {name}, which does not hold it")
        shapes[key] = shard_shapes[key]
    plan = plan_table(str(path), list(index.weight_map), shapes, options)
    result = finish(path, plan)
    if not plan.to_fold:
        return result
    check_training(index_path, None, options, copy_supported=False)
    _fix(index, shards, plan.to_fold, options)
    return mark_fixed(result, plan.to_fold)


def _open_shards(index_path: Path, index: ShardIndex) -> dict[str, Shard]:
    """Each shard name's shard; names reaching the same file (``a`` and ``sub/../a``) share one."""
    by_real: dict[Path, Shard] = {}
    shards: dict[str, Shard] = {}
    for name in dict.fromkeys(index.weight_map.values()):
        real = Path(os.path.realpath(shard_path(index_path, name)))
        if real not in by_real:
            by_real[real] = _open_shard(index_path, name)
        shards[name] = by_real[real]
    return shards


def _fix(index: ShardIndex, shards: dict[str, Shard], planned: list[Any], options: RunOptions) -> None:
    """Fold across shards (each folded weight goes to the shard of its group's first key), all or nothing."""
    wanted = {key for item in planned for key in item.group.keys}
    tensors: dict[str, Any] = {}
    for shard in _unique(shards.values()):
        keys = {k for k in wanted if shards[index.weight_map[k]] is shard}
        if not keys:
            continue
        if shard.fmt is Format.TORCH_ZIP:
            problem = zip_write_problem(shard.path, options.config.max_fix_bytes)
            if problem is not None:
                raise CheckpointError(f"shard {shard.name}: {problem}")
        if shard.header is not None:
            with open(shard.path, "rb") as handle:
                if safetensors_io.read_header_from(handle) != shard.header:
                    raise CheckpointError(f"shard {shard.name} changed while being fixed; nothing written")
                tensors.update(safetensors_io.read_tensors(handle, shard.header, keys))
        else:
            tensors.update({k: shard.state[k] for k in keys})
    folded = fold_checked(tensors, planned)
    edits: dict[int, tuple[Shard, TableEdit]] = {}
    size_change = 0
    for item in planned:
        group = item.group
        weight = folded[group.folded_key]
        size_change += weight.numel() * weight.element_size()
        for position, key in enumerate(group.keys):
            shard = shards[index.weight_map[key]]
            size_change -= shard.nbytes(key)
            edit = edits.setdefault(id(shard), (shard, TableEdit()))[1]
            if position == 0:
                edit.replacements[key] = (group.folded_key, weight)
            else:
                edit.dropped.add(key)
    transaction = Transaction(index.path)
    try:
        for shard, edit in edits.values():
            _stage_shard(transaction, shard, edit, options)
        _stage_index(transaction, index, planned, size_change)
    except BaseException:
        transaction.discard()
        raise
    transaction.commit()


def _unique(shards: Any) -> list[Shard]:
    return list({id(shard): shard for shard in shards}.values())


def _stage_shard(transaction: Transaction, shard: Shard, edit: TableEdit, options: RunOptions) -> None:
    with progress_bar(f"folding {shard.name}", shard.path.stat().st_size, options.progress) as update:
        if shard.header is not None:
            replacements = {
                key: safetensors_io.Replacement.of(new_key, weight) for key, (new_key, weight) in edit.replacements.items()
            }
            with open(shard.path, "rb") as source:
                expectation = SafetensorsExpectation(source, shard.header)
                for key, (new_key, weight) in edit.replacements.items():
                    expectation.folded[new_key] = (safetensors_io.torch_dtype_name(weight), tuple(weight.shape), tensor_digest(weight))
                expectation.kept = [n for n in shard.header.entries if n not in edit.replacements and n not in edit.dropped]
                with transaction.stage(shard.path, verify=expectation) as handle:
                    if safetensors_io.read_header_from(source) != shard.header:
                        raise CheckpointError(f"shard {shard.name} changed while being fixed")
                    safetensors_io.rewrite(source, shard.header, replacements, edit.dropped, handle, update)
            return
        import wnaudit.checkpoint.torch_io as torch_io
        from .tables import rebuild

        new_state = rebuild(shard.state, {id(shard.state): edit})
        verify = torch_verifier(new_state, lambda written: torch_io.load(written, shard.fmt, trust_pickle=False))
        with transaction.stage(shard.path, verify=verify) as handle:
            torch_io.save(new_state, handle, shard.fmt, update)


def _stage_index(transaction: Transaction, index: ShardIndex, planned: list[Any], size_change: int) -> None:
    first_keys = {item.group.keys[0]: item.group.folded_key for item in planned}
    dropped = {key for item in planned for key in item.group.keys[1:]}
    weight_map: dict[str, str] = {}
    for key, name in index.weight_map.items():
        if key in dropped:
            continue
        weight_map[first_keys.get(key, key)] = name
    document = dict(index.document)
    document[WEIGHT_MAP] = weight_map
    metadata = document.get(METADATA)
    if isinstance(metadata, dict) and isinstance(metadata.get(TOTAL_SIZE), int):
        document[METADATA] = {**metadata, TOTAL_SIZE: metadata[TOTAL_SIZE] + size_change}

    def verify(written: Path) -> None:
        if json.loads(written.read_text(encoding="utf-8")) != document:
            raise VerificationError("the new index does not read back as written")

    with transaction.stage(index.path, verify=verify) as handle:
        handle.write((json.dumps(document, indent=2) + "\n").encode("utf-8"))
