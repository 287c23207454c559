"""What a file's bytes alone say about it: the facts the prefilter and the import reading need.

Every file a whole-tree lint reads is scanned for these (substring tests and
one regular-expression pass over its import statements).  They depend on
nothing but the bytes, so they are computed once per content and kept in the
fact store beside the syntax verdict (``facts/kinds.CONTENT``); where the file
sits is applied when they are used (``project.bindings_of``), so a file that
moved, or is seen from another source root, is still answered right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .project import RawImport, raw_imports
from .reading import may_bind_api_at_module_level, may_have_findings, may_hold_facts


#: Names a file binds itself: ``def``/``class`` (any depth) and assignments.
_DEFINED = re.compile(
    rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)|^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M
)


@dataclass(frozen=True)
class ContentFacts:
    #: It names a catalogue API (``reading.may_have_findings``): it is analysed when linted.
    names_api: bool
    #: It names an API that applies a parametrization (``reading.may_hold_facts``).
    holds_facts: bool
    #: It may bind an API name at module level (``reading.may_bind_api_at_module_level``).
    binds_api: bool
    #: Its import statements, as written (``project.raw_imports``).
    imports: tuple[RawImport, ...]
    #: Names it binds itself (``defined_names``); None until a lint asks (only files it resolves a name into).
    definitions: frozenset[str] | None = None


def facts_of(data: bytes) -> ContentFacts:
    return ContentFacts(
        names_api=may_have_findings(data),
        holds_facts=may_hold_facts(data),
        binds_api=may_bind_api_at_module_level(data),
        imports=raw_imports(data),
    )


def defined_names(data: bytes) -> frozenset[str]:
    """Names bound by ``def``/``class`` (any depth) and assignments: a superset of the module's own names."""
    return frozenset((m.group(1) or m.group(2)).decode("ascii") for m in _DEFINED.finditer(data))


# The cache's form: every name is ASCII word characters, dots, blanks or ``*`` (``project._SEGMENT``),
# so ``\n``, ``;``, ``,`` and ``:`` separate without quoting and a split is the whole parser.
_NO_MODULE = "!"


def encode(facts: ContentFacts) -> list[object]:
    """A JSON value: ``[flags, "level;module;name:alias,...\n...", "name,name,..." or null]``."""
    flags = facts.names_api | facts.holds_facts << 1 | facts.binds_api << 2
    imports = "\n".join(
        f"{s.level};{_NO_MODULE if s.module is None else s.module};" + ",".join(f"{name}:{alias}" for name, alias in s.names)
        for s in facts.imports
    )
    definitions = None if facts.definitions is None else ",".join(sorted(facts.definitions))
    return [flags, imports, definitions]


def decode(value: object) -> ContentFacts | None:
    """The facts ``encode`` wrote, or None for anything of another shape (a damaged or foreign entry)."""
    if not (isinstance(value, list) and len(value) == 3):
        return None
    flags, text, names = value
    if type(flags) is not int or not 0 <= flags < 8 or not isinstance(text, str) or not (names is None or isinstance(names, str)):
        return None
    imports = []
    for line in text.split("\n") if text else ():
        statement = _STATEMENTS.get(line)
        if statement is None:
            statement = _decode_statement(line)
            if statement is None:
                return None
            if len(_STATEMENTS) < _MAX_REMEMBERED:
                _STATEMENTS[line] = statement
        imports.append(statement)
    definitions = None if names is None else frozenset(names.split(",")) if names else frozenset()
    return ContentFacts(bool(flags & 1), bool(flags & 2), bool(flags & 4), tuple(imports), definitions)


#: Decoded statement lines: most import lines recur across a tree's files (``import torch``).
_STATEMENTS: dict[str, RawImport] = {}
_MAX_REMEMBERED = 1 << 16


def _decode_statement(line: str) -> RawImport | None:
    try:
        level, module, pairs = line.split(";")
        if not level.isdigit() or not level.isascii():
            return None
        names = []
        for pair in pairs.split(",") if pairs else ():
            name, alias = pair.split(":")
            names.append((name, alias))
    except ValueError:  # too few or too many separators
        return None
    return RawImport(int(level), None if module == _NO_MODULE else module, tuple(names))
