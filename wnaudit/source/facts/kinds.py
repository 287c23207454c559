"""The kinds of per-file fact, each declared once: what it reads (its key), how it is kept, how it is computed.

- ``CONTENT``: a file's byte facts (``content.facts_of``: flags, imports), by the digest of its bytes;
- ``SYNTAX``: the parse's verdict on those bytes, ``"ok"`` or the one-line syntax error (only verdicts a
  parse gives for the same bytes every time; the analysis computes it);
- ``SUMMARY``: a file's analysis (``model.FileSummary``, with the facts of the rules' providers), keyed by
  its bytes, where it sits and the project names it calls that stand for torch APIs;
- ``SERVING``: WN110's serving facts of a file (``serving/facts.py``), by its bytes, module name and
  whether it is a package;
- ``SERVED``: WN110's verdict for one application, kept in the record of derived answers
  (``derived_cache.py``) with the observations it rests on, never on its own;
- ``FOLD_POINT``: why a served model has no safe point for WN110's fold (``serving/fold_point.py``), by the
  serving file's bytes, the line of the model and the model as written.

The disk kinds, keys and entry shapes are those earlier versions wrote (``common/cache.py``: one format,
one bound).  An entry that does not decode into the data classes it must be is a miss, never believed.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Any, NamedTuple

from ...common.cache import Kind, digest_of, key_of
from ...common.plain_json import PlainCodec
from .. import content, model
from ..content import ContentFacts
from ..model import FileSummary
from ..project import Location
from ..serving import facts as serving_facts
from ..serving.facts import ServingFacts
from ..serving.verdict import Verdict  # defined apart: the record of derived answers reads it without the model
from .store import FactKind

__all__ = [
    "CONTENT", "FOLD_POINT", "OK", "SERVED", "SERVING", "SUMMARY", "SYNTAX", "SYNTAX_ERROR_PREFIX", "Blob", "ServedAt", "ServingOf",
    "FoldPointAt", "SummaryOf", "Verdict", "data_classes", "digest_of",
]


def data_classes(module: ModuleType) -> list[type]:
    """The data classes ``module`` defines (what its entries may be built of)."""
    return [
        cls for cls in vars(module).values()
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
    ]


# -- byte facts -------------------------------------------------------------------------
class Blob(NamedTuple):
    """A file's bytes and their digest (``common.cache.digest_of``); ``data`` None: only the digest is at hand."""

    digest: bytes
    data: bytes | None = None

    @classmethod
    def of(cls, data: bytes) -> Blob:
        return cls(digest_of(data), data)


def _digest_key(blob: Blob) -> str:
    return blob.digest.hex()


def _facts_of(blob: Blob) -> ContentFacts:
    if blob.data is None:
        raise ValueError("byte facts need the bytes")
    return content.facts_of(blob.data)


CONTENT: FactKind[Blob, ContentFacts] = FactKind(
    "content", _digest_key, Kind("content", sharded=True, check=content.decode), content.encode, compute=_facts_of,
)

#: The verdict of a file that parses.
OK = "ok"
#: How every kept error message starts (``pipeline.analyse.syntax_message``).
SYNTAX_ERROR_PREFIX = "syntax error at "


def _verdict(value: object) -> str | None:
    ok = isinstance(value, str) and (value == OK or (value.startswith(SYNTAX_ERROR_PREFIX) and "\n" not in value))
    return value if ok else None  # type: ignore[return-value]


def _kept_verdict(value: str) -> str:
    if _verdict(value) is None:
        raise ValueError(f"not a cacheable syntax verdict: {value!r}")
    return value


SYNTAX: FactKind[Blob, str] = FactKind("syntax", _digest_key, Kind("syntax", sharded=True, check=_verdict), _kept_verdict)


# -- analyses ---------------------------------------------------------------------------
class SummaryOf(NamedTuple):
    """What a file's analysis reads besides its bytes: where it sits and the aliases of the names it calls."""

    digest: bytes
    path: str
    location: Location
    aliases: dict[str, frozenset[str]] | None = None


def summary_key(ask: SummaryOf) -> str:
    return key_of(
        ask.digest.hex(), ask.path, ask.location.module, ask.location.is_package, str(ask.location.path),
        sorted((name, sorted(apis)) for name, apis in (ask.aliases or {}).items()),
    )


_SUMMARY_CODEC = PlainCodec(data_classes(model))


def _summary(value: Any) -> FileSummary:
    return _SUMMARY_CODEC.decode(value, FileSummary)  # type: ignore[no-any-return]


def _encode_summary(summary: FileSummary) -> Any:
    return _SUMMARY_CODEC.encode(dataclasses.replace(summary, path="", file=""), FileSummary)  # the key holds both


def _placed(summary: FileSummary, ask: SummaryOf) -> FileSummary:
    summary.path, summary.file = ask.path, str(ask.location.path)
    return summary


#: Not remembered: the workspace keeps the analyses it uses (a run's summaries are asked once each).
SUMMARY: FactKind[SummaryOf, FileSummary] = FactKind(
    "summary", summary_key, Kind("summary", sharded=False, check=_summary), _encode_summary, _placed, remember=False,
)


class ServingOf(NamedTuple):
    """What a file's serving facts read: its bytes, its module name, whether it is a package."""

    digest: bytes
    module: str
    is_package: bool

    @classmethod
    def at(cls, digest: bytes, location: Location) -> ServingOf:
        return cls(digest, location.module, location.is_package)


#: Part of the key, as earlier versions wrote it (so their entries stay valid: the version directory covers the code).
_SERVING_VERSION = 14


def serving_key(ask: ServingOf) -> str:
    return key_of("serving-facts", _SERVING_VERSION, ask.digest.hex(), ask.module, ask.is_package)


_SERVING_CODEC = PlainCodec(data_classes(serving_facts))


def _serving(value: Any) -> ServingFacts:
    return _SERVING_CODEC.decode(value, ServingFacts)  # type: ignore[no-any-return]


def _encode_serving(found: ServingFacts) -> Any:
    return _SERVING_CODEC.encode(found, ServingFacts)


SERVING: FactKind[ServingOf, ServingFacts] = FactKind(
    "serving", serving_key, Kind("serving", sharded=False, check=_serving), _encode_serving,
)


# -- WN110's verdicts -------------------------------------------------------------------
class ServedAt(NamedTuple):
    """One application WN110 asks about: the file, the unit and the line of the call."""

    file: str
    unit: str
    line: int


def _served_key(at: ServedAt) -> str:
    return f"{at.file}\0{at.unit}\0{at.line}"


#: No disk kind of its own: the record of derived answers keeps these (``FactStore.keep_in``).
SERVED: FactKind[ServedAt, Verdict | None] = FactKind("served", _served_key)


# -- fold points -------------------------------------------------------------------------
class FoldPointAt(NamedTuple):
    """What the fold-point answer reads: the serving file's bytes (by digest), the model's line, the model as written."""

    digest: bytes
    line: int
    target: str


def _fold_point_key(at: FoldPointAt) -> str:
    return key_of("fold-point", at.digest.hex(), at.line, at.target)


def _reason(value: object) -> str | None:
    return value if isinstance(value, str) and "\n" not in value else None


#: Why the model has no safe point for the fold ("": it has one; None: this process could not tell, never kept
#: on disk).  A verdict rebuilt after an edit elsewhere takes it from here instead of parsing the serving file;
#: the stage that asks computes it (``project_model.py``).
FOLD_POINT: FactKind[FoldPointAt, "str | None"] = FactKind(
    "fold_point", _fold_point_key, Kind("fold_point", sharded=True, check=_reason),
)
