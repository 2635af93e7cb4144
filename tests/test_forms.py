"""A form read from the restricted JSON Schema of an MCP request for input, and the one check
every answer passes (window, command line, core): each kind of field, its limits, the legacy
and titled choices, and what a hostile or odd schema becomes."""

from __future__ import annotations

import pytest

from host.tools.forms import MAX_FIELDS, FormUnusable, parse_form

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name\x1b[2J", "minLength": 2, "maxLength": 5},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "ratio": {"type": "number", "minimum": 0},
        "ok": {"type": "boolean", "default": True},
        "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"], "default": "p1"},
        "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "X"}]},
        "fish": {"type": "array", "minItems": 1, "maxItems": 2,
                 "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"},
                                     {"const": "f3", "title": "Cod"}]}},
        "nested": {"type": "object", "properties": {}},
    },
    "required": ["name", "count"],
}  # fmt: skip


def test_each_kind_of_field_is_read_with_its_limits_and_what_cannot_be_shown_is_left_out() -> None:
    form = parse_form(SCHEMA)
    fields = {field.key: field for field in form.fields}
    assert form.left_out == ("nested",)
    assert fields["name"].title == "Name\\x1b[2J"  # printable
    assert (fields["name"].kind, fields["name"].required, fields["name"].max_length) == ("text", True, 5)
    assert (fields["count"].kind, fields["count"].minimum, fields["count"].default) == ("integer", 1, 42)
    assert fields["pet"].options == (("p1", "Cats"), ("p2", "Dogs"))
    assert fields["hero"].options == (("h1", "Superman"), ("h2", "X"))
    assert (fields["fish"].kind, fields["fish"].max_items) == ("choices", 2)


@pytest.mark.parametrize(
    ("key", "raw", "value", "problem"),
    [
        ("name", "  Ada ", "Ada", ""),
        ("name", "A", None, "Write at least 2 characters."),
        ("name", "Adalind", None, "Write at most 5 characters."),
        ("name", "   ", None, "Fill this in."),
        ("email", "ada@example.org", "ada@example.org", ""),
        ("email", "ada", None, "Write an email address."),
        ("site", "https://example.org", "https://example.org", ""),
        ("site", "example org", None, "Write a web address."),
        ("born", "1815-12-10", "1815-12-10", ""),
        ("born", "10/12/1815", None, "Write a date (like 2024-05-31)."),
        ("count", "7", 7, ""),
        ("count", "7.5", None, "Write a whole number from 1 to 100."),
        ("count", "101", None, "Write a whole number from 1 to 100."),
        ("count", "", None, "Fill this in."),
        ("ratio", "2.5", 2.5, ""),
        ("ratio", "-1", None, "Write a number of at least 0."),
        ("ratio", "nan", None, "Write a number of at least 0."),
        ("ratio", "", None, ""),
        ("ok", False, False, ""),
        ("ok", "yes", None, "Tick or clear this."),
        ("pet", "p2", "p2", ""),
        ("pet", "Dogs", None, "Choose one of the options."),
        ("fish", ["f3", "f1"], ["f1", "f3"], ""),
        ("fish", ["f1", "f2", "f3"], None, "Choose at most 2."),
        ("fish", ["shark"], None, "Choose from the options."),
    ],
)
def test_the_check_turns_what_was_typed_into_the_answer_or_says_what_is_wrong(
    key: str, raw: object, value: object, problem: str
) -> None:
    field = next(field for field in parse_form(SCHEMA).fields if field.key == key)
    assert field.check(raw) == (value, problem)


def test_the_whole_answer_holds_only_the_forms_fields() -> None:
    content, problems = parse_form(SCHEMA).check({"name": "Ada", "count": "3", "extra": "sneaky", "ok": True})
    assert (content, problems) == ({"name": "Ada", "count": 3, "ok": True}, {})
    _, problems = parse_form(SCHEMA).check({})
    assert problems == {"name": "Fill this in.", "count": "Fill this in."}


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ("not a schema", "not an object with properties"),
        ({"type": "object", "properties": {"x": {"type": "object"}}, "required": ["x"]}, "required field 'x'"),
        ({"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(MAX_FIELDS + 1)}}, "at most"),
    ],
)
def test_a_form_cairn_cannot_show_is_refused_in_words(schema: object, why: str) -> None:
    with pytest.raises(FormUnusable, match=why):
        parse_form(schema)
