"""The one registry of finding codes, read by every renderer and the flake8 plugin.

Each entrance declares its codes as data (the source rules as rule classes,
the module, runtime, checkpoint and exported-program entrances in their ``codes.py``); this module only
gathers the declarations, on first use.  Nothing registers itself as a side
effect of being imported, and no import here pulls in torch.
"""

from __future__ import annotations

import functools
from typing import Mapping

from ..common.findings import CodeInfo


@functools.lru_cache(maxsize=None)
def _registry() -> dict[str, CodeInfo]:
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


def code_registry() -> Mapping[str, CodeInfo]:
    """Every finding code wnaudit can emit, in code order."""
    return _registry()


def code_info(code: str) -> CodeInfo | None:
    return _registry().get(code)
