"""Dataclasses to and from the JSON of a StreamJob's status, by their fields' type hints.

A field's key is its name in camelCase (a trailing ``_`` dropped, for names Python
reserves), or the ``KEY`` of its metadata where camelCase would spell it otherwise; so a
status key is written once, as its field. A field that is None has no key: it is absent
from what is written and from what was read. Nested dataclasses, tuples and string-keyed
maps of them, enums, numbers and strings are converted; a field hinted ``dict`` is kept
as the JSON it is (what another module writes there)."""
from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from segflow.errors import SegflowError

KEY = "status_key"
T = TypeVar("T")


class InvalidStatus(SegflowError):
    """The status holds a value the operator cannot have written."""


def json_key(f: dataclasses.Field) -> str:
    if KEY in f.metadata:
        return f.metadata[KEY]
    first, *rest = f.name.rstrip("_").split("_")
    return first + "".join(word.capitalize() for word in rest)


def dump(value: Any) -> Any:
    """The JSON of ``value``: a dataclass becomes an object of its fields that are not None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {json_key(f): dump(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) is not None}
    if isinstance(value, tuple):
        return [dump(item) for item in value]
    if isinstance(value, dict):
        return {k: dump(item) for k, item in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    return value


def merge_patch(value: Any, before: Any) -> Any:
    """The JSON merge patch (RFC 7386) that turns ``before``'s JSON into ``value``'s: an
    object of one dataclass patched field by field, a field that is gone set to null (a
    whole object in its place would leave the gone field's old value behind)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and type(before) is type(value):
        return {json_key(f): merge_patch(getattr(value, f.name), getattr(before, f.name))
                for f in dataclasses.fields(value) if getattr(value, f.name) != getattr(before, f.name)}
    return dump(value)


def load(cls: type[T], raw: Mapping, where: str = "status") -> T:
    """An instance of the dataclass ``cls`` from its JSON; keys it has no field for are
    ignored (another writer's, such as kopf's own)."""
    shape: Any = cls
    hints = _hints(shape)
    values = {}
    for f in dataclasses.fields(shape):
        key = json_key(f)
        if raw.get(key) is not None:
            values[f.name] = _load(hints[f.name], raw[key], f"{where}.{key}")
    return cls(**values)


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _load(hint: Any, raw: Any, where: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        (hint,) = (a for a in args if a is not type(None))
        return _load(hint, raw, where)
    try:
        if origin is tuple:
            return tuple(_load(args[0], item, f"{where}[{i}]") for i, item in enumerate(raw))
        if origin is dict:
            return {str(k): _load(args[1], item, f"{where}.{k}") for k, item in raw.items()}
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return load(hint, raw, where)
        if hint is dict:
            return dict(raw)
        return hint(raw)
    except (TypeError, ValueError, AttributeError) as exc:
        raise InvalidStatus(f"{where} is {raw!r}, which this operator does not write ({exc}); the status is the "
                            f"operator's own: remove the field (kubectl patch --subresource=status) and the "
                            "operator writes it again") from None
