"""The engine's one slot, kept in step with the conversations that use it.

The engine reuses the longest cached prefix of each prompt by itself; what it cannot do is
remember a conversation it has since put aside (another chat, another model, a restart).
The keeper does that. Before each chat request it asks whether the request continues what
the slot holds (its first messages hash to what the slot read). If not, the slot's
conversation is saved first (when it has something unsaved) and the saved state holding the
longest prefix of the new one is restored, so the engine reads only what is new. A
conversation is also saved when it has been idle for a while, and when Cairn closes or the
engine is unloaded, never in the way of a send that follows it.

States are named by content, not by chat: a chat reopened a week later, a compaction's
summary request between two turns, a regenerated reply, all find their state by prefix.
The engine checks every reused token against the new prompt, so a restored state can cost
time, never correctness; what it cannot check (a state from another model or build) the key
and the file's own hash rule out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx

from desktop.engine.engine import Endpoint, Engine, ReadFigures
from desktop.engine.states import EngineFacts, SavedStates, prefix_hash

__all__ = ["SlotKeeper", "SlotLimits"]

log = logging.getLogger(__name__)

CLOSE_WAIT = 10.0  # seconds Cairn waits at closing for an answer in flight before saving


@dataclass(frozen=True)
class SlotLimits:
    idle_seconds: float  # save a conversation once it has been idle this long
    budget: int  # bytes of saved states kept on disk


@dataclass(frozen=True)
class _Held:
    """What the slot holds: a conversation prefix read on one start of the engine."""

    model: str
    facts: EngineFacts
    prefix: str
    messages: int
    start: int  # the engine's start count then: a restart empties the slot
    unsaved: bool


class SlotKeeper:
    def __init__(self, engine: Engine, states: SavedStates, limits: Callable[[], SlotLimits]) -> None:
        self.engine, self.states, self._limits = engine, states, limits
        self._lock = asyncio.Lock()  # one conversation in the slot at a time
        self._held: _Held | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self.saves = self.restores = self.refused = 0
        self.last = ""  # what the last request found: "continued", "restored", "read afresh"

    # -- around a request ------------------------------------------------------------------------

    async def begin(self, model: str, body: dict[str, Any]) -> Endpoint:
        """Before a chat request: the engine for ``model``, holding as much of this conversation
        as was ever read. Holds the slot until ``finish``."""
        await self._lock.acquire()
        try:
            self._cancel_idle()
            tools, messages = body.get("tools"), _messages(body)
            held = self._current()
            continuing = (
                held is not None
                and held.model == model
                and held.messages <= len(messages)
                and prefix_hash(tools, messages[: held.messages]) == held.prefix
            )
            if held is not None and held.unsaved and not continuing:
                await self._save(held)
            live = await self.engine.endpoint(model)
            if continuing:
                self.last = "continued"
            else:
                self._held = None
                self.last = "restored" if await self._restore(live, tools, messages) else "read afresh"
            return live
        except BaseException:
            self._lock.release()
            raise

    def finish(self, model: str, body: dict[str, Any], read: ReadFigures | None = None) -> None:
        """After the response ended (whole, cut or failed): the slot holds this request's prompt;
        ``read`` is what the engine said the request cost, when it said."""
        try:
            self.engine.answered(read)
            facts = self.engine.facts()
            if facts is not None and facts.model == model:
                tools, messages = body.get("tools"), _messages(body)
                self._held = _Held(
                    model, facts, prefix_hash(tools, messages), len(messages), self.engine.starts, unsaved=True
                )
                self._schedule_idle()
        finally:
            self._lock.release()

    # -- saving and restoring ----------------------------------------------------------------------

    def _current(self) -> _Held | None:
        held = self._held
        if held is None or held.start != self.engine.starts or self.engine.facts() != held.facts:
            return None  # the engine restarted or changed since: its slot is empty
        return held

    async def _save(self, held: _Held) -> None:
        live = self.engine.current()
        if live is None:
            return
        name = self.states.file_name(held.facts, held.prefix)
        answer = await self._post(live, "save", name)
        if answer is None:
            return
        self.states.budget = self._limits().budget
        if self.states.record(held.facts, held.prefix, held.messages, name) is not None:
            self.saves += 1
            self._held = replace(held, unsaved=False)

    async def _restore(self, live: Endpoint, tools: Any, messages: list[Any]) -> bool:
        facts = self.engine.facts()
        if facts is None:
            return False
        state = self.states.best(facts, tools, messages)
        if state is None:
            return False
        if self.states.checked(state) is None:
            self.refused += 1
            return False
        if await self._post(live, "restore", state.file) is None:
            self.refused += 1
            self.states.forget(state.file)  # the engine would not take it: never offer it again
            return False
        self.states.used(state)
        self.restores += 1
        self._held = _Held(state.model, facts, state.prefix, state.messages, self.engine.starts, unsaved=False)
        return True

    async def _post(self, live: Endpoint, action: str, name: str) -> dict[str, Any] | None:
        try:
            async with httpx.AsyncClient(timeout=60.0) as http:
                answer = await http.post(
                    f"{live.url}/slots/0",
                    params={"action": action},
                    json={"filename": name},
                    headers={"authorization": f"Bearer {live.key}"},
                )
        except httpx.HTTPError as exc:
            log.warning("the engine could not %s a state: %s", action, exc)
            return None
        if answer.status_code != 200:
            log.warning("the engine refused to %s state %s: %s", action, name, answer.text[:300])
            return None
        with contextlib.suppress(ValueError):
            found = answer.json()
            return found if isinstance(found, dict) else {}
        return {}

    # -- idle, unload, close -------------------------------------------------------------------------

    def _schedule_idle(self) -> None:
        self._cancel_idle()
        loop = asyncio.get_running_loop()
        self._idle = loop.call_later(self._limits().idle_seconds, self._idle_save)

    def _cancel_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _idle_save(self) -> None:
        self._idle = None
        if not self._lock.locked():
            self._idle_task = asyncio.get_running_loop().create_task(self.save_now())

    async def save_now(self) -> None:
        """Save what the slot holds, if anything is unsaved (waits for an answer in flight)."""
        async with self._lock:
            held = self._current()
            if held is not None and held.unsaved:
                await self._save(held)

    async def unload(self) -> None:
        """Save the slot's conversation, then stop the engine and free its memory."""
        await self._settle()
        await self.engine.unload()

    async def close(self) -> None:
        """At closing: save the slot's conversation, then stop the engine."""
        self._cancel_idle()
        await self._settle()
        await self.engine.stop()

    async def _settle(self) -> None:
        try:
            await asyncio.wait_for(self.save_now(), CLOSE_WAIT)
        except TimeoutError:
            log.warning(
                "the engine's chat could not be saved within %.0f s (an answer still in flight, or the engine not "
                "answering); the next message reads that chat again",
                CLOSE_WAIT,
            )


def _messages(body: dict[str, Any]) -> list[Any]:
    messages = body.get("messages")
    return messages if isinstance(messages, list) else []
