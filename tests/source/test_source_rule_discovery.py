"""Adding a rule touches only its own module: the rules are gathered from the family modules."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import wnaudit.source
from wnaudit.source import rules

NEW_FAMILY = textwrap.dedent(
    '''
    from wnaudit.common.findings import Applicability, Severity
    from wnaudit.source.rules.base import Invalid, Rule, Valid


    class _FamilyBase(Rule):
        """A family's shared base: no code of its own, so not a rule."""


    class BrandNewRule(_FamilyBase):
        code = "WN199"
        title = "a rule added by writing one module"
        severity = Severity.WARNING
        applicability = Applicability.UNSAFE
        VALID = (Valid("x = 1\\n"),)
        INVALID = (Invalid("x = 2\\n"),)

        def check(self, summary, context):
            return iter(())
    '''
)


@pytest.fixture
def extra_family(tmp_path: Path):
    """A family module dropped next to the others (via the package path), removed afterwards."""
    (tmp_path / "brand_new_family.py").write_text(NEW_FAMILY, encoding="utf-8")
    rules.__path__.append(str(tmp_path))
    try:
        yield
    finally:
        rules.__path__.remove(str(tmp_path))
        sys.modules.pop(f"{rules.__name__}.brand_new_family", None)


def test_a_new_family_module_is_gathered_without_editing_any_list(extra_family):
    gathered = rules._gather()
    assert "WN199" in {rule.code for rule in gathered}
    assert "_FamilyBase" not in {rule.__name__ for rule in gathered}
    assert [rule.code for rule in gathered] == sorted(rule.code for rule in gathered)
    assert {rule.code for rule in gathered} - {"WN199"} == {rule.code for rule in rules.RULES}


def _family_modules() -> set[str]:
    """The family modules as the package folder holds them (every module but ``base`` and the private ones)."""
    folder = Path(rules.__file__).parent
    return {p.stem for p in folder.glob("*.py") if p.stem != "base" and not p.stem.startswith("_")}


def test_every_family_module_contributes_its_rules():
    assert _family_modules(), "the package holds family modules"
    assert {rule.__module__.rsplit(".", 1)[1] for rule in rules.RULES} == _family_modules()
    assert len({rule.code for rule in rules.RULES}) == len(rules.RULES)


def test_rule_classes_are_exported_by_name_without_a_list_in_the_package():
    for rule in rules.RULES:
        assert getattr(wnaudit.source, rule.__name__) is rule
        assert rule.__name__ in wnaudit.source.__all__
    with pytest.raises(AttributeError):
        getattr(wnaudit.source, "NoSuchRule")
    from wnaudit.source import LegacyRemoveWeightNorm  # the import users write

    assert LegacyRemoveWeightNorm.code == "WN101"
