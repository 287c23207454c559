"""Source rules (WN1xx): find the weight-norm traps in model code and fix them in place.

Torch-free by design.  ``lint_files`` is the CLI's entry point; ``lint_source``
and ``fix_source`` work on one file's content (flake8 plugin, editors);
``all_rules`` lists the rule classes (codes, titles, fix safety, examples).
"""

from __future__ import annotations

from .engine import fix_source, lint_files, lint_source
from .reading import SourceError
from .rules import (
    DeprecatedLegacyWeightNorm,
    LegacyRemoveSpectralNorm,
    LegacyRemoveWeightNorm,
    ModernRemoveOnLegacyNorm,
    RemoveParametrizationsNoName,
    RemoveParametrizationsUnparametrized,
    Rule,
    SwallowedLegacyRemoval,
    all_rules,
)

__all__ = [
    "DeprecatedLegacyWeightNorm",
    "LegacyRemoveSpectralNorm",
    "LegacyRemoveWeightNorm",
    "ModernRemoveOnLegacyNorm",
    "RemoveParametrizationsNoName",
    "RemoveParametrizationsUnparametrized",
    "Rule",
    "SourceError",
    "SwallowedLegacyRemoval",
    "all_rules",
    "fix_source",
    "lint_files",
    "lint_source",
]
