"""Plain data classes to JSON and back, checked against their type hints: a cache entry is data, never code.

The caches keep analysis results (``source/model.py``, ``source/serving/facts.py``)
between runs.  Pickle would rebuild whatever a file names; this codec builds
only the data classes it was given, field by field, and checks every value
against the field's annotation (``int``, ``str``, ``bool``, ``None``, tuples,
lists, sets, frozensets, dicts, unions with ``None``, and those classes).
Anything of another shape raises ``ValueError``, so a damaged or forged entry
is a miss, never a wrong answer.

A data class is a JSON list of its field values in declaration order; a dict
with string keys is a JSON object, any other dict a list of ``[key, value]``.
The field order is part of the format: the caches are keyed by a fingerprint
of wnaudit's source, so a changed class never reads what an older one wrote.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Callable, Iterable

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]


class PlainCodec:
    """Encoders and decoders for a fixed set of data classes, built once per type."""

    def __init__(self, classes: Iterable[type]) -> None:
        self._classes = {cls for cls in classes if dataclasses.is_dataclass(cls)}
        self._encoders: dict[object, Encoder] = {}
        self._decoders: dict[object, Decoder] = {}

    def encode(self, value: object, annotation: object) -> Any:
        return self._encoder(annotation)(value)

    def decode(self, value: object, annotation: object) -> Any:
        """The value ``encode`` wrote; ``ValueError`` for anything else."""
        try:
            return self._decoder(annotation)(value)
        except (TypeError, KeyError, IndexError, AttributeError) as error:
            raise ValueError(f"not a cache entry: {error}") from error

    # -- encoders ---------------------------------------------------------------
    def _encoder(self, annotation: object) -> Encoder:
        found = self._encoders.get(annotation)
        if found is None:
            self._encoders[annotation] = lambda value: self._encoders[annotation](value)  # recursive classes
            found = self._encoders[annotation] = self._build_encoder(annotation)
        return found

    def _build_encoder(self, annotation: object) -> Encoder:
        if annotation in (int, str, bool, type(None)):
            return _same
        if annotation in self._classes:
            return self._class_encoder(annotation)
        origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
        if origin in (types.UnionType, typing.Union):
            return self._union_encoder(arguments)
        if origin is dict:
            return self._dict_encoder(arguments)
        if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
            item = self._encoder(arguments[0])
            return lambda value: [item(x) for x in value]
        if origin is tuple:
            items = [self._encoder(a) for a in arguments]
            return lambda value: [encode(x) for encode, x in zip(items, value)]
        if origin in (list, set, frozenset):
            item = self._encoder(arguments[0])
            return lambda value: [item(x) for x in value]
        raise TypeError(f"no cache form for {annotation!r}")

    def _class_encoder(self, cls: Any) -> Encoder:
        fields = [(f.name, self._encoder(hint)) for f, hint in _fields(cls)]
        return lambda value: [encode(getattr(value, name)) for name, encode in fields]

    def _union_encoder(self, arguments: tuple[object, ...]) -> Encoder:
        others = [a for a in arguments if a is not type(None)]
        if len(others) != 1 or len(arguments) != 2:
            raise TypeError(f"only X | None unions have a cache form, not {arguments!r}")
        inner = self._encoder(others[0])
        return lambda value: None if value is None else inner(value)

    def _dict_encoder(self, arguments: tuple[object, ...]) -> Encoder:
        key, item = self._encoder(arguments[0]), self._encoder(arguments[1])
        if arguments[0] is str:
            return lambda value: {k: item(v) for k, v in value.items()}
        return lambda value: [[key(k), item(v)] for k, v in value.items()]

    # -- decoders ---------------------------------------------------------------
    def _decoder(self, annotation: object) -> Decoder:
        found = self._decoders.get(annotation)
        if found is None:
            self._decoders[annotation] = lambda value: self._decoders[annotation](value)
            found = self._decoders[annotation] = self._build_decoder(annotation)
        return found

    def _build_decoder(self, annotation: object) -> Decoder:
        if annotation in _PRIMITIVES:
            return _exactly(annotation)
        if annotation in self._classes:
            return self._class_decoder(annotation)
        origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
        if origin in (types.UnionType, typing.Union):
            inner = self._decoder(next(a for a in arguments if a is not type(None)))
            return lambda value: None if value is None else inner(value)
        if origin is dict:
            return self._dict_decoder(arguments)
        if origin is tuple and not (len(arguments) == 2 and arguments[1] is Ellipsis):
            items = [self._decoder(a) for a in arguments]
            return lambda value: tuple([decode(x) for decode, x in zip(items, _list(value, len(items)))])
        if origin in (tuple, list, set, frozenset):
            return self._sequence_decoder(origin, arguments[0])
        raise TypeError(f"no cache form for {annotation!r}")

    def _sequence_decoder(self, build: Any, annotation: object) -> Decoder:
        if annotation in _PRIMITIVES:  # the common case (names, lines, refs): checked in C, no call per item
            only = {annotation}

            def primitives(value: object) -> Any:
                if type(value) is not list or (value and set(map(type, value)) != only):
                    raise ValueError(f"not a list of {annotation!r}")
                return build(value)
            return primitives
        item = self._decoder(annotation)
        return lambda value: build([item(x) for x in _list(value)])

    def _class_decoder(self, cls: Any) -> Decoder:
        """Fields are set as ``__init__`` would set them (no class here has a ``__post_init__``), but checked first."""
        fields = [
            (name, hint if hint in _PRIMITIVES else None, None if hint in _PRIMITIVES else self._decoder(hint))
            for name, hint in ((f.name, hint) for f, hint in _fields(cls))
        ]
        count, new = len(fields), object.__new__
        if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
            raise TypeError(f"{cls.__name__} is not a plain data class")

        def decode(value: object) -> Any:
            found = new(cls)
            attributes = found.__dict__
            for (name, primitive, inner), item in zip(fields, _list(value, count)):
                if primitive is None:
                    attributes[name] = inner(item)  # type: ignore[misc]
                elif type(item) is primitive:
                    attributes[name] = item
                else:
                    raise ValueError(f"{name} is not a {primitive!r}")
            return found
        return decode

    def _dict_decoder(self, arguments: tuple[object, ...]) -> Decoder:
        key, item = self._decoder(arguments[0]), self._decoder(arguments[1])
        if arguments[0] is str:
            def from_object(value: object) -> dict:
                if type(value) is not dict:
                    raise ValueError("not an object")
                return {k: item(v) for k, v in value.items()}  # a JSON object's keys are strings
            return from_object
        return lambda value: {key(k): item(v) for k, v in (_list(pair, 2) for pair in _list(value))}


_PRIMITIVES = (int, str, bool, type(None))


def _fields(cls: Any) -> list[tuple[dataclasses.Field, object]]:
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    if not all(f.init for f in fields):
        raise TypeError(f"{cls.__name__} has fields its constructor does not take")
    return [(f, hints[f.name]) for f in fields]


def _same(value: object) -> object:
    return value


def _exactly(kind: object) -> Decoder:
    def check(value: object) -> object:
        if type(value) is not kind:  # bool is no int here, and no int a bool
            raise ValueError(f"{value!r} is not a {kind!r}")
        return value
    return check


def _list(value: object, length: int | None = None) -> list:
    if type(value) is not list or (length is not None and len(value) != length):
        raise ValueError("not a list of the expected length")
    return value
