"""A form a tool asks a person to fill in, read from the restricted JSON Schema MCP uses for
elicitation: one flat object whose properties are strings (with a format and a length), numbers
and integers (with a range), booleans, and choices of one or several strings.

What a server sends is not trusted: titles and descriptions are made printable and cut short,
the number of fields and options is capped, and a property Cairn cannot show is left out when
it is optional (a required one makes the whole form unusable: ``parse_form`` raises
``FormUnusable``). ``Form.check`` is the one validation, used by the window, the command line
and the core alike; what it returns is exactly what goes back to the server.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from host.text import printable

__all__ = ["FieldValue", "Form", "FormField", "FormUnusable", "parse_form"]

FieldKind = Literal["text", "number", "integer", "boolean", "choice", "choices"]
FieldValue = str | int | float | bool | list[str]

MAX_FIELDS = 50
MAX_OPTIONS = 200
MAX_TITLE = 120
MAX_DESCRIPTION = 500
MAX_TEXT = 10_000  # what one text answer may hold, whatever the server allows

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
_FORMATS = {"email": "an email address", "uri": "a web address", "date": "a date", "date-time": "a date and time"}


class FormUnusable(ValueError):
    """A schema Cairn cannot turn into a form; the message says why."""


@dataclass(frozen=True)
class FormField:
    """One field: its key in the answer, how it is shown, and what it accepts."""

    key: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: FieldValue | None = None
    format: str = ""  # a text's: email, uri, date, date-time
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    options: tuple[tuple[str, str], ...] = ()  # a choice's values and their labels
    min_items: int | None = None
    max_items: int | None = None

    def check(self, raw: object) -> tuple[FieldValue | None, str]:
        """The value ``raw`` (what a person typed, ticked or chose) stands for, or a problem in
        words. ``None`` with no problem: left empty, and optional."""
        if raw is None or raw == [] or (isinstance(raw, str) and not raw.strip()):
            return None, ("Fill this in." if self.required else "")
        if self.kind == "boolean":
            return (raw, "") if isinstance(raw, bool) else (None, "Tick or clear this.")
        if self.kind in ("number", "integer"):
            return self._number(raw)
        if self.kind == "choice":
            values = [value for value, _ in self.options]
            return (raw, "") if raw in values else (None, "Choose one of the options.")
        if self.kind == "choices":
            return self._choices(raw)
        return self._text(raw)

    def _text(self, raw: object) -> tuple[FieldValue | None, str]:
        if not isinstance(raw, str):
            return None, "Write some text."
        text = raw.strip()
        if self.min_length is not None and len(text) < self.min_length:
            return None, f"Write at least {self.min_length} characters."
        if len(text) > min(self.max_length if self.max_length is not None else MAX_TEXT, MAX_TEXT):
            return None, f"Write at most {min(self.max_length or MAX_TEXT, MAX_TEXT)} characters."
        if self.format and not _formatted(text, self.format):
            example = {"date": " (like 2024-05-31)", "date-time": " (like 2024-05-31T14:30:00Z)"}.get(self.format, "")
            return None, f"Write {_FORMATS.get(self.format, self.format)}{example}."
        return text, ""

    def _number(self, raw: object) -> tuple[FieldValue | None, str]:
        whole = self.kind == "integer"
        value: int | float | None = None
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str):
            try:
                value = int(raw.strip())
            except ValueError:
                try:
                    value = float(raw.strip())
                except ValueError:
                    value = None
        wanted = "a whole number" if whole else "a number"
        low, high = self.minimum, self.maximum
        span = f" from {_figure(low)} to {_figure(high)}" if low is not None and high is not None else ""
        span = span or (f" of at least {_figure(low)}" if low is not None else "")
        span = span or (f" of at most {_figure(high)}" if high is not None else "")
        if value is None or not math.isfinite(value) or (whole and value != int(value)):
            return None, f"Write {wanted}{span}."
        if (low is not None and value < low) or (high is not None and value > high):
            return None, f"Write {wanted}{span}."
        return (int(value) if whole else value), ""

    def _choices(self, raw: object) -> tuple[FieldValue | None, str]:
        values = [value for value, _ in self.options]
        if not isinstance(raw, list | tuple) or any(item not in values for item in raw):
            return None, "Choose from the options."
        chosen = [value for value in values if value in raw]
        if self.min_items is not None and len(chosen) < self.min_items:
            return None, f"Choose at least {self.min_items}."
        if self.max_items is not None and len(chosen) > self.max_items:
            return None, f"Choose at most {self.max_items}."
        return chosen, ""


@dataclass(frozen=True)
class Form:
    """The fields of a form, in the server's order, and what was left out of it (in words)."""

    fields: tuple[FormField, ...]
    left_out: tuple[str, ...] = ()

    def check(self, values: Mapping[str, object]) -> tuple[dict[str, FieldValue], dict[str, str]]:
        """The answer ``values`` make (only the form's fields, each checked) and, by field key,
        what is wrong with any of them; an answer goes back only when there is nothing wrong."""
        content: dict[str, FieldValue] = {}
        problems: dict[str, str] = {}
        for field in self.fields:
            value, problem = field.check(values.get(field.key))
            if problem:
                problems[field.key] = problem
            elif value is not None:
                content[field.key] = value
        return content, problems


