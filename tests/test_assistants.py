"""Assistants: saved presets to start a chat from, kept in settings; a chat started from one
gets its settings and route as its own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.app.cairn import CairnApp
from desktop.loopback import LoopbackProvider
from desktop.root import Root
from desktop.session.chat_settings import chat_settings_of
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SettingsError, SettingsStore
from host.content import ChatRoute, ChatSettings, StartedFrom
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.fake_keyring import MemoryKeyring

PLAIN = {"system_prompt": None, "account_id": None, "model": None, "temperature": None, "max_output": None,
         "reasoning_effort": None}  # fmt: skip


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def app(cairn_paths: CairnPaths, provider: LoopbackProvider) -> Iterator[CairnApp]:
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    account = Account(name="Loop", provider="custom", base_url=provider.base_url, default_model="loopback-chat")
    store.add_account(account)
    store.change(assistants=[])  # none of the starters: each test makes its own
    services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
    cairn = CairnApp(services)
    yield cairn
    asyncio.run(cairn.close())
    services.close()


def test_an_assistant_is_saved_changed_and_removed(app: CairnApp, cairn_paths: CairnPaths) -> None:
    saved = app.preferences.save_assistant(
        None, **{**PLAIN, "name": "Translator", "system_prompt": "Translate to French."}
    )
    assert app.snapshot().assistants == (saved,)
    changed = app.preferences.save_assistant(saved.id, **{**PLAIN, "name": "Translator", "temperature": 0.2})
    assert [(a.id, a.temperature, a.system_prompt) for a in app.settings.assistants] == [(saved.id, 0.2, None)]
    on_disk = json.loads((cairn_paths.config_dir / "settings.json").read_text(encoding="utf-8"))
    assert on_disk["assistants"][0]["name"] == "Translator"
    assert changed.id == saved.id
    app.preferences.remove_assistant(saved.id)
    assert app.settings.assistants == []


@pytest.mark.parametrize(
    ("values", "sentence"),
    [
        ({"name": "  "}, "The assistant needs a name; fill it in."),
        ({"name": "Coder", "temperature": 3.0}, "The temperature must be between 0 and 2; 3 is not."),
        ({"name": "Coder", "max_output": 0}, "The longest reply must be at least 1 token"),
        ({"name": "Coder", "account_id": "gone"}, "The assistant's account is not in Settings any more"),
        ({"name": "Coder", "account_id": "Loop", "model": "two words"}, "The assistant cannot be saved: "),
    ],
)
def test_bad_assistants_are_refused_in_words(app: CairnApp, values: dict, sentence: str) -> None:
    with pytest.raises(SettingsError) as raised:
        app.preferences.save_assistant(None, **{**PLAIN, **values})
    assert str(raised.value).startswith(sentence)
    assert "pydantic" not in str(raised.value)
    assert app.settings.assistants == []


def test_two_assistants_cannot_share_a_name(app: CairnApp) -> None:
    app.preferences.save_assistant(None, **{**PLAIN, "name": "Coder"})
    with pytest.raises(SettingsError, match="already exists"):
        app.preferences.save_assistant(None, **{**PLAIN, "name": "coder"})


def test_a_chat_from_an_assistant_gets_its_settings_and_route(app: CairnApp, provider: LoopbackProvider) -> None:
    account = app.settings.accounts[0]
    pirate = {"name": "Pirate", "system_prompt": "Talk like a pirate."}
    assistant = app.preferences.save_assistant(None, **{**PLAIN, **pirate,
                                            "account_id": account.id, "model": "loopback-other",
                                            "max_output": 300})  # fmt: skip
    session = app.chats.new_from(assistant.id)
    rows = TranscriptWriter(app.root.journal).model_order(session.id)
    assert chat_settings_of(rows) == ChatSettings(system_prompt="Talk like a pirate.", max_output=300)
    assert [r.meta() for r in rows if isinstance(r.meta(), ChatRoute)] == [
        ChatRoute(account_id=account.id, model="loopback-other")
    ]
    outcome = asyncio.run(app.turns.send(session.id, "ahoy"))
    assert outcome.ok, outcome.error
    body = provider.requests[0].body
    assert body["model"] == "loopback-other"
    assert body["max_tokens"] == 300
    assert "Talk like a pirate." in body["messages"][0]["content"]

    # Changing the assistant later leaves the chats it started as they are.
    app.preferences.save_assistant(assistant.id, **{**PLAIN, "name": "Pirate", "system_prompt": "Be a parrot."})
    assert (
        chat_settings_of(TranscriptWriter(app.root.journal).model_order(session.id)).system_prompt
        == "Talk like a pirate."
    )


def test_an_assistant_whose_account_is_gone_starts_on_the_route_used_last(app: CairnApp) -> None:
    account = app.settings.accounts[0]
    assistant = app.preferences.save_assistant(
        None, **{**PLAIN, "name": "Old", "account_id": account.id, "temperature": 0.5}
    )
    app.accounts.remove(account.id)
    session = app.chats.new_from(assistant.id)
    metas = [r.meta() for r in TranscriptWriter(app.root.journal).rows(session.id)]
    assert metas == [StartedFrom(assistant_id=assistant.id, name="Old"), ChatSettings(temperature=0.5)]


def test_an_assistant_without_settings_starts_a_plain_chat(app: CairnApp) -> None:
    assistant = app.preferences.save_assistant(None, **{**PLAIN, "name": "Plain"})
    session = app.chats.new_from(assistant.id)
    metas = [r.meta() for r in TranscriptWriter(app.root.journal).rows(session.id)]
    assert metas == [StartedFrom(assistant_id=assistant.id, name="Plain")]  # whose chat it is; nothing else
    app.preferences.remove_assistant(assistant.id)
    with pytest.raises(SettingsError, match="not in Settings any more"):
        app.chats.new_from(assistant.id)


def test_a_settings_file_with_assistants_reads_back(cairn_paths: CairnPaths) -> None:
    path = cairn_paths.config_dir / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"assistants": [{"id": "a1", "name": "Coder", "temperature": 0.1, "future": 1}]}))
    settings = SettingsStore(path).load()
    assert settings.assistant("a1") is not None
    assert settings.assistants[0].model_extra == {"future": 1}
    SettingsStore(path).save(settings)
    assert json.loads(path.read_text())["assistants"][0]["future"] == 1


def test_a_new_cairn_starts_with_four_assistants_and_an_older_file_gets_them_once(cairn_paths: CairnPaths) -> None:
    path = cairn_paths.config_dir / "settings.json"
    store = SettingsStore(path)
    fresh = store.load()  # no file yet: a new Cairn
    assert [a.name for a in fresh.assistants] == ["Writing editor", "Code reviewer", "Translator", "Summariser"]
    assert all(a.system_prompt for a in fresh.assistants)
    # A file from before the starters, with an assistant of the same name as one: it keeps its own.
    mine = {"id": "mine", "name": "translator", "system_prompt": "Into Welsh."}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema_version": 1, "assistants": [mine]}))
    upgraded = store.load()
    assert [a.name for a in upgraded.assistants] == ["translator", "Writing editor", "Code reviewer", "Summariser"]
    store.save(upgraded)
    # Removed since: never added back.
    store.change(assistants=[a for a in upgraded.assistants if a.id == "mine"])
    assert [a.id for a in store.load().assistants] == ["mine"]
    assert json.loads(path.read_text())["schema_version"] == 2
    # A file of any version that holds something else where the list goes is reported, not mended.
    path.write_text(json.dumps({"schema_version": 1, "assistants": "all of them"}))
    with pytest.raises(SettingsError, match="bad value at assistants"):
        store.load()


def test_a_chat_from_an_assistant_says_so_in_its_export(app: CairnApp, tmp_path: Path) -> None:
    assistant = app.preferences.save_assistant(None, **{**PLAIN, "name": "Translator"})
    session = app.chats.new_from(assistant.id)
    app.chats.export(session.id, tmp_path / "chat.md")
    assert "with the assistant Translator.*" in (tmp_path / "chat.md").read_text()
