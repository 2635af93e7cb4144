"""Validation errors in sentences a person reads, not pydantic's own words.

Each problem becomes one sentence that names the setting as the form calls it and says what it
must be. pydantic's messages ("String should have at least 1 character", "Input should be a
valid integer") never reach a person: a kind of error this module does not know gets a plain
sentence of its own, not pydantic's text. Only the sentences Cairn's own validators wrote (a
``ValueError`` raised in a validator) are passed on, as they were written for people.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from host.errors import CairnError

__all__ = ["problem_text"]

log = logging.getLogger(__name__)

# A setting's name in the words the forms use, by its field name.
FIELDS = {
    "name": "The name",
    "provider": "The provider",
    "base_url": "The base URL",
    "default_model": "The model",
    "headers": "The extra headers",
    "max_output_tokens": "The longest reply",
    "first_token_timeout": "The wait for the first word",
    "context_limit": "The context size",
    "instructions_in_first_message": "The choice to send instructions in the first message",
    "tools": "The choice to offer tools",
    "id": "The account's id",
    "account_id": "The account for summaries",
    "model": "The summary model",
    "transport": "How the server runs",
    "command": "The command",
    "args": "The arguments",
    "cwd": "The working folder",
    "url": "The server URL",
    "env": "The environment variables",
    "secret_env": "The environment variables kept in the keychain",
    "secret_headers": "The headers kept in the keychain",
    "trusted": "The trusted choice",
    "start_at_launch": "When the server starts",
    "enabled": "The enabled choice",
    "start_timeout": "The time the server has to start",
    "call_timeout": "The time a tool call may take",
    "stop_timeout": "The time the server has to stop",
    "reply_reserve": "The room kept for the reply",
    "retained_tail": "The recent conversation kept",
    "skills_listed": "The number of skills listed in the prompt",
    "summary_route": "Where summaries go",
    "theme": "The theme",
    "workspace": "The workspace folder",
    "default_mode": "The mode for new chats",
    "custom_instructions": "The custom instructions",
    "accounts": "The accounts",
    "mcp_servers": "The MCP servers",
    "tool_grants": "The tools always or never allowed",
    "schema_version": "The settings version",
}
# One item of a name-to-value setting, by the setting's field name.
ITEMS = {"headers": "The header", "env": "The environment variable"}
# What a value must be, by the part of pydantic's error type before "_type" or "_parsing".
KINDS = {
    "string": "text",
    "str": "text",
    "int": "a whole number",
    "float": "a number",
    "decimal": "a number",
    "bool": "on or off (true or false)",
    "dict": "a list of names with values",
    "model": "a list of names with values",
    "mapping": "a list of names with values",
    "list": "a list",
    "tuple": "a list",
    "set": "a list",
    "frozen_set": "a list",
    "iterable": "a list",
    "url": "a web address such as https://api.example.com/v1",
    "json": "valid JSON",
    "enum": "one of the offered choices",
    "literal": "one of the offered choices",
    "none": "empty",
    "bytes": "text",
    "date": "a date",
    "datetime": "a date and time",
    "uuid": "an id",
}


def _field(loc: tuple[int | str, ...]) -> str:
    """The setting ``loc`` points at, in words."""
    if not loc:
        return "The value"
    first, rest = str(loc[0]), [part for part in loc[1:] if isinstance(part, str | int)]
    if first in ITEMS and rest and isinstance(rest[0], str):
        return f"{ITEMS[first]} {rest[0]}"
    named = _named(first)
    numbers = [part for part in rest if isinstance(part, int)]
    inner = [part for part in rest if isinstance(part, str)]
    if inner and inner[-1] in FIELDS:  # a field of one entry of a list: the entry's account, say
        where = (
            f"{named[0].lower()}{named[1:]}, item {numbers[0] + 1}" if numbers else f"in {named[0].lower()}{named[1:]}"
        )
        return f"{_named(inner[-1])} ({where})"
    return f"{named} (item {numbers[0] + 1})" if numbers else named


def _named(field: str) -> str:
    return FIELDS.get(field, f"The setting {field.replace('_', ' ')}")


def _limit(context: dict[str, object], *keys: str) -> str:
    value = next((context[k] for k in keys if k in context), None)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int | float) and not isinstance(value, bool) else str(value)


# Sentences by pydantic's error type: ``{field}`` is the setting, the rest come from the error's context.
SENTENCES = {
    "missing": "{field} is missing; fill it in.",
    "string_too_long": "{field} is too long: at most {max_length} characters.",
    "too_long": "{field} has too many items: at most {max_length}.",
    "too_short": "{field} has too few items: at least {min_length}.",
    "string_pattern_mismatch": "{field} holds characters it cannot have; use letters, digits and -.",
    "greater_than_equal": "{field} must be {ge} or more.",
    "greater_than": "{field} must be more than {gt}.",
    "less_than_equal": "{field} must be {le} or less.",
    "less_than": "{field} must be less than {lt}.",
    "multiple_of": "{field} must be a multiple of {multiple_of}.",
    "finite_number": "{field} must be a number.",
    "int_from_float": "{field} must be a whole number.",
    "literal_error": "{field} must be one of {expected}.",
    "enum": "{field} must be one of {expected}.",
    "extra_forbidden": "{field} is not a setting Cairn knows; remove it.",
    "frozen_instance": "{field} cannot be changed.",
    "frozen_field": "{field} cannot be changed.",
}
UNUSABLE = "{field} is not something Cairn can use; check it and try again."


def _sentence(error: ErrorDetails) -> str:
    field = _field(tuple(error["loc"]))
    context = dict(error.get("ctx") or {})
    kind = str(error["type"])
    if kind in ("value_error", "assertion_error"):  # Cairn's own validators wrote these for people
        return _own_words(str(error["msg"]), field)
    if kind == "string_too_short":
        least = context.get("min_length", 1)
        return f"{field} is empty; fill it in." if least == 1 else f"{field} needs at least {least} characters."
    template = SENTENCES.get(kind) or next(
        (f"{{field}} must be {KINDS[part]}." for part in _kind_parts(kind) if part in KINDS), UNUSABLE
    )
    values = {key: _limit(context, key) for key in ("max_length", "min_length", "ge", "gt", "le", "lt", "multiple_of")}
    values["expected"] = str(context.get("expected", "the offered choices"))
    return template.format(field=field, **values)


def _kind_parts(kind: str) -> list[str]:
    """The kind of value a "..._type" or "..._parsing" error wanted: "int" of "int_parsing"."""
    for suffix in ("_type", "_parsing"):
        if kind.endswith(suffix):
            base = kind.removesuffix(suffix)
            return [base, base.split("_")[0]]
    return []


def _own_words(message: str, field: str) -> str:
    """A validator's sentence, with pydantic's "Value error, " in front of it taken away."""
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    message = message.strip()
    if not message:
        return f"{field} is not something Cairn can use; check it and try again."
    return message[0].upper() + message[1:] + ("" if message.endswith((".", "?", "!")) else ".")


def problem_text(error: BaseException) -> str:
    """What went wrong, in sentences a person reads: one per problem of a ``ValidationError``, a
    ``CairnError``'s own message, what the system said of a file; anything else is a defect,
    said to be one (its traceback goes to the log, never to the person)."""
    if isinstance(error, ValidationError):
        return " ".join(dict.fromkeys(_sentence(e) for e in error.errors()))
    if isinstance(error, CairnError):
        return str(error).strip() or f"Something went wrong ({type(error).__name__}); try again."
    if isinstance(error, OSError):
        where = f" {error.filename}" if error.filename else ""
        return f"Cairn could not use{where}: {error.strerror or error}. Check the file and its folder, then try again."
    log.error("an unexpected %s reached a person", type(error).__name__, exc_info=error)
    return (
        f"Cairn ran into a problem it did not expect ({type(error).__name__}: {error}). What was saved is safe; "
        "the details are in Cairn's log."
    )
