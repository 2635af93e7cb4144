"""Automatic chat titles: asked of the chat's own route after the first exchange, over real
HTTP to the loopback provider; a renamed chat keeps its name; a failure changes nothing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest

from desktop.app.cairn import CairnApp
from desktop.app.titles import TITLE_MAX_TOKENS, TITLE_PROMPT, clean_title, first_message_title, is_free, titles_allowed
from desktop.catalog.modelsdev import Cost, ModelInfo
from desktop.loopback import Fault, LoopbackProvider, Reply
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import SettingsError, SettingsStore
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.fake_keyring import MemoryKeyring
from tests.ui_fixtures import add_loopback_account

QUESTION = "How do I cook lentils with cumin?\nI have an hour."


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def app(cairn_paths: CairnPaths, provider: LoopbackProvider) -> Iterator[CairnApp]:
    add_loopback_account(cairn_paths, provider)
    services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
    made = CairnApp(services)
    yield made
    asyncio.run(made.close())
    services.close()


def set_auto_titles(app: CairnApp, cairn_paths: CairnPaths, value: str) -> None:
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    store.save(store.load().model_copy(update={"auto_titles": value}))
    app.preferences.reload()


def test_after_the_first_exchange_the_chats_own_route_names_it_once(app: CairnApp, provider: LoopbackProvider) -> None:
    session = app.chats.new()
    provider.script(Reply(text="Simmer them for twenty minutes."), Reply(text='"Cooking Lentils With Cumin."\n'))

    async def run() -> tuple[str | None, str | None]:
        assert (await app.turns.send(session.id, QUESTION)).ok
        assert app.root.journal.session(session.id).title == "How do I cook lentils with cumin?"  # type: ignore[union-attr]
        return await app.turns.auto_title(session.id), await app.turns.auto_title(session.id)

    first, again = asyncio.run(run())
    assert (first, again) == ("Cooking Lentils With Cumin", None)  # asked once: the title is no longer the first line
    assert app.root.journal.session(session.id).title == "Cooking Lentils With Cumin"  # type: ignore[union-attr]
    assert len(provider.requests) == 2
    title_body = provider.requests[1].body
    assert title_body["max_tokens"] == TITLE_MAX_TOKENS
    assert "tools" not in title_body
    assert title_body["messages"][0] == {"role": "system", "content": TITLE_PROMPT}
    assert "lentils with cumin" in title_body["messages"][1]["content"]
    assert "twenty minutes" in title_body["messages"][1]["content"]
    # Its usage is the chat's, recorded as a title request with no row; the chat's own rows are untouched.
    kinds = [(u.kind, u.row_id is None) for u in UsageLedger(app.root.journal).requests(session.id)]
    assert kinds == [("chat", False), ("title", True)]
    assert [r.role for r in TranscriptWriter(app.root.journal).display_page(session.id)] == ["user", "assistant"]


def test_a_renamed_chat_or_one_past_its_first_exchange_is_never_retitled(
    app: CairnApp, provider: LoopbackProvider
) -> None:
    renamed, longer = app.chats.new(), app.chats.new()

    async def run() -> None:
        assert (await app.turns.send(renamed.id, QUESTION)).ok
        app.chats.rename(renamed.id, "Dinner")
        assert await app.turns.auto_title(renamed.id) is None
        assert (await app.turns.send(longer.id, "First question")).ok
        assert (await app.turns.send(longer.id, "Second question")).ok
        assert await app.turns.auto_title(longer.id) is None

    asyncio.run(run())
    assert len(provider.requests) == 3  # the three replies; no title was asked for
    assert app.root.journal.session(renamed.id).title == "Dinner"  # type: ignore[union-attr]
    assert app.root.journal.session(longer.id).title == "First question"  # type: ignore[union-attr]


def test_a_chat_renamed_while_its_title_is_on_the_way_keeps_the_new_name(
    app: CairnApp, provider: LoopbackProvider
) -> None:
    session = app.chats.new()
    provider.script(Reply(text="Simmer them."), Reply(text="Lentil Soup", chunk_delay=0.05, chunk_chars=2))

    async def run() -> str | None:
        assert (await app.turns.send(session.id, QUESTION)).ok
        asking = asyncio.ensure_future(app.turns.auto_title(session.id))
        while len(provider.requests) < 2:
            await asyncio.sleep(0.01)
        app.chats.rename(session.id, "Mine")
        return await asking

    assert asyncio.run(run()) is None
    assert app.root.journal.session(session.id).title == "Mine"  # type: ignore[union-attr]


def test_a_failed_title_request_leaves_the_chat_as_it_was(
    app: CairnApp, provider: LoopbackProvider, caplog: pytest.LogCaptureFixture
) -> None:
    session = app.chats.new()
    provider.script(Reply(text="Simmer them."), Reply(fault=Fault("unauthorized")), Reply(text="Toast the cumin."))

    async def run() -> None:
        assert (await app.turns.send(session.id, QUESTION)).ok
        with caplog.at_level(logging.WARNING, logger="desktop.app.titles"):
            assert await app.turns.auto_title(session.id) is None
        assert (await app.turns.send(session.id, "And the cumin?")).ok  # the chat goes on as if nothing happened

    asyncio.run(run())
    assert app.root.journal.session(session.id).title == "How do I cook lentils with cumin?"  # type: ignore[union-attr]
    assert any("no title from custom/loopback-chat" in r.getMessage() for r in caplog.records)
    assert [r.role for r in TranscriptWriter(app.root.journal).display_page(session.id)] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_with_titles_off_no_request_is_made(app: CairnApp, provider: LoopbackProvider, cairn_paths: CairnPaths) -> None:
    set_auto_titles(app, cairn_paths, "off")
    session = app.chats.new()

    async def run() -> str | None:
        assert (await app.turns.send(session.id, QUESTION)).ok
        return await app.turns.auto_title(session.id)

    assert asyncio.run(run()) is None
    assert len(provider.requests) == 1


def test_only_routes_that_cost_nothing_get_titles_by_default(app: CairnApp) -> None:
    loopback = app.accounts.route()
    assert loopback.model_info is None or loopback.model_info.cost is None
    assert is_free(loopback)  # no known price, on this machine
    remote = loopback.model_copy(
        update={"actual": loopback.actual.model_copy(update={"base_url": "https://api.example.com/v1"})}
    )
    assert not is_free(remote)  # no known price, somewhere else: it may cost
    priced = remote.model_copy(update={"model_info": ModelInfo(id="m", cost=Cost(input=0.27, output=1.1))})
    free = remote.model_copy(update={"model_info": ModelInfo(id="m", cost=Cost(input=0, output=0))})
    assert not is_free(priced)
    assert is_free(free)
    assert app.settings.auto_titles == "free_routes"
    assert [titles_allowed("free_routes", r) for r in (loopback, priced, free)] == [True, False, True]
    assert [titles_allowed("always", r) for r in (loopback, priced)] == [True, True]
    assert [titles_allowed("off", r) for r in (loopback, free)] == [False, False]


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Cooking Lentils With Cumin", "Cooking Lentils With Cumin"),
        ('"Lentil soup basics."', "Lentil soup basics"),
        ("**Title:** Lentils and cumin\nMore text", "Lentils and cumin"),
        ("# Lentils", "Lentils"),
        ("“Cumin first”", "Cumin first"),
        ("\n\n  ", None),
        ('""', None),
        ("word " * 30, ("word " * 30)[:59].rstrip() + "…"),
    ],
)
def test_the_title_is_the_answers_first_line_without_decoration(answer: str, title: str | None) -> None:
    assert clean_title(answer) == title


def test_the_first_title_is_the_first_line_of_the_first_message() -> None:
    assert first_message_title("\n  Lentils?  \nmore") == "Lentils?"
    assert first_message_title("x" * 80) == "x" * 59 + "…"


def test_a_titles_choice_that_does_not_exist_is_refused(app: CairnApp) -> None:
    with pytest.raises(SettingsError, match="not a choice for chat titles"):
        app.preferences.save_auto_titles("sometimes")
    app.preferences.save_auto_titles("always")
    assert app.settings.auto_titles == "always"
