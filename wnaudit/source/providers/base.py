"""What a fact provider is: one kind of per-file fact, computed from the file's syntax tree.

As Fixit's rules declare the metadata providers they read, a source rule
declares the providers it needs (``Rule.PROVIDERS``); the analysis runs the
declared ones beside its own walk, on the same parse of each piece of the
file, in the worker that parsed it.  A provider reads only what it is given
(the file's module name, its trees and their positions), so its fact is a
pure function of the file's bytes and where it sits: it travels and is
cached with the file's summary, whose key holds exactly those.
"""

from __future__ import annotations

import ast
import json
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ...common.plain_json import PlainCodec
from ..model import Site

Fact = TypeVar("Fact")


class Sites(Protocol):
    """Where a node of the piece being walked is in the file (1-based lines, character columns)."""

    def site(self, node: ast.AST, unit: str) -> Site: ...

    def lines_of(self, node: ast.AST) -> list[str]:
        """The node's physical lines, as written."""
        ...


class Provider(Generic[Fact]):
    """Computes one fact of one file.  A concrete provider sets the ClassVars and defines ``walk`` and ``fact``.

    One instance per file: ``walk`` is called for each piece of the file in
    order (a big file is parsed in pieces; ``sites`` places a node of the
    current piece), then ``fact`` once.
    """

    #: The fact's name, unique among providers (the key of ``FileSummary.provided``).
    name: ClassVar[str]
    #: The fact's type, as the plain-JSON codec reads it (``list[MethodCall]``), and the data classes in it.
    fact_type: ClassVar[object]
    data_classes: ClassVar[tuple[type, ...]] = ()

    def __init__(self, module: str) -> None:
        self.module = module

    def walk(self, tree: ast.Module, sites: Sites) -> None:
        raise NotImplementedError

    def fact(self) -> Fact:
        raise NotImplementedError

    @classmethod
    def is_concrete(cls) -> bool:
        """A provider with its own name (not a base shared by several)."""
        return "name" in vars(cls)

    @classmethod
    def codec(cls) -> PlainCodec:
        return PlainCodec((*cls.data_classes, Site))

    @classmethod
    def encode(cls, fact: Fact) -> str:
        """The fact as the summary carries it: plain JSON text, checked against ``fact_type`` when read back."""
        return json.dumps(cls.codec().encode(fact, cls.fact_type), separators=(",", ":"))

    @classmethod
    def decode(cls, text: str) -> Any:
        """The fact ``encode`` wrote; ``ValueError`` for anything else."""
        return cls.codec().decode(json.loads(text), cls.fact_type)