def parse_form(schema: object) -> Form:
    """The form ``schema`` describes; ``FormUnusable`` when it is not one Cairn can show."""
    if not isinstance(schema, Mapping) or not isinstance(properties := schema.get("properties", {}), Mapping):
        raise FormUnusable("its form is not an object with properties")
    required = schema.get("required") or []
    required = {key for key in required if isinstance(key, str)} if isinstance(required, list) else set()
    fields: list[FormField] = []
    left_out: list[str] = []
    for key, spec in properties.items():
        if not isinstance(key, str):
            continue
        field = _field(key, spec, key in required)
        if field is None:
            if key in required:
                raise FormUnusable(f"its required field {_short(key, MAX_TITLE)!r} is of a kind Cairn cannot show")
            left_out.append(_short(key, MAX_TITLE))
        else:
            fields.append(field)
    if len(fields) > MAX_FIELDS:
        raise FormUnusable(f"its form has {len(fields)} fields; Cairn shows at most {MAX_FIELDS}")
    return Form(tuple(fields), tuple(left_out))


def _field(key: str, spec: object, required: bool) -> FormField | None:
    if not isinstance(spec, Mapping):
        return None
    kind, default = spec.get("type"), spec.get("default")
    title = _short(spec.get("title") or key, MAX_TITLE)
    base = FormField(key, "text", title, _short(spec.get("description"), MAX_DESCRIPTION), required)
    if kind == "boolean":
        return replace(base, kind="boolean", default=_bool(default))
    if kind in ("number", "integer"):
        low, high = _number(spec.get("minimum")), _number(spec.get("maximum"))
        return replace(base, kind=kind, default=_number(default), minimum=low, maximum=high)
    if kind == "string":
        options = _options(spec)
        if options:
            chosen = default if isinstance(default, str) and default in dict(options) else None
            return replace(base, kind="choice", default=chosen, options=options)
        format_ = spec.get("format")
        return replace(
            base, default=_str(default), format=format_ if isinstance(format_, str) and format_ in _FORMATS else "",
            min_length=_count(spec.get("minLength")), max_length=_count(spec.get("maxLength")),
        )  # fmt: skip
    if kind == "array" and isinstance(items := spec.get("items"), Mapping) and (options := _options(items)):
        values = dict(options)
        chosen_many = [item for item in default if item in values] if isinstance(default, list) else None
        return replace(
            base, kind="choices", default=chosen_many, options=options,
            min_items=_count(spec.get("minItems")), max_items=_count(spec.get("maxItems")),
        )  # fmt: skip
    return None


def _options(spec: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """A choice's values and labels: ``enum`` (with the legacy ``enumNames``), or ``oneOf`` /
    ``anyOf`` of ``const`` and ``title``."""
    listed = spec.get("enum")
    if isinstance(listed, list):
        names = spec.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(listed) else listed
        pairs = [(value, label) for value, label in zip(listed, labels, strict=True) if isinstance(value, str)]
    else:
        titled = spec.get("oneOf") or spec.get("anyOf")
        pairs = [
            (item["const"], item.get("title") or item["const"])
            for item in (titled if isinstance(titled, list) else [])
            if isinstance(item, Mapping) and isinstance(item.get("const"), str)
        ]
    return tuple((value, _short(label, MAX_TITLE) or value) for value, label in pairs[:MAX_OPTIONS])


def _formatted(text: str, format_: str) -> bool:
    if format_ == "email":
        return _EMAIL.match(text) is not None
    if format_ == "uri":
        return _URI.match(text) is not None
    try:
        if format_ == "date":
            datetime.date.fromisoformat(text)
        else:
            datetime.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _number(value: object) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _short(text: object, limit: int) -> str:
    said = printable(text).strip() if isinstance(text, str) else ""
    return said if len(said) <= limit else f"{said[: limit - 1]}…"


def _figure(value: float | None) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
