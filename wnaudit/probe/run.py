"""Probe one loader: call it, audit the module it returns (WN2xx), watch one inference call (WN206/WN207).

Every finding is labelled with the entry point (``vocoder.serve:load_vocoder``)
and names the tensor in ``object``.  Whatever goes wrong (the import, the
loader, a returned value that is not a module, the input, the call) is one
:class:`~wnaudit.common.findings.InputError` naming the entry point; the
findings made before it are kept.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..common.entry_points import EntryPoint, EntryPointError, first_line, resolve_entry_point
from ..common.findings import Finding, InputError, RunResult
from ..core import torch_api
from .inputs import CallArguments, InputFileError, random_inputs, saved_inputs

logger = logging.getLogger("wnaudit.probe")


@dataclass(frozen=True)
class ProbeRequest:
    """The inference call to watch: random inputs of these shapes, or the tensors saved in ``input_file``; neither: none."""

    input_shapes: tuple[tuple[int, ...], ...] = ()
    input_file: Path | None = None
    #: Directories importable besides the current one (``[tool.wnaudit] src``).
    search: tuple[Path, ...] = ()

    @property
    def calls_model(self) -> bool:
        return bool(self.input_shapes) or self.input_file is not None


@dataclass
class Probed:
    """What one probe found, and the entry point it resolved (None: it could not be imported)."""

    result: RunResult
    entry: EntryPoint | None = None
    module: Any = None


class _Failed(Exception):
    """One step of the probe failed; its message is the error line."""


def probe(spec: str, request: ProbeRequest) -> Probed:
    """Import and call ``spec``, audit its model and, when asked, watch one inference call."""
    probed = Probed(RunResult())
    try:
        _torch()
        try:
            probed.entry = resolve_entry_point(spec, request.search)
            probed.module = probed.entry.call()
        except EntryPointError as error:
            raise _Failed(str(error)) from error
        _check_module(spec, probed.module)
        probed.result.findings.extend(_audit(spec, probed.module))
        if request.calls_model:
            probed.result.findings.extend(_watched_call(spec, probed.module, request))
    except _Failed as failure:
        probed.result.errors.append(InputError(spec, str(failure).removeprefix(f"{spec}: ")))
    return probed


def _torch() -> Any:
    try:
        return torch_api.import_torch()
    except torch_api.TorchMissingError:
        raise _Failed(torch_api.missing("torch", "wnaudit probe")) from None


def _check_module(spec: str, module: Any) -> None:
    torch = torch_api.import_torch()
    if not isinstance(module, torch.nn.Module):
        raise _Failed(f"the loader returned a {type(module).__name__}, not a torch.nn.Module")


def _audit(spec: str, module: Any) -> list[Finding]:
    from ..module import audit_module

    return audit_module(module, path=spec)


def _arguments(module: Any, request: ProbeRequest) -> CallArguments:
    if request.input_file is not None:
        try:
            return saved_inputs(request.input_file, module)
        except InputFileError as error:
            raise _Failed(f"--input {error}") from None
    return random_inputs(module, request.input_shapes)


def _watched_call(spec: str, module: Any, request: ProbeRequest) -> Sequence[Finding]:
    """One call under ``torch.inference_mode`` inside a watch; the model stays in the mode the loader left it in."""
    arguments = _arguments(module, request)
    from ..runtime import watch

    torch = torch_api.import_torch()
    watched = watch(module)
    try:
        with watched, torch.inference_mode():
            module(*arguments.args, **dict(arguments.kwargs))
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the model's forward is project code
        raise _Failed(f"running the model failed: {first_line(error)}") from error
    return [dataclasses.replace(found, path=spec) for found in watched.findings]
