"""Validation errors in sentences a person reads, not pydantic's own words."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

__all__ = ["problem_text"]

FIELDS = {
    "name": "The name",
    "base_url": "The base URL",
    "default_model": "The model",
    "headers": "The headers",
    "max_output_tokens": "The longest reply",
    "first_token_timeout": "The wait for the first word",
}


def _sentence(error: ErrorDetails) -> str:
    where = ".".join(str(p) for p in error["loc"])
    field = FIELDS.get(str(error["loc"][0]) if error["loc"] else "", f"The value of {where}" if where else "The value")
    context = error.get("ctx") or {}
    kind = error["type"]
    if kind == "string_too_short" and context.get("min_length") == 1:
        return f"{field} is empty; fill it in."
    if kind == "string_too_long":
        return f"{field} is too long: at most {context.get('max_length')} characters."
    if kind in ("greater_than_equal", "greater_than"):
        return f"{field} must be {context.get('ge', context.get('gt'))} or more."
    if kind in ("less_than_equal", "less_than"):
        return f"{field} must be {context.get('le', context.get('lt'))} or less."
    if kind in ("finite_number", "float_parsing", "int_parsing", "int_from_float"):
        return f"{field} must be a number."
    message = str(error["msg"]).removeprefix("Value error, ")
    return message[0].upper() + message[1:] + ("" if message.endswith(".") else ".")


def problem_text(error: BaseException) -> str:
    """What went wrong, in sentences; a ``ValidationError`` one sentence per problem."""
    if isinstance(error, ValidationError):
        return " ".join(_sentence(e) for e in error.errors())
    return str(error)
