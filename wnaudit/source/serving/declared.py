"""The serving entries a project declares (``[tool.wnaudit] serving``), found in its facts.

A declared entry is where the model leaves for inference: each ``return`` of
a carrier there is an inference site, and a fold goes there first.  Entries
the project does not define are config errors (``entries.py`` reports them).
"""

from __future__ import annotations

from pathlib import Path

from ..project import Project
from .entries import module_of
from .entries import split as split_entry
from .facts import Body
from .file_facts import FileFacts
from .instances import Instances
from .units import Key, Site


class DeclaredEntries:
    """The declared entries' bodies, read on first need, and their inference sites."""

    def __init__(self, project: Project, facts: FileFacts, instances: Instances) -> None:
        self._project = project
        self._facts = facts
        self._instances = instances
        #: Declared serving entries (``declare``), each (its file, its qualified name there, its body); None: not read.
        self._entries: "list[tuple[Path, str, Body]] | None" = None
        self._declared: tuple[tuple[str, ...], Path] = ((), Path.cwd())

    def declare(self, entries: tuple[str, ...], root: Path) -> None:
        """``[tool.wnaudit] serving``: the entry points WN110 checks and fixes (resolved from ``root`` on first need)."""
        self._declared, self._entries = (entries, root), None

    def bodies(self) -> list[tuple[Path, str, Body]]:
        """The declared entries the project defines: (file, qualified name, body); the others are config errors."""
        if self._entries is None:
            self._entries = []
            entries, root = self._declared
            for entry in entries:
                module, qualname = split_entry(entry)
                file = module_of(self._project, root, module)
                facts = self._facts.get(file) if file is not None else None
                if file is None or facts is None:
                    continue
                head, _, method = qualname.partition(".")
                prefix = f"{facts.module}." if facts.module else ""
                cls = facts.classes.get(prefix + head) if method else None
                body = cls.methods.get(method) if cls is not None else facts.functions.get(prefix + qualname)
                if body is not None:
                    self._entries.append((file, prefix + qualname, body))
        return self._entries

    def sites(self, carriers: set[Key]) -> list[Site]:
        """Each ``return`` of a carrier in a declared entry: the model leaves for inference there."""
        sites: list[Site] = []
        for file, _, body in self.bodies():
            for use in body.returned_at:
                reached = frozenset(k for r in use.refs for k in self._instances.of(file, r) if k in carriers)
                if reached:
                    sites.append((file, use, reached))
        return sites
