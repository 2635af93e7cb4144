"""The built-in engine for real: llama.cpp's server as `make engine` built it, running the
default model, behind Cairn's whole chat path (front door, turn, route, transport, slot
keeper). One engine serves the whole file: the tests follow one chat's life in order."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

from desktop.app.cairn import CairnApp
from desktop.engine.build_spec import installed_build
from desktop.engine.machine import available_memory
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import SettingsStore
from desktop.turn.events import AssistantCommitted, TextDelta, TurnFailed
from host.content import MessageContent
from host.paths import CairnPaths
from host.rows import TranscriptRow
from tests.fake_keyring import MemoryKeyring

T = TypeVar("T")

# Long enough that reading it again shows: the engine reads ~100 tokens a second here.
INSTRUCTIONS = " ".join(f"Rule {n}: answer plainly, in short sentences, about the garden." for n in range(40))


def text(row: TranscriptRow) -> str:
    body = row.body()
    assert isinstance(body, MessageContent)
    return body.text()


@dataclass
class World:
    app: CairnApp
    loop: asyncio.AbstractEventLoop
    paths: CairnPaths
    events: list[object] = field(default_factory=list)

    def run(self, work: Awaitable[T]) -> T:
        return self.loop.run_until_complete(work)

    @property
    def root(self) -> Root:
        return self.app.root

    def replies(self) -> list[AssistantCommitted]:
        return [e.event for e in self.events if isinstance(getattr(e, "event", None), AssistantCommitted)]  # type: ignore[attr-defined]

    def send(self, session: str, text: str) -> AssistantCommitted:
        before = len(self.replies())
        outcome = self.run(self.app.turns.send(session, text))
        assert outcome.ok, outcome
        assert len(self.replies()) == before + 1
        return self.replies()[-1]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    if installed_build() is None:
        pytest.fail("the built-in engine is not built: run `make engine` (or `make test`, which builds it)")
    home = tmp_path_factory.mktemp("engine-home")
    saved = os.environ.get("CAIRN_HOME")
    os.environ["CAIRN_HOME"] = str(home)
    paths = CairnPaths.from_env()
    store = SettingsStore(paths.config_dir / "settings.json")
    store.save(store.load().model_copy(update={"custom_instructions": INSTRUCTIONS, "auto_titles": "off"}))
    loop = asyncio.new_event_loop()
    events: list[object] = []
    root = Root(paths, secrets=SecretStore(MemoryKeyring()))
    app = CairnApp(root, on_event=events.append, titles=False)
    world = World(app, loop, paths, events)
    account = app.local.ensure_account()
    app.accounts.choose(account.id, None)
    try:
        yield world
    finally:
        world.run(root.slots.close())  # the app was never started, so its close leaves the engine to us
        world.run(app.close())
        root.close()
        loop.close()
        if saved is None:
            os.environ.pop("CAIRN_HOME", None)
        else:
            os.environ["CAIRN_HOME"] = saved


@pytest.fixture(scope="module")
def chat(world: World) -> str:
    session = world.app.chats.new()
    world.app.options.set_settings(
        session.id, system_prompt=None, temperature=0.0, max_output=12, reasoning_effort=None
    )
    return session.id


def test_a_first_message_streams_an_answer_from_the_engine(world: World, chat: str) -> None:
    world.events.clear()
    reply = world.send(chat, "Which flowers grow well in the shade?")
    deltas = [e.event for e in world.events if isinstance(getattr(e, "event", None), TextDelta)]  # type: ignore[attr-defined]
    assert len(deltas) > 1  # streamed, not delivered whole
    assert text(reply.row).strip()
    assert reply.usage is not None
    assert reply.usage.prompt_tokens > 400  # the instructions are in it
    engine = world.root.local_engine
    assert engine.running
    assert engine.model is not None
    assert engine.model.sha256 == world.app.local.builtin_account().default_model  # type: ignore[union-attr]
    assert world.root.slots.last == "read afresh"


def test_the_second_turn_reuses_the_first_ones_prompt(world: World, chat: str) -> None:
    first = world.replies()[-1].usage
    reply = world.send(chat, "And in full sun?")
    assert reply.usage is not None
    assert first is not None
    assert world.root.slots.last == "continued"
    # The engine's own counters: all of the first request's prompt reused, only the new part read.
    assert reply.usage.cached_tokens >= first.prompt_tokens - 1
    assert reply.usage.uncached_tokens < 60
    read = world.root.local_engine.status().read  # what the status bar and the inspector show
    assert read is not None
    assert (read.reused, read.read) == (reply.usage.cached_tokens, reply.usage.uncached_tokens)
    assert 0 < read.seconds < 30


def test_the_base_model_is_never_asked_for_a_title(world: World, chat: str) -> None:
    """It would echo the chat back as its title; the first line of the first message stays."""
    store = world.root.settings_store
    store.change(auto_titles="free_routes")  # titles from the model on routes that cost nothing, as by default
    try:
        titled = CairnApp(world.root, titles=True)
        assert titled.settings.auto_titles == "free_routes"
        answers = world.root.local_engine.answers
        assert world.run(titled.turns.auto_title(chat)) is None
        assert world.root.local_engine.answers == answers  # no request was made
    finally:
        store.change(auto_titles="off")
    assert titled.chats.record(chat).title == "Which flowers grow well in the shade?"  # type: ignore[union-attr]


def test_a_saved_state_survives_a_restart_and_is_read_from_disk(world: World, chat: str) -> None:
    slots = world.root.slots
    world.run(slots.unload())  # saves the slot's chat, then stops the engine
    assert not world.root.local_engine.running
    [state] = slots.states.states()
    assert (slots.states.folder / state.file).stat().st_size == state.size
    assert state.messages == 3  # the second request: question, answer, question
    starts = world.root.local_engine.starts
    reply = world.send(chat, "What about roses?")
    assert world.root.local_engine.starts == starts + 1
    assert slots.last == "restored"
    assert reply.usage is not None
    assert reply.usage.uncached_tokens < 60  # only the new turn, not the conversation again
    assert reply.usage.cached_tokens > 400


def test_a_damaged_state_is_refused_and_the_engine_reads_afresh(world: World, chat: str) -> None:
    slots = world.root.slots
    world.run(slots.unload())
    state = max(slots.states.states(), key=lambda s: s.used_at)
    path = slots.states.folder / state.file
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    refused = slots.refused
    reply = world.send(chat, "And tulips?")
    assert slots.refused == refused + 1
    assert slots.last == "read afresh"
    assert not path.exists()  # never offered again
    assert reply.usage is not None
    assert reply.usage.uncached_tokens > 400  # read again, whole


def test_a_state_the_engine_rejects_leaves_it_running(world: World, chat: str) -> None:
    """A file whose recorded hash matches but whose content is not a state: the engine says no,
    Cairn forgets it, and the same engine answers."""
    slots = world.root.slots
    world.run(slots.unload())
    state = max(slots.states.states(), key=lambda s: s.used_at)
    path = slots.states.folder / state.file
    path.write_bytes(b"not a state at all" * 100)
    index = slots.states.folder / "states.json"
    raw = json.loads(index.read_text())
    for entry in raw["states"]:
        if entry["file"] == state.file:
            entry["size"] = path.stat().st_size
            entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    index.write_text(json.dumps(raw))
    refused = slots.refused
    world.send(chat, "And lilies?")
    assert slots.refused == refused + 1
    assert world.root.local_engine.running
    assert world.root.local_engine.restarts == 0


def test_a_state_from_another_context_size_is_not_restored(world: World, chat: str) -> None:
    slots = world.root.slots
    world.run(slots.unload())
    index = slots.states.folder / "states.json"
    raw = json.loads(index.read_text())
    for entry in raw["states"]:
        entry["context"] = 4096
    index.write_text(json.dumps(raw))
    world.send(chat, "And daisies?")
    assert slots.last == "read afresh"


def test_switching_between_two_chats_restores_each_ones_state(world: World, chat: str) -> None:
    slots = world.root.slots
    other = world.app.chats.new().id
    world.app.options.set_settings(other, system_prompt=None, temperature=0.0, max_output=12, reasoning_effort=None)
    saves = slots.saves
    world.send(other, "A different question about bees.")
    assert slots.saves == saves + 1  # the first chat was saved before the second took the engine
    back = world.send(chat, "Back to the garden: what about moss?")
    assert slots.last == "restored"
    assert back.usage is not None
    assert back.usage.uncached_tokens < 60  # the first chat is not read again
    again = world.send(other, "And wasps?")
    assert slots.last == "restored"
    assert again.usage is not None
    assert again.usage.uncached_tokens < 60


def test_an_engine_killed_mid_answer_keeps_the_partial_reply_and_comes_back(world: World) -> None:
    session = world.app.chats.new().id
    world.app.options.set_settings(session, system_prompt=None, temperature=0.0, max_output=200, reasoning_effort=None)
    engine = world.root.local_engine
    world.send(session, "Warm the engine up.")
    world.events.clear()
    restarts = engine.restarts

    async def kill_when_writing() -> None:
        while not any(isinstance(getattr(e, "event", None), TextDelta) for e in world.events):
            await asyncio.sleep(0.01)
        assert engine.process is not None
        assert engine.process.pid is not None
        os.kill(engine.process.pid, signal.SIGKILL)

    async def turn() -> object:
        killer = asyncio.ensure_future(kill_when_writing())
        outcome = await world.app.turns.send(session, "Write a long list of garden plants, one per line.")
        await killer
        return outcome

    outcome = world.run(turn())
    assert not outcome.ok  # type: ignore[attr-defined]
    [failed] = [e.event for e in world.events if isinstance(getattr(e, "event", None), TurnFailed)]  # type: ignore[attr-defined]
    assert failed.partial_row is not None  # what arrived is kept
    assert text(failed.partial_row)

    async def restarted() -> None:
        while engine.restarts == restarts or not engine.running:
            await asyncio.sleep(0.05)

    world.run(asyncio.wait_for(restarted(), 60))
    assert "was stopped by SIGKILL" in engine.status().note
    world.send(session, "Go on.")


def test_a_model_that_does_not_fit_is_refused_with_the_figures(world: World, chat: str) -> None:
    engine = world.root.local_engine
    world.run(world.root.slots.unload())
    engine._available = lambda: 200 * 2**20  # the memory seam: this computer has 200 MiB free
    try:
        outcome = world.run(world.app.turns.send(chat, "Hello?"))
    finally:
        engine._available = available_memory
    assert not outcome.ok
    failure = [e.event for e in world.events if isinstance(getattr(e, "event", None), TurnFailed)][-1]  # type: ignore[attr-defined]
    assert "would need about" in failure.message
    assert "200 MiB free" in failure.message
    assert not engine.running


def test_quitting_cairn_saves_the_chat_for_next_time(world: World, chat: str) -> None:
    world.send(chat, "One more about ferns.")
    slots = world.root.slots
    saves = slots.saves
    world.run(slots.close())
    assert slots.saves == saves + 1
    assert not world.root.local_engine.running
    assert list(world.root.local_engine.children.folder.glob("*.json")) == []
    assert Path(slots.states.folder).is_dir()
