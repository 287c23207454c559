"""Read a ``.pt2`` archive's JSON members from the zip, without torch and without unpickling.

What is read: each ``models/NAME.json`` (the serialized graph and its
signature; any other member below ``models/``, which torch would load as a
program too, is refused), the weights and constants configs beside it, and for an
AOTInductor package the generated ``*.wrapper.cpp`` sources and weights
configs (constant names only).  Members are size-checked before they are
inflated, so a zip bomb is refused instead of read.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.catalogue import (
    PT2_AOTI_WEIGHTS_CONFIG_SUFFIX,
    PT2_AOTI_WRAPPER_SUFFIX,
    PT2_AOTINDUCTOR_DIR,
    PT2_CONSTANTS_CONFIG,
    PT2_MODEL_JSON_SUFFIX,
    PT2_MODELS_DIR,
    PT2_WEIGHTS_CONFIG,
)
from .errors import ExportedProgramError
from .sniff import ArchiveKind, kind_from_names, member_path

#: A serialized graph or config larger than this is not inflated (graphs of large models are a few MB).
MAX_JSON_BYTES = 512 * 1024 * 1024


@dataclass
class ModelEntry:
    """One exported program of the archive: its graph JSON and the payload configs naming its tensors."""

    name: str
    program: dict[str, Any]
    weights_config: dict[str, Any] = field(default_factory=dict)
    constants_config: dict[str, Any] = field(default_factory=dict)


@dataclass
class ArchiveContents:
    kind: ArchiveKind
    models: list[ModelEntry]
    #: AOTInductor: every generated wrapper source and weights config, by member name.
    aoti_sources: dict[str, str] = field(default_factory=dict)
    aoti_weight_configs: dict[str, Any] = field(default_factory=dict)
    #: Every member path below the top-level folder (for the trust screen).
    members: list[str] = field(default_factory=list)


def read_archive(path: Path) -> ArchiveContents:
    """Read what the audit needs; raise :class:`ExportedProgramError` with one line on any problem."""
    try:
        with zipfile.ZipFile(path) as archive:
            return _read(archive)
    except zipfile.BadZipFile as error:
        raise ExportedProgramError(f"damaged .pt2 archive: {error}") from error
    except (EOFError, zipfile.LargeZipFile, ValueError) as error:
        raise ExportedProgramError(f"damaged .pt2 archive: truncated or corrupt ({error})") from error


def _read(archive: zipfile.ZipFile) -> ArchiveContents:
    _check_one_folder(archive.namelist())
    infos = {member_path(info.filename): info for info in archive.infolist()}
    kind = kind_from_names([info.filename for info in infos.values()])
    if kind is None:
        raise ExportedProgramError("not a torch.export archive nor an AOTInductor package (no pt2 archive_format)")
    contents = ArchiveContents(kind=kind, models=[], members=sorted(infos))
    for inner in sorted(infos):
        if inner.startswith(PT2_MODELS_DIR) and not is_program_member(inner):
            raise ExportedProgramError(
                f"member {inner!r} is not a program description torch.export.save writes ({PT2_MODELS_DIR}NAME{PT2_MODEL_JSON_SUFFIX}), "
                "yet torch would load it as a program; not read"
            )
        if inner.startswith(PT2_MODELS_DIR):
            name = inner[len(PT2_MODELS_DIR) : -len(PT2_MODEL_JSON_SUFFIX)]
            entry = ModelEntry(name=name, program=_json(archive, infos[inner]))
            for config, attr in ((PT2_WEIGHTS_CONFIG, "weights_config"), (PT2_CONSTANTS_CONFIG, "constants_config")):
                member = config.format(name)
                if member in infos:
                    setattr(entry, attr, _config(archive, infos[member]))
            contents.models.append(entry)
        elif inner.startswith(PT2_AOTINDUCTOR_DIR) and inner.endswith(PT2_AOTI_WRAPPER_SUFFIX):
            contents.aoti_sources[inner] = _text(archive, infos[inner])
        elif inner.startswith(PT2_AOTINDUCTOR_DIR) and inner.endswith(PT2_AOTI_WEIGHTS_CONFIG_SUFFIX):
            contents.aoti_weight_configs[inner] = _json(archive, infos[inner])
    return contents


def is_program_member(inner: str) -> bool:
    """``models/NAME.json`` with a NAME: torch loads *every* member below ``models/`` as a program, naming it by
    cutting the suffix's length off whatever the member ends with, so any other name there is a program
    wnaudit would not see (and one whose payloads torch looks up under a mangled name)."""
    name = inner[len(PT2_MODELS_DIR) :]
    return inner.startswith(PT2_MODELS_DIR) and name.endswith(PT2_MODEL_JSON_SUFFIX) and len(name) > len(PT2_MODEL_JSON_SUFFIX)


def _check_one_folder(names: list[str]) -> None:
    """torch reads every member below the first member's folder and refuses any other; so does wnaudit.

    Members outside that folder, or a name given twice, would let wnaudit and torch read
    different things (and make ``torch.export.load`` fall back to the pickled pre-2.8 layout).
    """
    folder = names[0].partition("/")[0] + "/" if names else ""
    outside = next((name for name in names if not name.startswith(folder)), None)
    if outside is not None:
        raise ExportedProgramError(f"not a .pt2 archive torch can read: member {outside!r} lies outside its top-level folder {folder!r}")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ExportedProgramError(f"not a .pt2 archive torch can read: member {name!r} appears twice")
        seen.add(name)


def _config(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> dict[str, Any]:
    """A payload config's ``config`` object: tensor name -> how its payload is stored."""
    config = _json(archive, info).get("config", {})
    if not isinstance(config, dict):
        raise ExportedProgramError(f"{info.filename}: 'config' is not a JSON object")
    return config


def _text(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    try:
        return read_member(archive, info).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExportedProgramError(f"{info.filename} is not UTF-8 text ({error.reason})") from error


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, size-checked before inflating; every zip failure is one :class:`ExportedProgramError` line."""
    if info.file_size > MAX_JSON_BYTES:
        raise ExportedProgramError(f"{info.filename} declares {info.file_size} bytes inflated (a zip bomb?); not inflated")
    try:
        return archive.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
        raise ExportedProgramError(f"{info.filename}: cannot be read: {error}") from error
    except NotImplementedError as error:  # zipfile: "That compression method is not supported"
        raise ExportedProgramError(f"{info.filename}: {error} (compression method {info.compress_type})") from error
    except RuntimeError as error:  # zipfile's "is encrypted, password required"
        raise ExportedProgramError(f"{info.filename} is encrypted; torch cannot read it either") from error


def _json(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> dict[str, Any]:
    try:
        value = json.loads(_text(archive, info))
    except json.JSONDecodeError as error:
        raise ExportedProgramError(f"{info.filename}: not valid JSON ({error.msg}, line {error.lineno})") from error
    except RecursionError as error:
        raise ExportedProgramError(f"{info.filename}: JSON nested too deeply to read") from error
    if not isinstance(value, dict):
        raise ExportedProgramError(f"{info.filename}: expected a JSON object, found {type(value).__name__}")
    return value
