"""Canonical JSON and the identity hashes built on it.

Identity must never depend on the interpreter's hash seed, on insertion order, or on a
copy or reload round trip. Object keys are sorted, separators are compact, text is UTF-8,
and every set becomes a sorted array (see the design record on tool scope sets): at any
depth, in plain data and inside pydantic models alike. Models are dumped in Python mode and
normalised here, because pydantic's JSON mode turns a set into a list in iteration order
before Cairn could sort it. NaN and the infinities are refused because JSON has no spelling
for them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

__all__ = ["canonical_json_bytes", "canonical_sorted", "sha256_hex"]


def canonical_sorted(items: Iterable[Any]) -> list[Any]:
    """Return a set's members as a list in canonical order.

    The order is that of each member's own canonical JSON bytes, so it is defined for any
    JSON-able member and agrees with plain string order for ordinary text. Pydantic
    serializers for set fields use this too, so a set has one order wherever it is dumped.
    """
    normalized = [_normalize(item) for item in items]
    keyed = sorted(((_encode(item), item) for item in normalized), key=lambda pair: pair[0])
    return [item for _, item in keyed]


def canonical_json_bytes(value: Any) -> bytes:
    """Encode ``value`` as canonical JSON: sorted keys, compact, UTF-8, sets sorted.

    Pydantic models are dumped in JSON mode first. Raises ``ValueError`` for NaN or an
    infinity, for text that is not valid Unicode, and ``TypeError`` for a value JSON
    cannot hold or an object key that is not a string.
    """
    return _encode(_normalize(value))


def sha256_hex(value: Any) -> str:
    """SHA-256 over the canonical JSON of ``value``, as lowercase hex."""
    return hashlib.sha256(canonical_json_bytes(value)).hexdigest()


def _encode(normalized: Any) -> bytes:
    try:
        text = json.dumps(
            normalized,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except ValueError as exc:
        raise ValueError(f"canonical JSON refuses NaN and infinities: {exc}") from exc
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"canonical JSON refuses text that is not valid Unicode: {exc}") from exc


def _normalize(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"canonical JSON refuses NaN and infinities, got {value!r}")
        return value
    if isinstance(value, BaseModel):
        return _normalize(value.model_dump(mode="python"))
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"canonical JSON needs string object keys, got {key!r}")
            out[key] = _normalize(item)
        return out
    if isinstance(value, (set, frozenset)):
        return canonical_sorted(value)
    if isinstance(value, (list, tuple)):
        return [_normalize(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        raise TypeError("canonical JSON cannot encode bytes; decode them to text first")
    try:
        # Dates, paths, enums, UUIDs and the like, spelled as pydantic spells them in JSON.
        jsonable = to_jsonable_python(value)
    except PydanticSerializationError:
        jsonable = value
    if jsonable is value or isinstance(jsonable, type(value)):
        raise TypeError(f"canonical JSON cannot encode a value of type {type(value).__name__}")
    return _normalize(jsonable)
