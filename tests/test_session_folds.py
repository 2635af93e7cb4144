"""A turn reads its chat from the journal at most once (a *full fold*), whatever it does: it
asks the model, calls tools, compacts. After that the chat's state only advances by the rows
the turn writes, so a step's cost does not grow with the chat's length."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from desktop.app.cairn import CairnApp, open_cairn
from desktop.loopback import LoopbackProvider, Reply
from desktop.session.state import SessionState
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SettingsStore
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.recorded_requests import is_summary_request

SENTENCE = "Cairns are piles of stones that mark trails, summits and memorials. "


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


def account(paths: CairnPaths, provider: LoopbackProvider, context: int) -> None:
    store = SettingsStore(paths.config_dir / "settings.json")
    store.add_account(Account(name="Loopback", provider="custom", base_url=provider.base_url,
                              default_model="loopback-chat", context_limit=context))  # fmt: skip
    settings = store.load()
    store.save(settings.model_copy(update={"default_mode": "auto"}))  # tools run without asking


def folds_per_turn(app: CairnApp, session: str, texts: list[str]) -> list[int]:
    """How many full folds each turn made (each turn sent as the window sends it)."""

    async def converse() -> list[int]:
        counted = []
        async with app.running():
            for text in texts:
                before = SessionState.folds.loads
                outcome = await app.turns.send(session, text)
                assert outcome.ok, outcome.error
                counted.append(SessionState.folds.loads - before)
        return counted

    return asyncio.run(converse())


def test_a_chat_is_read_once_when_opened_and_then_only_advanced(cairn_paths: CairnPaths, provider: LoopbackProvider):
    account(cairn_paths, provider, context=1_000_000)
    with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring()), titles=False) as app:
        session = app.chats.new().id
        # A tool call in the middle: its step, the result and the step after it fold nothing.
        call = ("c1", "load_skill", '{"name": "none"}')
        provider.script(*[Reply(text=f"answer {n}") for n in range(5)], Reply(tool_calls=(call,)), Reply(text="done"))
        counted = folds_per_turn(app, session, [f"{n}: {SENTENCE * 4}" for n in range(6)])
        assert counted == [1, 0, 0, 0, 0, 0]
        assert len(provider.requests) == 7
    # Another Cairn (another run, the command line) reads it once, as a new chat is read.
    with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring()), titles=False) as app:
        provider.script(Reply(text="again"))
        assert folds_per_turn(app, session, ["and again"]) == [1]


def test_a_turn_that_compacts_still_reads_the_chat_at_most_once(cairn_paths: CairnPaths, provider: LoopbackProvider):
    account(cairn_paths, provider, context=3_000)
    with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring()), titles=False) as app:
        session = app.chats.new().id
        counted = folds_per_turn(app, session, [f"{n}: {SENTENCE * 8}" for n in range(12)])
        checkpoints = [r for r in provider.requests if is_summary_request(r)]
        assert checkpoints, "the chat outgrew its context, so some turn compacted"
        assert counted[0] == 1
        assert counted[1:] == [0] * 11
