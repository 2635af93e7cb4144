"""Each chat's own settings: its system prompt replaces the custom instructions by an appended
``instructions`` update, and its parameters reach the request, over the loopback provider."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.app.cairn import CairnApp
from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.messages import Context, Message, TextPart
from desktop.context.projection import project
from desktop.loopback import LoopbackProvider
from desktop.root import Root
from desktop.session.chat_settings import (
    ChatSettingsError,
    chat_settings_of,
    inherited_words,
    make_chat_settings,
    request_parameters,
)
from desktop.settings.routes import ResolvedRoute, resolve_route
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SettingsStore
from host.canonical import canonical_json_bytes
from host.content import ChatSettings, Unknown, dump, parse_model_system
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.fake_keyring import MemoryKeyring

PIRATE = "Talk like a pirate."


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def app(cairn_paths: CairnPaths, provider: LoopbackProvider) -> Iterator[CairnApp]:
    account = Account(
        name="Loop", provider="custom", base_url=provider.base_url, default_model="loopback-chat", max_output_tokens=900
    )
    SettingsStore(cairn_paths.config_dir / "settings.json").add_account(account)
    services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
    cairn = CairnApp(services)
    yield cairn
    asyncio.run(cairn.close())
    services.close()


def send(app: CairnApp, session_id: str, text: str) -> None:
    outcome = asyncio.run(app.turns.send(session_id, text))
    assert outcome.ok, outcome.error


def message_bytes(body: dict) -> list[bytes]:
    return [canonical_json_bytes(m) for m in body["messages"]]


def updates(messages: list[dict]) -> list[str]:
    """The instructions updates in ``messages``: in place, or folded into a user message (the
    loopback route has no transport flags, so it gets them folded)."""
    text = "\n\n".join(m["content"] for m in messages if isinstance(m["content"], str))
    return [block.split("</system-update>")[0] for block in text.split('<system-update section="instructions">')[1:]]


def test_a_new_system_prompt_mid_chat_is_an_appended_instructions_update(
    app: CairnApp, provider: LoopbackProvider
) -> None:
    app.preferences.save_instructions("Prefer metric units.")
    session = app.chats.new().id
    send(app, session, "one")
    app.options.set_settings(session, system_prompt=PIRATE, temperature=None, max_output=None, reasoning_effort=None)
    send(app, session, "two")

    first, second = (message_bytes(r.body) for r in provider.requests)
    assert second[: len(first)] == first  # every earlier message, byte for byte
    assert b"Prefer metric units." in first[0]
    assert PIRATE.encode() not in first[0]
    added = updates(provider.requests[1].body["messages"][len(first) :])
    assert len(added) == 1
    assert PIRATE in added[0]
    assert "Prefer metric units." not in added[0]

    # Back to inheriting: the custom instructions return as one more update, appended.
    app.options.set_settings(session, system_prompt=None, temperature=None, max_output=None, reasoning_effort=None)
    send(app, session, "three")
    third = message_bytes(provider.requests[2].body)
    assert third[: len(second)] == second
    restored = updates(provider.requests[2].body["messages"][len(second) :])
    assert len(restored) == 1
    assert "Prefer metric units." in restored[0]
    assert PIRATE not in restored[0]


def test_a_chat_started_with_its_own_prompt_opens_with_it(app: CairnApp, provider: LoopbackProvider) -> None:
    app.preferences.save_instructions("Prefer metric units.")
    session = app.chats.new().id
    app.options.set_settings(session, system_prompt="Answer in French.", temperature=None, max_output=None,
                          reasoning_effort=None)  # fmt: skip
    send(app, session, "bonjour")
    opening = provider.requests[0].body["messages"][0]
    assert opening["role"] == "system"
    assert "Answer in French." in opening["content"]
    assert "Prefer metric units." not in opening["content"]


def test_the_chats_temperature_and_longest_reply_reach_the_request(app: CairnApp, provider: LoopbackProvider) -> None:
    session = app.chats.new().id
    send(app, session, "one")
    assert provider.requests[0].body["max_tokens"] == 900  # the account's
    assert "temperature" not in provider.requests[0].body

    view = app.options.set_settings(session, system_prompt=None, temperature=0.3, max_output=400,
                                 reasoning_effort="high")  # fmt: skip
    assert view.settings.max_output == 400
    assert not view.takes_effort
    send(app, session, "two")
    body = provider.requests[1].body
    assert (body["temperature"], body["max_tokens"]) == (0.3, 400)
    assert "reasoning_effort" not in body  # the loopback model is not known to reason
    earlier = message_bytes(provider.requests[0].body)
    assert message_bytes(body)[: len(earlier)] == earlier  # the prompt is unchanged

    app.options.set_settings(session, system_prompt=None, temperature=None, max_output=None, reasoning_effort=None)
    send(app, session, "three")
    body = provider.requests[2].body
    assert body["max_tokens"] == 900
    assert "temperature" not in body


def test_settings_rows_are_kept_only_when_they_change(app: CairnApp) -> None:
    session = app.chats.new().id
    for _ in range(2):
        app.options.set_settings(session, system_prompt="x", temperature=1.0, max_output=None, reasoning_effort=None)
    rows = [r for r in TranscriptWriter(app.root.journal).rows(session) if isinstance(r.meta(), ChatSettings)]
    assert len(rows) == 1
    assert chat_settings_of(TranscriptWriter(app.root.journal).model_order(session)) == ChatSettings(
        system_prompt="x", temperature=1.0
    )


def route(provider: str, model: str) -> ResolvedRoute:
    account = Account(name="A", provider=provider, default_model=model)
    return resolve_route(account, None, load_transport_catalog(), load_models_dev(Path("/nonexistent")))


def test_reasoning_effort_is_sent_only_to_a_model_that_reasons() -> None:
    context = Context(messages=[Message(role="user", parts=[TextPart(text="hi")])])
    wanted = ChatSettings(reasoning_effort="low")
    reasoner = route("deepseek", "deepseek-reasoner")
    parameters, notes = request_parameters(wanted, reasoner)
    assert project(context, reasoner, parameters=parameters).body["reasoning_effort"] == "low"
    assert not notes

    plain = route("deepseek", "deepseek-chat")
    parameters, notes = request_parameters(wanted, plain)
    assert "reasoning_effort" not in project(context, plain, parameters=parameters).body
    assert notes == ["The reasoning effort was not sent: deepseek-chat has no such setting."]


def test_a_longest_reply_above_a_new_models_limit_is_cut_to_it() -> None:
    plain = route("deepseek", "deepseek-flash")  # writes at most 8,192 tokens
    parameters, notes = request_parameters(ChatSettings(max_output=20_000), plain)
    assert parameters.max_output == 8192
    assert "8,192 was asked for" in notes[0]


@pytest.mark.parametrize(
    ("values", "sentence"),
    [
        ({"temperature": 2.5}, "The temperature must be between 0 and 2; 2.5 is not."),
        ({"temperature": -0.1}, "The temperature must be between 0 and 2; -0.1 is not."),
        ({"max_output": 0}, "The longest reply must be at least 1 token; clear it to use the account's."),
        ({"max_output": 9000}, "deepseek-flash writes at most 8,192 tokens in a reply; set the longest reply to 8,192"),
    ],
)
def test_bad_values_get_a_sentence(values: dict, sentence: str) -> None:
    with pytest.raises(ChatSettingsError) as raised:
        make_chat_settings(route("deepseek", "deepseek-flash"), **values)
    assert str(raised.value).startswith(sentence)


def test_a_bad_value_is_refused_and_nothing_is_kept(app: CairnApp) -> None:
    session = app.chats.new().id
    with pytest.raises(ChatSettingsError, match="between 0 and 2"):
        app.options.set_settings(session, system_prompt=None, temperature=3.0, max_output=None, reasoning_effort=None)
    assert TranscriptWriter(app.root.journal).rows(session) == []


def test_what_a_chat_inherits_is_said_in_words(app: CairnApp) -> None:
    app.preferences.save_instructions("Prefer metric units.\nAnd more.")
    words = inherited_words(app.options.settings(app.chats.new().id))
    assert words["system_prompt"] == "From Settings: your custom instructions (“Prefer metric units.…”)."
    assert words["max_output"] == "From Settings: the account's 900 tokens."
    assert words["reasoning_effort"] == "loopback-chat has no reasoning effort setting, so none is sent."


def test_the_row_round_trips_and_a_newer_version_is_ignored() -> None:
    own = ChatSettings(system_prompt="p", temperature=0.5, max_output=10, reasoning_effort="medium")
    assert parse_model_system(dump(own)) == own
    newer = {"v": 2, "kind": "chat_settings", "system_prompt": "p", "top_p": 0.9}
    assert isinstance(parse_model_system(newer), Unknown)
    assert isinstance(parse_model_system({"v": 1, "kind": "chat_settings", "temperature": 9}), Unknown)
