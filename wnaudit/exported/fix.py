"""``--fix`` for torch.export archives: fold, write atomically, verify before the rename.

The archive is loaded with torch only when :mod:`.trust` finds nothing that
loading or running it would execute, or with ``--trust-pickle``.  The folded
program is saved to memory, written beside the original with
:func:`wnaudit.common.atomic.atomic_write_bytes`, and verified there
(:func:`.verify.verify_written`); any failure leaves the original untouched
and becomes one line.
"""

from __future__ import annotations

import contextlib
import logging
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..common.atomic import atomic_copy, atomic_write_bytes
from ..common.options import RunOptions
from ..common.write_bound import written_problem, zip_write_problem
from ..core import torch_api
from ..core.catalogue import PT2_LOADED_MODEL, PT2_SAMPLE_INPUTS
from .archive import ArchiveContents, read_member
from .errors import ExportedProgramError
from .graph import WeightNormSite, find_weight_norms
from .program_fold import fold_program
from .sniff import member_path
from .trust import TRUST_FLAG, code_run_on_load
from .verify import check_runnable, program_inputs, run_program, verify_written

logger = logging.getLogger(__name__)

_LOADED_MODEL = PT2_LOADED_MODEL


def fix_archive(path: Path, contents: ArchiveContents, sites: list[WeightNormSite], options: RunOptions) -> list[str]:
    """Fold the weight norms ``sites`` of the archive at ``path`` in place (or into ``options.output``); return the folded names."""
    if [entry.name for entry in contents.models] != [_LOADED_MODEL]:
        raise ExportedProgramError("not fixed: the archive holds several programs; torch.export.load reads only 'model'")
    _check_write_bound(zip_write_problem(path, options.config.max_fix_bytes))
    data = path.read_bytes()
    check_trusted(data, contents, options.trust_pickle)
    reference = _load(data, "the archive")
    with _stage("the program cannot be checked before it runs"):
        check_runnable(reference, sites)
    with _stage("the program does not run on its sample inputs or inputs of its recorded shapes"):
        inputs = program_inputs(reference)
        expected = run_program(reference, inputs)
    with _stage("the weight norms cannot be folded"):
        folded_program, names = fold_program(_load(data, "the archive"), sites)
    with _stage("torch.export.save cannot write the folded program"):
        written = torch_api.export_save(folded_program)
    _check_write_bound(written_problem(len(written), len(data), options.config.max_fix_bytes))

    def verify(candidate: Path) -> None:
        with _stage("the folded program cannot be checked"):
            verify_written(candidate, inputs, expected)

    target = options.output if options.output is not None else path
    atomic_write_bytes(target, written, verify=verify)
    logger.info("%s: folded %d weight norms into %s: %s", path, len(names), target, ", ".join(names))
    return names


def _check_write_bound(problem: str | None) -> None:
    if problem is not None:
        raise ExportedProgramError(problem)


@contextlib.contextmanager
def _stage(what: str) -> Iterator[None]:
    """A failure inside torch while fixing (a program it loaded but cannot run, fold or save) is one line."""
    try:
        yield
    except ExportedProgramError:
        raise
    except Exception as error:
        text = str(error).strip()
        raise ExportedProgramError(f"not fixed: {what}: {type(error).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")) from error


def copy_unchanged(path: Path, output: Path) -> None:
    """``--fix -o OUT`` with nothing to fold still writes OUT (a byte copy, verified), as for checkpoints."""
    atomic_copy(path, output, lambda message: ExportedProgramError(f"not written: {message}"))


def check_trusted(data: bytes, contents: ArchiveContents, trust_pickle: bool) -> None:
    """Refuse, in one line, to load an archive whose loading would run code from it, unless trusted."""
    if trust_pickle:
        return
    reasons = code_run_on_load(contents)
    if not reasons and not _sample_inputs_load_restricted(data, contents):
        reasons = ["its sample inputs need full unpickling"]
    if reasons:
        raise ExportedProgramError(
            f"not fixed: loading it with torch would run code from the file ({reasons[0]}); "
            f"rerun with {TRUST_FLAG} only if you trust it"
        )


def _sample_inputs_load_restricted(data: bytes, contents: ArchiveContents) -> bool:
    """Whether every program's sample inputs load with torch's restricted unpickler (torch.export.load would not fall back).

    torch reads the sample inputs of every program in the archive, not only of the one it returns.
    """
    import io

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {member_path(info.filename): info for info in archive.infolist()}
        wanted = (PT2_SAMPLE_INPUTS.format(entry.name) for entry in contents.models)
        payloads = [read_member(archive, members[inner]) for inner in wanted if inner in members]
    for payload in payloads:
        if not payload:
            continue
        try:
            torch_api.restricted_load(payload)
        except Exception:  # noqa: BLE001 - anything the restricted unpickler refuses
            return False
    return True


def _load(data: bytes, what: str) -> object:
    try:
        return torch_api.export_load(data)
    except Exception as error:
        text = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ExportedProgramError(f"not fixed: torch.export.load cannot load {what}: {type(error).__name__}: {text}") from error


def load_with_folded_twin(path: Path, *, trust_pickle: bool) -> tuple[object, object, list[str]]:
    """The archive's program as stored and a folded twin (the fold ``--fix`` writes, in memory), for ``wnaudit bench``.

    The same trust rule as ``--fix``: loading an archive that would run code from it needs ``--trust-pickle``.
    """
    from .archive import read_archive

    contents = read_archive(path)
    if [entry.name for entry in contents.models] != [_LOADED_MODEL]:
        raise ExportedProgramError("not a torch.export archive holding one program 'model' (an AOTInductor package cannot be folded)")
    data = path.read_bytes()
    check_trusted(data, contents, trust_pickle)
    live = _load(data, "the archive")
    sites = find_weight_norms(contents.models[0].program)
    with _stage("the program cannot be checked before it runs"):
        check_runnable(live, sites)
    with _stage("the weight norms cannot be folded"):
        folded, names = fold_program(_load(data, "the archive"), sites)
    return live, folded, names
