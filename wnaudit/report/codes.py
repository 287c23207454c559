"""The one registry of finding codes, read by every renderer and the flake8 plugin.

Each entrance declares its codes as data (the source rules as rule classes,
the module, runtime, checkpoint and exported-program entrances in their ``codes.py``); this module only
gathers the declarations, on first use.  Nothing registers itself as a side
effect of being imported, and no import here pulls in torch.

Gathering imports every rule module (about 40 ms), which a warm lint that gives
a kept answer needs for nothing else.  The command line therefore asks for the
registry as the per-user cache keeps it (``code_registry(kept=True)``): one small
entry, under the version directory named after wnaudit's own source, so it is
the registry this code gathers or none.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from ..common.cache import CacheStore, Kind, key_of
from ..common.findings import Applicability, CodeInfo, Severity

logger = logging.getLogger(__name__)

_registry_now: dict[str, CodeInfo] | None = None


def _gather() -> dict[str, CodeInfo]:
    from ..checkpoint.codes import CODES as CHECKPOINT_CODES
    from ..exported.codes import CODES as EXPORTED_CODES
    from ..module.codes import CODES as MODULE_CODES
    from ..runtime.codes import CODES as RUNTIME_CODES
    from ..source.rules import SOURCE_CODES

    table: dict[str, CodeInfo] = {}
    for info in (*SOURCE_CODES, *MODULE_CODES, *RUNTIME_CODES, *CHECKPOINT_CODES, *EXPORTED_CODES):
        if info.code in table:
            raise ValueError(f"finding code {info.code} is declared twice")
        table[info.code] = info
    return dict(sorted(table.items()))


def _encode(table: Mapping[str, CodeInfo]) -> list[list[Any]]:
    return [
        [info.code, info.title, Severity(info.severity).value, None if info.applicability is None else info.applicability.value]
        for info in table.values()
    ]


def _decode(stored: Any) -> dict[str, CodeInfo] | None:
    """A kept registry in the shape ``_encode`` writes (None: anything else, never believed)."""
    if type(stored) is not list:
        return None
    table: dict[str, CodeInfo] = {}
    for item in stored:
        if type(item) is not list or len(item) != 4 or not all(isinstance(part, str) for part in item[:2]):
            return None
        code, title, severity, applicability = item
        table[code] = CodeInfo(code, title, Severity(severity), None if applicability is None else Applicability(applicability))
    return table


#: The registry as the per-user cache keeps it (one entry: the version directory names the code).
KEPT_CODES = Kind("codes", sharded=False, check=_decode)
_KEY = key_of("code-registry")


def _kept_or_gathered() -> dict[str, CodeInfo]:
    store = CacheStore.open()
    kept = store.get(KEPT_CODES, _KEY) if store is not None else None
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    table = _gather()
    if store is not None:
        store.put(KEPT_CODES, _KEY, _encode(table))
    return table


def code_registry(kept: bool = False) -> Mapping[str, CodeInfo]:
    """Every finding code wnaudit can emit, in code order.

    ``kept``: the cache's copy may answer (the command line, unless ``--no-cache``); else the
    declarations are gathered.  Either is this code's registry; the first one asked is the process's.
    """
    global _registry_now
    if _registry_now is None:
        _registry_now = _kept_or_gathered() if kept else _gather()
    return _registry_now


def code_info(code: str) -> CodeInfo | None:
    return code_registry().get(code)
