"""Show that a folded archive is what it claims before it replaces anything.

The written bytes must read back as an archive with no weight-norm
computation left, load with torch, and give outputs bit-identical (same
dtype, shape and bytes; NaN compares by its bits) to the original program's
on the archive's sample inputs, or, when it has none, on seeded random inputs
of the shapes and dtypes its graph records.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..core import torch_api
from .archive import read_archive
from .errors import ExportedProgramError
from .graph import find_weight_norms


#: The most elements wnaudit generates for the inputs of one program (1 GiB of float32): a recorded
#: shape beyond it is refused, not allocated.
MAX_GENERATED_ELEMENTS = 1 << 28


def program_inputs(program: Any, seed: int = 0) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The archive's sample inputs, else generated inputs of the recorded shapes."""
    sample = program.example_inputs
    user_inputs = program.graph_signature.user_inputs
    if sample is not None and (sample[0] or sample[1] or not user_inputs):
        return tuple(sample[0]), dict(sample[1])
    torch = torch_api.import_torch()
    generator = torch.Generator().manual_seed(seed)
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    generated = []
    total = 0
    for name in user_inputs:
        fake = placeholders[name].meta.get("val") if name in placeholders else None
        if not isinstance(fake, torch.Tensor):
            raise ExportedProgramError(f"not fixed: input {name} is not a tensor of recorded shape; cannot show the fold is exact")
        shape = [int(size) for size in fake.shape]
        total += math.prod(shape)
        if total > MAX_GENERATED_ELEMENTS:
            raise ExportedProgramError(f"not fixed: the recorded input shapes hold over {MAX_GENERATED_ELEMENTS} elements; not generated")
        if fake.dtype.is_floating_point:
            generated.append(torch.randn(shape, generator=generator).to(fake.dtype))
        else:
            generated.append(torch.zeros(shape, dtype=fake.dtype))
    return tuple(generated), {}


def run_program(program: Any, inputs: tuple[tuple[Any, ...], dict[str, Any]]) -> list[Any]:
    """Run the program as ``ep.module()(*args)`` does by default, grad mode on.

    Grad mode matters for the comparison: under ``no_grad`` torch picks a
    different ``linear`` kernel for a weight that requires grad (the folded
    parameter) than for one that does not (the weight the original computes
    there), so the last bits can differ although the weights are identical.
    With grad mode on both weights require grad and take the same kernel.
    """
    torch = torch_api.import_torch()
    with torch.enable_grad():
        return [leaf.detach() if isinstance(leaf, torch.Tensor) else leaf
                for leaf in torch_api.tree_leaves(program.module()(*inputs[0], **inputs[1]))]


def same_bits(expected: list[Any], actual: list[Any]) -> bool:
    torch = torch_api.import_torch()
    if len(expected) != len(actual):
        return False
    for a, b in zip(expected, actual):
        if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
            if a != b:
                return False
            continue
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if not torch.equal(_bytes_of(a), _bytes_of(b)):
            return False
    return True


def _bytes_of(tensor: Any) -> Any:
    torch = torch_api.import_torch()
    flat = tensor.detach().contiguous().reshape(-1)
    return flat if flat.dtype == torch.bool else flat.view(torch.uint8)


def verify_written(written: Path, inputs: tuple[tuple[Any, ...], dict[str, Any]], expected: list[Any]) -> list[str]:
    """Raise unless ``written`` holds no weight norm, loads, and reproduces ``expected`` bit for bit; return its inputs' names."""
    contents = read_archive(written)
    left = [site.folded_name for entry in contents.models for site in find_weight_norms(entry.program)]
    if left:
        raise ExportedProgramError(f"not fixed: the folded archive still computes weight norm for {', '.join(left)}")
    try:
        reloaded = torch_api.export_load(written.read_bytes())
    except Exception as error:
        raise ExportedProgramError(f"not fixed: the folded archive does not load: {type(error).__name__}: {_first_line(error)}") from error
    if not same_bits(expected, run_program(reloaded, inputs)):
        raise ExportedProgramError("not fixed: the folded program's outputs are not bit-identical to the original's")
    return list(reloaded.state_dict)


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def check_runnable(program: Any, sites: list[Any]) -> None:
    """Refuse, before running the program, tensors that would crash torch's kernels instead of raising.

    torch loads a weight with the sizes its payload config declares, whatever the graph recorded for it,
    and its CPU kernels trust both: an empty weight-norm part divides by zero (SIGFPE), a storage-less
    tensor is read through a null pointer (SIGSEGV).  So every stored tensor must have data and match
    the shape and dtype its placeholder records, and every weight-norm part must be non-empty.
    """
    signature = program.graph_signature
    stored = {**signature.inputs_to_parameters, **signature.inputs_to_buffers, **signature.inputs_to_lifted_tensor_constants}
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    for name, fqn in stored.items():
        tensor = program.state_dict.get(fqn, program.constants.get(fqn))
        _check_stored(fqn, tensor, placeholders[name].meta.get("val") if name in placeholders else None)
    for site in sites:
        for part in (site.g, site.v):
            tensor = program.state_dict.get(part.fqn, program.constants.get(part.fqn))
            if tensor is not None and tensor.numel() == 0:
                raise ExportedProgramError(f"not fixed: weight-norm part {part.fqn} of shape {list(tensor.shape)} is empty; torch's kernel would crash on it")


def _check_stored(fqn: str, tensor: Any, recorded: Any) -> None:
    torch = torch_api.import_torch()
    if not isinstance(tensor, torch.Tensor):
        return
    missing = torch_api.storage_missing(tensor)
    if missing is not None:
        raise ExportedProgramError(f"not fixed: {fqn} {missing}")
    if isinstance(recorded, torch.Tensor) and (tuple(recorded.shape) != tuple(tensor.shape) or recorded.dtype != tensor.dtype):
        raise ExportedProgramError(
            f"not fixed: {fqn} is stored as {list(tensor.shape)} {tensor.dtype} but the graph computes with "
            f"{list(recorded.shape)} {recorded.dtype}; its payload config does not match its graph"
        )
