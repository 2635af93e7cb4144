"""A server's tool schemas, checked and put in one order before Cairn uses or hashes them.

JSON Schema gives no meaning to the order of ``required`` or of an ``enum`` of strings, and a
Python server that builds either from a set sends a different order after every restart. So
both are sorted at every depth of the schema, and a restarted server yields the same
``tool_schema_sha256``. Values that are data rather than schema (``const``, ``default``,
``examples``, and the members of an ``enum`` themselves) are left exactly as sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["canonical_schema", "schema_problem"]

_DATA_KEYWORDS = frozenset({"const", "default", "examples", "enum"})
# Keywords whose value maps names (which may be "required" or "enum") to subschemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def canonical_schema(schema: dict[str, Any], redact: Callable[[str], str] | None = None) -> dict[str, Any]:
    """A copy of ``schema`` with ``required`` and string ``enum`` arrays sorted at every depth,
    and every string passed through ``redact`` if given."""
    result = _canonical(schema, redact)
    assert isinstance(result, dict)
    return result


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` cannot be a tool's input schema, or ``None`` if it can.

    It must be a JSON object, valid under its own (or the latest) JSON Schema draft, that
    describes an object: ``"type": "object"``, as MCP requires.
    """
    if not isinstance(schema, dict):
        return "its input schema is not a JSON object"
    if schema.get("type") != "object":
        return 'its input schema does not describe an object ("type": "object")'
    # Imported at the first server's tools, not with Cairn: jsonschema takes a twentieth of a second to load.
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "the top level"
        return f"its input schema is not valid JSON Schema at {where}: {exc.message}"
    except (TypeError, ValueError, RecursionError) as exc:
        return f"its input schema cannot be checked: {exc}"
    return None


def _canonical(value: Any, redact: Callable[[str], str] | None) -> Any:
    if isinstance(value, str):
        return redact(value) if redact else value
    if isinstance(value, list):
        return [_canonical(item, redact) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = redact(key) if redact else key
        if key in _DATA_KEYWORDS:
            out[name] = _data(item, redact)
            if key == "enum" and isinstance(item, list) and all(isinstance(member, str) for member in item):
                out[name] = sorted(out[name])
        elif key == "required" and isinstance(item, list) and all(isinstance(member, str) for member in item):
            out[name] = sorted(_data(item, redact))
        elif key in _SCHEMA_MAPS and isinstance(item, dict):
            out[name] = {(redact(sub) if redact else sub): _canonical(schema, redact) for sub, schema in item.items()}
        else:
            out[name] = _canonical(item, redact)
    return out


def _data(value: Any, redact: Callable[[str], str] | None) -> Any:
    """Data inside a schema: redacted, never reordered."""
    if isinstance(value, str):
        return redact(value) if redact else value
    if isinstance(value, list):
        return [_data(item, redact) for item in value]
    if isinstance(value, dict):
        return {(redact(key) if redact else key): _data(item, redact) for key, item in value.items()}
    return value
