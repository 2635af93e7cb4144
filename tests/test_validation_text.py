"""Every validation error Settings can show is a plain sentence that names the setting, never
pydantic's own words: checked on bad values hypothesis makes for each settings model."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from desktop.settings.mcp_servers import McpServerSetting
from desktop.settings.problems import problem_text
from desktop.settings.store import Account, Settings, SummaryRoute
from host.errors import CairnError
from tests.pydantic_words import RAW

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def entries(fields: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts with some of ``fields`` (and maybe a stray key), each holding any JSON value."""
    return st.dictionaries(st.sampled_from([*fields, "stray_field"]), json_values, max_size=len(fields) + 1)


MODELS: list[tuple[type[BaseModel], list[str]]] = [
    (Account, list(Account.model_fields)),
    (McpServerSetting, list(McpServerSetting.model_fields)),
    (SummaryRoute, list(SummaryRoute.model_fields)),
    (Settings, list(Settings.model_fields)),
]


def assert_plain(text: str) -> None:
    assert text, "an error with no words"
    assert not [raw for raw in RAW if raw.lower() in text.lower()], text
    assert text.endswith((".", "?", "!")), text


@pytest.mark.parametrize(("model", "fields"), MODELS, ids=[m.__name__ for m, _ in MODELS])
def test_every_problem_is_a_plain_sentence(model: type[BaseModel], fields: list[str]) -> None:
    @settings(max_examples=150, deadline=None)
    @given(entry=entries(fields))
    def check(entry: dict[str, Any]) -> None:
        try:
            model.model_validate(entry)
        except ValidationError as exc:
            assert_plain(problem_text(exc))

    check()


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"name": "", "provider": "custom", "default_model": "m"}, "The name is empty; fill it in."),
        ({"name": "a", "provider": "custom", "default_model": ""}, "The model is empty; fill it in."),
        ({"name": "a", "provider": "custom"}, "The model is missing; fill it in."),
        (
            {"name": "a" * 81, "provider": "custom", "default_model": "m"},
            "The name is too long: at most 80 characters.",
        ),
        (
            {"name": "a", "provider": "custom", "default_model": "m", "context_limit": 10},
            "The context size must be 1,024 or more.",
        ),
        (
            {"name": "a", "provider": "custom", "default_model": "m", "first_token_timeout": 0},
            "The wait for the first word must be more than 0.",
        ),
        (
            {"name": "a", "provider": "custom", "default_model": "m", "max_output_tokens": "many"},
            "The longest reply must be a whole number.",
        ),
        (
            {"name": "a", "provider": "custom", "default_model": "m", "headers": {"X": 3}},
            "The header X must be text.",
        ),
    ],
)
def test_sentences_name_the_field_as_the_form_does(entry: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Account.model_validate(entry)
    assert problem_text(caught.value) == expected


def test_an_error_without_words_still_gets_a_sentence() -> None:
    assert problem_text(CairnError()) == "Something went wrong (CairnError); try again."


def test_an_error_cairn_did_not_expect_is_said_to_be_one_and_its_traceback_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    try:
        {}["missing"]
    except KeyError as exc:
        error = exc
    with caplog.at_level(logging.ERROR, logger="desktop.settings.problems"):
        text = problem_text(error)
    assert text.startswith("Cairn ran into a problem it did not expect (KeyError: 'missing').")
    assert "the details are in Cairn's log" in text
    assert "Traceback" not in text
    assert "Traceback" in caplog.text  # it went to the log (redacted, when secrets are known)


def test_a_file_the_system_refused_is_said_in_its_words() -> None:
    error = PermissionError(13, "Permission denied", "/read-only/chat.md")
    assert problem_text(error) == (
        "Cairn could not use /read-only/chat.md: Permission denied. Check the file and its folder, then try again."
    )
