"""Project names that stand for torch APIs: ``pkg.compat.weight_norm`` followed through re-exports to the catalogue.

A linted file that calls such a name is analysed again with it resolved
(``Analyses.complete``); WN110 follows a name to the flag choice it is bound
to (``bound_choice``).  Only the files a name resolves into are read.
"""

from __future__ import annotations

from pathlib import Path

from ..core import catalogue
from .analyses import Analyses, called_names
from .analysis import Aliases
from .import_scan import ImportScan
from .model import FileSummary, Site
from .project import Location, Project
from .provisional import provisional
from .resolve import API_ROOTS

_MAX_CHAIN = 32


class ApiNames:
    """The catalogue APIs project names are bound to, and the flag choices they name, each decided once per run."""

    def __init__(self, project: Project, scan: ImportScan, analyses: Analyses) -> None:
        self.project = project
        self.scan = scan
        self.analyses = analyses
        self._api_memo: dict[tuple[Path, str], frozenset[str]] = {}
        self._choice_memo: dict[tuple[Path, str], tuple[Path, Site] | None] = {}

    def aliases(self, summary: FileSummary) -> Aliases:
        """Names ``summary`` calls that are bound, in the project module defining them, to torch APIs."""
        location = self.project.locate(summary.file or summary.path)
        out: Aliases = {}
        for name in called_names(summary):
            apis = self.api_names(name, location, 0)
            if apis:
                out[name] = apis
        return out

    def names_api(self, summary: FileSummary, name: str) -> bool:
        location = self.project.locate(summary.file or summary.path)
        return any(
            catalogue.spelling_for_api(value) is not None or self.api_names(value, location, 1)
            for value in summary.exports.get(name, ())
        )

    def api_names(self, dotted: str, location: Location, depth: int) -> frozenset[str]:
        """The catalogue APIs a project name (``pkg.compat.weight_norm``) is bound to, following re-exports."""
        if depth > _MAX_CHAIN or dotted.partition(".")[0] in API_ROOTS:
            return frozenset()
        key = (location.path, dotted)
        cached = self._api_memo.get(key)
        if cached is not None:
            return cached
        with provisional(self._api_memo, key, frozenset()):  # a cycle of re-exports binds nothing
            frozen = self._api_names(dotted, location, depth)
        self._api_memo[key] = frozen
        return frozen

    def _api_names(self, dotted: str, location: Location, depth: int) -> frozenset[str]:
        result: set[str] = set()
        found = self.project.resolve(dotted, location)
        if found is not None and found[1] and self.scan.may_export_api(found[0], found[1].partition(".")[0]):
            target_path, inner = found
            target = self.analyses.first_kept(target_path)
            if target is not None:
                target_location = self.project.locate(target_path)
                head, _, rest = inner.partition(".")
                values = list(target.exports.get(head, ()))
                values.extend(f"{m}.{head}" for m in target.star_modules)
                for value in values:
                    full = f"{value}.{rest}" if rest else value
                    if catalogue.spelling_for_api(full) is not None:
                        result.add(full)
                    else:
                        result |= self.api_names(full, target_location, depth + 1)
        return frozenset(result)

    def bound_choice(self, dotted: str, location: Location, depth: int = 0) -> tuple[Path, Site] | None:
        """The file and site of the legacy ``weight_norm`` in the flag choice a project name is bound to.

        ``voc.norms.norm_f`` where ``voc/norms.py`` writes ``norm_f = weight_norm if flag else spectral_norm``,
        followed through plain re-exports (``from .norms import norm_f`` in a package ``__init__``).  Only the
        file the name resolves to is read, and it is the one ``api_names`` has already read for the same name.
        """
        if depth > _MAX_CHAIN or dotted.partition(".")[0] in API_ROOTS:
            return None
        key = (location.path, dotted)
        if key in self._choice_memo:
            return self._choice_memo[key]
        with provisional(self._choice_memo, key, None):  # a cycle of re-exports binds nothing
            result = self._bound_choice(dotted, location, depth)
        self._choice_memo[key] = result
        return result

    def _bound_choice(self, dotted: str, location: Location, depth: int) -> tuple[Path, Site] | None:
        result: tuple[Path, Site] | None = None
        found = self.project.resolve(dotted, location)
        if found is not None and found[1] and "." not in found[1]:
            target_path, head = found
            target = self.analyses.first(target_path)
            if target is not None:
                site = target.choices.get(head)
                if site is not None:
                    result = (self.project.locate(target_path).path, site)
                else:
                    values = list(target.exports.get(head, ())) or [f"{m}.{head}" for m in target.star_modules]
                    if len(values) == 1:  # a re-export; a name with several values is not one binding
                        result = self.bound_choice(values[0], self.project.locate(target_path), depth + 1)
        return result
